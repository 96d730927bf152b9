#pragma once
// Int8Forward's conv accumulations on oneDNN (docs/ONEDNN.md, "int8"): Σ w · (x − zx) of every conv
// as a float32 oneDNN convolution of the shifted input and the integer weights. Every partial sum is
// an integer; while each stays below 2^24 in magnitude float32 holds it exactly, whatever the
// summation order, so the result equals Int8Forward's int32 loops bit for bit. That is checked per
// call (the input's largest |x − zx| times the conv's largest per-channel Σ|w|); a call that could
// exceed it, or a conv oneDNN refuses, is left to the loops. The requantisation (exact, TinyEngine
// or TFLite arithmetic) stays Int8Forward's. Thread-safe; dnnl-free header.
#include "tinyengine/Int8Forward.h"

#include <memory>

namespace tinyscope {

class OneDnnInt8Accumulator : public Int8ConvAccumulator {
public:
    // One primitive per conv of `forward` (batch 1, NCHW), built now; `forward` must outlive it.
    explicit OneDnnInt8Accumulator(const Int8Forward& forward);
    ~OneDnnInt8Accumulator() override;

    bool accumulate(std::size_t conv, const std::int32_t* x, std::int32_t* acc) const override;

    std::size_t convs() const;          // convs of the forward
    std::size_t built() const;          // of them, with a oneDNN primitive
    std::size_t callsOnOneDnn() const;  // accumulate calls answered by oneDNN so far
    std::size_t callsLeft() const;      // … and left to the loops (the 2^24 bound)

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace tinyscope
