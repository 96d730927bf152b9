#include "predict/FixedOrderGemm.h"

#include <cstdlib>
#include <cstring>

// Compiled with -ffp-contract=off (core/CMakeLists.txt): a*b + c stays a rounded multiply followed
// by a rounded add in every kernel below, whatever the target.

#pragma GCC diagnostic ignored "-Wpsabi"

namespace tinyscope {

namespace {

using V4 = float __attribute__((vector_size(16)));
using V8 = float __attribute__((vector_size(32)));
using V16 = float __attribute__((vector_size(64)));

template <class V>
constexpr int kLanes = static_cast<int>(sizeof(V) / sizeof(float));

// Unaligned vector load and store, always inlined into the target-specific functions below (so
// GCC's note about the ABI of wide vectors passed by value, silenced at the top, does not apply).
template <class V>
__attribute__((always_inline)) inline V load(const float* p)
{
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class V>
__attribute__((always_inline)) inline void store(float* p, const V& v)
{
    std::memcpy(p, &v, sizeof v);
}

// MR rows × NV vectors of C, starting at (i0, j0), over the whole of K.
template <class V, int MR, int NV>
__attribute__((always_inline)) inline void tile(const GemmOperands& g, std::int64_t i0, std::int64_t j0)
{
    constexpr int L = kLanes<V>;
    V acc[MR][NV];
    for (int v = 0; v < NV; ++v) {
        const V init = g.bias ? load<V>(g.bias + j0 + v * L) : V{};
        for (int r = 0; r < MR; ++r) acc[r][v] = init;
    }
    const float* a = g.a + i0 * g.aRow;
    const float* b = g.b + j0;
    for (std::int64_t k = 0; k < g.K; ++k) {
        V bv[NV];
        for (int v = 0; v < NV; ++v) bv[v] = load<V>(b + k * g.ldb + v * L);
        for (int r = 0; r < MR; ++r) {
            const float s = a[r * g.aRow + k * g.aCol];
            for (int v = 0; v < NV; ++v) acc[r][v] = acc[r][v] + bv[v] * s;
        }
    }
    for (int r = 0; r < MR; ++r)
        for (int v = 0; v < NV; ++v) store(g.c + (i0 + r) * g.ldc + j0 + v * L, acc[r][v]);
}

// Columns [j0, j0 + NV·L) for every row: MR rows at a time, then one at a time.
template <class V, int MR, int NV>
__attribute__((always_inline)) inline void columnBlock(const GemmOperands& g, std::int64_t j0)
{
    std::int64_t i = 0;
    for (; i + MR <= g.M; i += MR) tile<V, MR, NV>(g, i, j0);
    for (; i < g.M; ++i) tile<V, 1, NV>(g, i, j0);
}

template <class V, int MR, int NV>
__attribute__((always_inline)) inline void gemm(const GemmOperands& g)
{
    constexpr int L = kLanes<V>;
    std::int64_t j = 0;
    for (; j + NV * L <= g.N; j += NV * L) columnBlock<V, MR, NV>(g, j);
    for (; j + L <= g.N; j += L) columnBlock<V, MR, 1>(g, j);
    for (; j < g.N; ++j)   // fewer columns than lanes left (the predictor's last layer has one)
        for (std::int64_t i = 0; i < g.M; i += 8) {
            // Eight rows side by side: eight independent sums instead of one chain of dependent adds.
            const int rows = static_cast<int>(g.M - i < 8 ? g.M - i : 8);
            float c[8];
            for (int r = 0; r < 8; ++r) c[r] = g.bias ? g.bias[j] : 0.0f;
            for (std::int64_t k = 0; k < g.K; ++k) {
                const float bk = g.b[k * g.ldb + j];
                for (int r = 0; r < rows; ++r) c[r] = c[r] + g.a[(i + r) * g.aRow + k * g.aCol] * bk;
            }
            for (int r = 0; r < rows; ++r) g.c[(i + r) * g.ldc + j] = c[r];
        }
}

// Tiles sized to the register file: 4 rows × 6 zmm (24 accumulators of 32), 4 × 3 ymm / xmm
// (12 of 16).
__attribute__((target("avx512f"))) void gemmAvx512(const GemmOperands& g) { gemm<V16, 4, 6>(g); }
__attribute__((target("avx2"))) void gemmAvx2(const GemmOperands& g) { gemm<V8, 4, 3>(g); }
void gemmBaseline(const GemmOperands& g) { gemm<V4, 4, 3>(g); }

GemmIsa widestSupported()
{
    static const GemmIsa widest = [] {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f")) return GemmIsa::Avx512;
        if (__builtin_cpu_supports("avx2")) return GemmIsa::Avx2;
        return GemmIsa::Baseline;
    }();
    return widest;
}

}  // namespace

std::vector<GemmIsa> supportedGemmIsas()
{
    std::vector<GemmIsa> out{GemmIsa::Baseline};
    if (widestSupported() != GemmIsa::Baseline) out.push_back(GemmIsa::Avx2);
    if (widestSupported() == GemmIsa::Avx512) out.push_back(GemmIsa::Avx512);
    return out;
}

GemmIsa bestGemmIsa()
{
    static const GemmIsa best = [] {
        GemmIsa isa = widestSupported();
        if (const char* cap = std::getenv("TINYSCOPE_GEMM_ISA")) {
            for (GemmIsa narrower : supportedGemmIsas())
                if (std::strcmp(cap, gemmIsaName(narrower)) == 0 && narrower < isa) isa = narrower;
        }
        return isa;
    }();
    return best;
}

const char* gemmIsaName(GemmIsa isa)
{
    switch (isa) {
    case GemmIsa::Avx512: return "avx512f";
    case GemmIsa::Avx2: return "avx2";
    case GemmIsa::Baseline: break;
    }
    return "sse2";
}

void fixedOrderGemm(const GemmOperands& g) { fixedOrderGemm(g, bestGemmIsa()); }

void fixedOrderGemm(const GemmOperands& g, GemmIsa isa)
{
    if (g.M <= 0 || g.N <= 0) return;
    switch (isa) {
    case GemmIsa::Avx512: gemmAvx512(g); return;
    case GemmIsa::Avx2: gemmAvx2(g); return;
    case GemmIsa::Baseline: gemmBaseline(g); return;
    }
}

}  // namespace tinyscope
