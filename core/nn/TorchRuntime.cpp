#include "nn/TorchRuntime.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <malloc.h>
#include <thread>

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

}  // namespace tinyscope
