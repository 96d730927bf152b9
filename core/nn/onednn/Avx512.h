#pragma once
// What our own AVX-512 code in nn/onednn shares (DepthwiseConv.cpp, StemConv.cpp, PointwiseConv.cpp,
// OneDnnInt8Plan.cpp; .cpp files only): the intrinsics, the target attribute its functions carry (the
// rest of the build stays at the x86-64 baseline), the run-time checks that choose it (and the int8
// plan's AVX2 passes), bfloat16 rounding, and loads of 16 channels as floats.
#include "nn/onednn/Bf16.h"

#include <immintrin.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

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

// How far ONEDNN_MAX_CPU_ISA (or DNNL_MAX_CPU_ISA) lets oneDNN go also bounds our kernels, so that
// one variable makes the whole engine run as on an older CPU — the plans, the int8 plan and the
// bf16 checks as an AVX2 laptop runs them (the tests run so too: docs/ONEDNN.md, "Older CPUs").
// Read once, as oneDNN reads it; unset, "ALL" or a name it does not know: no bound.
enum class IsaBound { BelowAvx2, BelowAvx512, Avx512Core, Avx512Vnni, Avx512Bf16, None };
inline IsaBound isaBoundOf(const char* value)
{
    if (!value || !*value) return IsaBound::None;
    std::string v(value);
    for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (v == "SSE41" || v == "AVX") return IsaBound::BelowAvx2;
    if (v == "AVX2" || v == "AVX2_VNNI" || v == "AVX512_MIC" || v == "AVX512_MIC_4OPS") return IsaBound::BelowAvx512;
    if (v == "AVX512_CORE") return IsaBound::Avx512Core;
    if (v == "AVX512_CORE_VNNI") return IsaBound::Avx512Vnni;
    if (v == "AVX512_CORE_BF16") return IsaBound::Avx512Bf16;
    return IsaBound::None;
}
inline IsaBound isaBound()
{
    static const IsaBound bound = [] {
        const char* v = std::getenv("ONEDNN_MAX_CPU_ISA");
        return isaBoundOf(v && *v ? v : std::getenv("DNNL_MAX_CPU_ISA"));
    }();
    return bound;
}

// This CPU has AVX2 (the int8 plan's element passes where AVX-512 is not), and the bound allows it.
inline bool hasAvx2()
{
    __builtin_cpu_init();
    return isaBound() >= IsaBound::BelowAvx512 && __builtin_cpu_supports("avx2");
}

// This CPU has AVX-512 F, BW and VL (every AVX-512 CPU since Skylake-SP), and the bound allows it.
inline bool hasAvx512()
{
    __builtin_cpu_init();
    return isaBound() >= IsaBound::Avx512Core && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
}

// This CPU also has AVX-512 BF16 (Cooper Lake, Sapphire Rapids, Zen 4 and later).
inline bool hasAvx512Bf16()
{
    __builtin_cpu_init();
    return hasAvx512() && isaBound() >= IsaBound::Avx512Bf16 && __builtin_cpu_supports("avx512bf16");
}

// This CPU also has AVX-512 VNNI (Cascade Lake, Ice Lake, Zen 4 and later).
inline bool hasAvx512Vnni()
{
    __builtin_cpu_init();
    return hasAvx512() && isaBound() >= IsaBound::Avx512Vnni && __builtin_cpu_supports("avx512vnni");
}

// The first min(left, 16) lanes of a 16-lane vector: the mask of a run's last, partial vector.
inline __mmask16 tailMask(std::size_t left)
{
    return static_cast<__mmask16>(left >= 16 ? 0xFFFFu : (1u << left) - 1u);
}

// 16 floats' bfloat16 bits in the upper halves, rounded to nearest even (what vcvtneps2bf16 and
// oneDNN's bf16 reorders and stores give for finite values; AVX-512F integer arithmetic, so no BF16
// target is needed).
TS_AVX512 inline __m512i roundedBf16Bits(__m512 v)
{
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    return _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF)));
}

// roundedBf16Bits' result as the 16 bfloat16 values, and as the floats they hold (one rounding
// serving both: a store and a sum of the stored values).
TS_AVX512 inline __m256i bf16OfBits(__m512i bits) { return _mm512_cvtepi32_epi16(_mm512_srli_epi32(bits, 16)); }
TS_AVX512 inline __m512 floatsOfBits(__m512i bits)
{
    return _mm512_castsi512_ps(_mm512_and_si512(bits, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
}

// 16 floats as bfloat16 values (rounded to nearest even).
TS_AVX512 inline __m256i toBf16(__m512 v) { return bf16OfBits(roundedBf16Bits(v)); }

// 16 floats rounded to the nearest bfloat16, still as floats (the value a bf16 store then load gives).
TS_AVX512 inline __m512 roundedToBf16(__m512 v) { return floatsOfBits(roundedBf16Bits(v)); }

// 16 values from p as floats (zero beyond the mask): float, bfloat16 or uint8 widened.
TS_AVX512 inline __m512 loadChannels(const float* p, __mmask16 mask) { return _mm512_maskz_loadu_ps(mask, p); }
TS_AVX512 inline __m512 loadChannels(const Bf16* p, __mmask16 mask)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, p)), 16));
}
TS_AVX512 inline __m512 loadChannels(const std::uint8_t* p, __mmask16 mask)
{
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mask, p)));
}

}  // namespace tinyscope::onednn
