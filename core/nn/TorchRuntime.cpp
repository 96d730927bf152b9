#include "nn/TorchRuntime.h"

#include "nn/OneDnnInfo.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <cstdio>
#include <cstdlib>
#include <malloc.h>
#include <thread>

// Resolved at run time from the libraries LibTorch loads (null if a build lacks them).
extern "C" char* openblas_get_corename(void) __attribute__((weak));

namespace tinyscope {

void configureAllocator()
{
    static bool done = false;
    if (done) return;
    done = true;
    mallopt(M_MMAP_THRESHOLD, 256 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024);
    mallopt(M_TOP_PAD, 64 * 1024 * 1024);
}

int setTorchThreads(int threads)
{
    int hw = static_cast<int>(std::thread::hardware_concurrency());
    if (hw <= 0) hw = 1;
    if (threads < 1) threads = 1;
    if (threads > hw) threads = hw;
    at::set_num_threads(threads);
    return threads;
}

int torchThreads() { return at::get_num_threads(); }

int defaultBatchThreads()
{
    int hw = static_cast<int>(std::thread::hardware_concurrency());
    return hw >= 2 ? 2 : 1;
}

}  // namespace tinyscope

namespace tinyscope {

bool setMkldnnEnabled(bool enabled)
{
    const bool before = at::globalContext().userEnabledMkldnn();
    at::globalContext().setUserEnabledMkldnn(enabled);
    return before;
}


CpuInfo hostCpuAndKernels()
{
    CpuInfo cpu = hostCpu();
    if (openblas_get_corename) cpu.kernels["openblas"] = openblas_get_corename();
    cpu.kernels["onednn"] = oneDnnIsa();
    if (const char* aten = std::getenv("ATEN_CPU_CAPABILITY")) cpu.kernels["aten"] = aten;
    return cpu;
}

}  // namespace tinyscope
