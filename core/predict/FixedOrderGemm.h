#pragma once
// A matrix product whose every output element is summed in one fixed order, so the accuracy
// predictor trains to the same bits on every x86-64 CPU (and thread count):
//
//   C[i][j] = (((init_j + A(i,0)·B[0][j]) + A(i,1)·B[1][j]) + …) + A(i,K−1)·B[K−1][j]
//
// one float multiply and one float add per term, k ascending, init_j = bias[j] or 0. Only the
// number of independent outputs computed side by side changes with the instruction set (16, 8 or 4
// lanes), never the order of a sum, and no multiply-add is fused (the file is compiled with
// -ffp-contract=off). BLAS libraries pick kernels per CPU (OpenBLAS: block sizes, FMA, AVX-512 or
// not), which round differently: the lab-recipe predictor's held-out MAE moved from 0.170 to 0.188
// between two OpenBLAS kernel sets (docs/SEARCH.md, "Reproducibility across CPUs").
#include <cstdint>
#include <vector>

namespace tinyscope {

// The kernels compiled into this build: 4 lanes (SSE2, every x86-64 CPU), 8 (AVX2), 16 (AVX-512F).
enum class GemmIsa { Baseline, Avx2, Avx512 };
// Those the running CPU supports, narrowest first.
std::vector<GemmIsa> supportedGemmIsas();
// The one fixedOrderGemm(g) uses: the widest supported, or fewer lanes if the environment variable
// TINYSCOPE_GEMM_ISA says so (sse2 | avx2 | avx512f: to check on one machine that another CPU's
// kernel gives the same bits, as ONEDNN_MAX_CPU_ISA does for oneDNN).
GemmIsa bestGemmIsa();
const char* gemmIsaName(GemmIsa isa);

// A(i, k) = a[i * aRow + k * aCol] (so a transposed operand needs no copy), B row-major with
// leading dimension ldb, C row-major with leading dimension ldc. `bias` (length N) or null for 0.
struct GemmOperands {
    std::int64_t M = 0, N = 0, K = 0;
    const float* a = nullptr;
    std::int64_t aRow = 0, aCol = 0;
    const float* b = nullptr;
    std::int64_t ldb = 0;
    float* c = nullptr;
    std::int64_t ldc = 0;
    const float* bias = nullptr;
};

// C = init + A·B in the fixed order above, with the best kernel for this CPU.
void fixedOrderGemm(const GemmOperands& g);
// The same with a chosen kernel (tests compare every supported one with the scalar definition).
void fixedOrderGemm(const GemmOperands& g, GemmIsa isa);

}  // namespace tinyscope
