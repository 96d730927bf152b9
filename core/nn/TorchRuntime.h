#pragma once
// Process-wide LibTorch settings, chosen deliberately (see docs/BENCHMARKS.md):
//  * glibc's allocator returns large buffers to the OS after every batch and faults them back in;
//    raising the mmap/trim thresholds and the top pad keeps them (1.3-1.9x at batch 32).
//  * LibTorch defaults to 1 thread here; batched work wants 2, batch-1 inference 1.
// This header is torch-free so callers need not include torch.
#include "io/CpuInfo.h"

namespace tinyscope {

// Call once at start-up, before the first large allocation. Idempotent.
void configureAllocator();
// Sets LibTorch's intra-op thread count (clamped to 1..hardware threads); returns the value set.
int setTorchThreads(int threads);
int torchThreads();
// The thread count for batched work (2 on the 2-core machines this targets).
int defaultBatchThreads();

// oneDNN (mkldnn) JIT-compiles a kernel for every new conv shape: fast for fixed networks, but
// once-for-all training meets new shapes every step and spends most of its time compiling.
// Returns the previous setting.
bool setMkldnnEnabled(bool enabled);

// hostCpu() plus the kernel sets LibTorch's libraries chose on it — OpenBLAS's core type (its
// OPENBLAS_CORETYPE), oneDNN's instruction set (ONEDNN_MAX_CPU_ISA caps it), and an
// ATEN_CPU_CAPABILITY override if set — for the cards of artefacts LibTorch computed: other
// kernels round differently, so these say what a re-run on another machine can differ by.
CpuInfo hostCpuAndKernels();

}  // namespace tinyscope
