#pragma once
// What the oneDNN translation units share (included by nn/onednn/*.cpp only; OpenMP's header, no
// dnnl): aligned buffers, the one-thread scope every primitive is built and run in, and how a
// batch is split into thread parts.
#include "space/SubnetLayout.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>
#include <cstdlib>
#include <cstring>
#include <new>

namespace tinyscope::onednn {

// Images of part p when n images are split into `parts` (the first n % parts get one more).
inline int partSize(int n, int parts, int p) { return n / parts + (p < n % parts ? 1 : 0); }

// float32 holds every integer below 2^24 exactly: a float32 convolution of integers is exact while
// every partial sum stays below it, whatever the summation order.
constexpr double kFloatExact = 16777216.0;

// The largest Σ|w| over the output channels of O × `per` integer weights (the bound's other factor).
inline double largestChannelAbsSum(const std::vector<std::int32_t>& w, int O, int per)
{
    double most = 0;
    for (int o = 0; o < O; ++o) {
        double sum = 0;
        for (int i = 0; i < per; ++i) sum += std::abs(static_cast<double>(w[static_cast<std::size_t>(o) * per + i]));
        most = std::max(most, sum);
    }
    return most;
}

// A convolution of n NHWC maps that is one matrix product over all n · h · w pixels: 1 × 1, no
// padding, stride 1 (or any stride on a 1-pixel map). The plans describe its memory as one image of
// n · h · w × 1 pixels (the same bytes), so oneDNN's 1 × 1 kernels block over the batch's pixels
// together; as n images they block within each image, and a 1 × 1 map at batch 100 ran as 100
// matrix-vector products at ~20 % of the peak (docs/ONEDNN.md, "Small maps: the batch as pixels").
inline bool batchAsPixels(int kh, int kw, int pt, int pl, int pb, int pr, int sh, int sw, int h, int w)
{
    return kh == 1 && kw == 1 && pt == 0 && pl == 0 && pb == 0 && pr == 0 && (sh == 1 || h == 1) && (sw == 1 || w == 1);
}

// The taps of a k × k conv (padding k / 2, any stride) that meet data on an h × h map, for the
// convs the plans hand to oneDNN: kernelWindow (SubnetLayout.h) for stride 1, and for stride 2 the
// window of a 7 × 7 conv on a 3 × 3 map (taps 1–5, padding 2), which oneDNN otherwise runs through
// its im2col GEMM. Cropped only where the window is symmetric (then the output size is unchanged);
// the cropped taps meet only padding, so the sums are the same terms.
inline KernelWindow oneDnnWindow(int kernel, int stride, int h)
{
    const KernelWindow whole{kernel, 0, kernel / 2};
    if (stride == 1) return kernelWindow(kernel, 1, h);
    const int pad = kernel / 2, ho = (h - 1) / stride + 1;
    const int first = std::max(0, pad - (ho - 1) * stride), last = std::min(kernel - 1, pad + h - 1);
    if (first != kernel - 1 - last || first == 0) return whole;
    const KernelWindow win{last - first + 1, first, pad - first};
    return (h + 2 * win.pad - win.size) / stride + 1 == ho ? win : whole;
}

// The weights of `planes` k × k kernel planes (PyTorch's layout) cropped to `win`'s taps.
template <typename T>
std::vector<T> croppedKernel(const T* weight, std::size_t planes, int kernel, const KernelWindow& win)
{
    const int k = win.size;
    std::vector<T> out(planes * static_cast<std::size_t>(k) * k);
    for (std::size_t p = 0; p < planes; ++p)
        for (int y = 0; y < k; ++y)
            for (int x = 0; x < k; ++x)
                out[(p * k + y) * k + x] = weight[(p * kernel + y + win.start) * kernel + x + win.start];
    return out;
}

// 64-byte aligned floats (a cache line; oneDNN's kernels load whole vectors), zeroed.
struct Buffer {
    float* data = nullptr;
    std::size_t count = 0;
    explicit Buffer(std::size_t n = 0) : count(n)
    {
        if (n) {
            const std::size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
            data = static_cast<float*>(std::aligned_alloc(64, bytes));
            if (!data) throw std::bad_alloc();
            std::memset(data, 0, bytes);
        }
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() { std::free(data); }
};

// A kernel's weights and bias packed into its vector layout (our AVX-512 kernels: DepthwiseConv,
// StemConv), 64-byte aligned, zero-padded.
struct PackedWeights {
    Buffer weights, bias;
    PackedWeights(std::size_t w, std::size_t b) : weights(w), bias(b) {}
};

// oneDNN (OpenMP runtime) fixes a primitive's thread count when it is created, from the creating
// thread's omp_get_max_threads(), and forces a team of that size at every execution whatever the
// caller's setting then. Our plans are single-threaded (threads run plans side by side), so they
// are built inside this scope; the caller's setting is restored on leaving it.
class OneThreadScope {
public:
    OneThreadScope() : before_(omp_get_max_threads()) { omp_set_num_threads(1); }
    ~OneThreadScope() { omp_set_num_threads(before_); }
    OneThreadScope(const OneThreadScope&) = delete;
    OneThreadScope& operator=(const OneThreadScope&) = delete;

private:
    int before_;
};

}  // namespace tinyscope::onednn
