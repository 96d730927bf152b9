#pragma once
// What our own AVX-512 code in nn/onednn shares (DepthwiseConv.cpp, OneDnnInt8Plan.cpp; .cpp files
// only): the intrinsics, the target attribute its functions carry (the rest of the build stays at the
// x86-64 baseline), and the run-time check that chooses it.
#include <immintrin.h>

#include <cstddef>

// GCC 12's _mm512_min_ps, _mm512_max_ps, the conversions and the masked loads start from
// _mm512_undefined_*() and warn, wrongly, that it may be used uninitialized (GCC bug 105593) where
// they are inlined; this silences the two warnings for the including file.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#define TS_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
// Functions that also use AVX-512 BF16 (vdpbf16ps); called only where hasAvx512Bf16().
#define TS_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
// Functions that also use AVX-512 VNNI (vpdpbusd); called only where hasAvx512Vnni().
#define TS_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace tinyscope::onednn {

// This CPU has AVX-512 F, BW and VL (every AVX-512 CPU since Skylake-SP).
inline bool hasAvx512()
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
}

// This CPU also has AVX-512 BF16 (Cooper Lake, Sapphire Rapids, Zen 4 and later).
inline bool hasAvx512Bf16()
{
    __builtin_cpu_init();
    return hasAvx512() && __builtin_cpu_supports("avx512bf16");
}

// This CPU also has AVX-512 VNNI (Cascade Lake, Ice Lake, Zen 4 and later).
inline bool hasAvx512Vnni()
{
    __builtin_cpu_init();
    return hasAvx512() && __builtin_cpu_supports("avx512vnni");
}

// The first min(left, 16) lanes of a 16-lane vector: the mask of a run's last, partial vector.
inline __mmask16 tailMask(std::size_t left)
{
    return static_cast<__mmask16>(left >= 16 ? 0xFFFFu : (1u << left) - 1u);
}

}  // namespace tinyscope::onednn
