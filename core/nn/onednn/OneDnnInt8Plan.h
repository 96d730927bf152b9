#pragma once
// Int8Forward on a batch of images at once (docs/ONEDNN.md, "int8 plan"): the same ops, the same
// arithmetic (exact, TinyEngine or TFLite), the same int8 logits, bit for bit, and several times
// faster than Int8Forward's per-image loops.
//  * activations NHWC, one buffer per live tensor (reused once a tensor's last reader ran), every
//    int8 value stored minus a shift: uint8 (x + 128) or float (x − the zero point of its convs);
//  * each conv's sums Σ w · (x − zx) as one oneDNN convolution of the stored batch: u8 × s8 → s32
//    plus the zero point's compensation (VNNI CPUs), or float32 on integers (exact while every
//    partial sum stays below 2^24: checked per conv at build time, else per batch); depthwise
//    convs on our AVX-512 kernel where the CPU has it (DepthwiseConv.h, the same sums), with the
//    block's 1×1 expansion computed and requantised into its tiles on VNNI CPUs (uint8 storage,
//    exact arithmetic; OneDnnInt8Expansion); in uint8 storage on VNNI CPUs the stem (a conv of at
//    most 4 input channels) on our kernel (Int8StemConv.h);
//  * everything else — requantisation, truncation, add, multiply, mean, the input's quantisation —
//    element by element through tinyengine/Int8Kernels.h, the functions Int8Forward's loops call
//    (the exact arithmetic's with AVX-512 intrinsics where the CPU has them, the same formulas);
//    a conv, add or multiply and the truncation that follows it run as one pass.
// One plan per batch size, single-threaded (OneDnnInt8Engine runs plans side by side).
// Torch- and dnnl-free header.
#include "JobControl.h"
#include "data/ImageDataset.h"
#include "nn/onednn/OneDnnPlan.h"   // OneDnnRefused
#include "tinyengine/Int8Forward.h"

#include <cstdint>
#include <map>
#include <string>
#include <memory>
#include <vector>

namespace tinyscope {

class ShardPool;

// How a plan stores activations. Uint8: int8 values + 128, and oneDNN's u8 × s8 → s32 convolutions
// (exact int32 sums; VNNI's vpdpbusd does not saturate — without VNNI oneDNN's u8 kernels use a
// saturating 16-bit step, so Auto picks Uint8 only where oneDnnHasVnni()). Float: float32
// integers and float32 convolutions, exact below 2^24.
enum class OneDnnInt8Storage { Auto, Float, Uint8 };

// Whether a plan runs each MBConv block's 1×1 expansion inside its depthwise conv (uint8 storage,
// exact arithmetic, AVX-512 VNNI; DepthwiseConv::runExpanded) or as its own oneDNN conv and
// requantisation pass. The same values either way; Separate is for tests and benchmarks.
enum class OneDnnInt8Expansion { FusedIntoDepthwise, Separate };

class OneDnnInt8Plan {
public:
    // Throws OneDnnRefused naming the op when the forward has a pattern the plan does not run (a
    // conv, add or multiply output read by anything but one truncation) or oneDNN refuses a conv. `forward` must
    // outlive the plan.
    OneDnnInt8Plan(const Int8Forward& forward, int batch, OneDnnInt8Storage storage = OneDnnInt8Storage::Auto,
                   OneDnnInt8Expansion expansion = OneDnnInt8Expansion::FusedIntoDepthwise);
    ~OneDnnInt8Plan();
    OneDnnInt8Plan(const OneDnnInt8Plan&) = delete;
    OneDnnInt8Plan& operator=(const OneDnnInt8Plan&) = delete;

    int batch() const;
    bool uint8Storage() const;
    std::size_t ownDepthwise() const;   // depthwise convs summed by our kernel (DepthwiseConv.h), not oneDNN
    std::size_t ownStems() const;       // convs of a few input channels on our VNNI kernel (Int8StemConv.h)
    // Depthwise convs that compute their 1×1 expansion too (uint8 storage, exact arithmetic, AVX-512
    // VNNI; DepthwiseConv::runExpanded): the expansion's output is never stored.
    std::size_t fusedExpansions() const;
    // `batch` normalised NCHW float images into batch × classes int8 logits (as int32). Returns
    // false, with nothing written, when a conv's sums in this batch could leave float32's exact
    // range (|x − zx| · Σ|w| ≥ 2^24; with int8 inputs only for Σ|w| > 65,793): the caller then runs
    // Int8Forward on these images.
    bool run(const float* images, std::int32_t* logits);
    // Tests: every materialised tensor's values of image `image` after the last run, CHW order
    // like Int8Forward::runAll (empty for a fused conv output, or when `keepAll` was off).
    std::vector<std::int32_t> tensor(int id, int image) const;
    void keepAll(bool keep);   // no buffer reuse, so tensor() sees every op's output
    // Tests: every conv through the checked path (a shifted copy of its input and the 2^24 check),
    // which runs only where a tensor's conv readers differ in zero point or Σ|w| is very large.
    void checkEveryConv(bool check);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// A forward's plans per (batch size, thread part); batches split over `threads` parts run side by
// side, each part in runs of runBatch() images (1 to 8: as many as keep the largest activation
// within 1 Mi values), as OneDnnSubnet's micro-batches do for fp32. Images a plan declines
// (run() false), and all images when the forward cannot be planned (OneDnnRefused, kept in
// refused()), go to Int8Forward::predict — with its conv accumulator, if it has one. Never throws
// OneDnnRefused.
class OneDnnInt8Engine {
public:
    explicit OneDnnInt8Engine(const Int8Forward& forward, OneDnnInt8Storage storage = OneDnnInt8Storage::Auto,
                              OneDnnInt8Expansion expansion = OneDnnInt8Expansion::FusedIntoDepthwise);   // builds nothing yet
    ~OneDnnInt8Engine();

    // Argmax of each image's int8 logits (first of ties), as Int8Forward::predict.
    void predict(const float* images, int n, int threads, int* classes);
    const std::string& refused() const { return refused_; }   // why the forward runs on its loops, if it does
    // The storage its plans use: given, or (Auto) on a VNNI CPU the faster of the two on the first
    // images it sees (both compute the same values; uint8's kernels win on wide layers, float's on
    // layers of a few channels, whose uint8 vectors are mostly empty). Auto until decided.
    OneDnnInt8Storage storage() const { return storage_; }
    std::size_t imagesOnLoops() const { return onLoops_; }     // images Int8Forward ran so far
    int runBatch() const { return runBatch_; }                 // images per plan run

private:
    const Int8Forward& forward_;
    std::map<std::pair<int, int>, std::unique_ptr<OneDnnInt8Plan>> plans_;
    std::unique_ptr<ShardPool> pool_;
    std::string refused_;
    OneDnnInt8Storage storage_;
    OneDnnInt8Expansion expansion_;
    int runBatch_;
    std::size_t onLoops_ = 0;
    OneDnnInt8Plan& plan(int batch, int part);
    void prepareFor(int n, int parts);
    void chooseStorage(const float* images, int n);
};

// evaluateInt8 (tinyengine/Int8Forward.h) on the batched plans: the same images, the same top-1.
// `note`, if given, says why images ran on Int8Forward instead (empty when none did).
Int8Top1 evaluateInt8OnOneDnn(const Int8Forward& f, const ImageDataset& data, const std::vector<std::size_t>& items, int resolution,
                              const Normalization& norm = {}, int threads = 2, const JobControl& job = {}, std::string* note = nullptr);

}  // namespace tinyscope
