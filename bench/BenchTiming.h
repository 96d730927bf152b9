#pragma once
// Timing for the benchmark programs: best of several repetitions of n calls, medians over
// interleaved rounds, and the machine line every benchmark prints first (CPU model, instruction
// set, load): absolute times hold for that machine only, ratios from the same run travel better.
#include "io/CpuInfo.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace tinyscope::bench {

// Best-of-`reps` mean time per call of f(0..n-1), in microseconds.
inline double timeUs(int n, const std::function<void(int)>& f, int reps = 5)
{
    using Clock = std::chrono::steady_clock;
    double best = 1e300;
    for (int rep = 0; rep < reps; ++rep) {
        const auto t0 = Clock::now();
        for (int i = 0; i < n; ++i) f(i);
        best = std::min(best, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n);
    }
    return best;
}

inline double median(std::vector<double> v)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// "load average 2.91 2.40 1.77 on 2 logical CPUs"
inline std::string loadAverage()
{
    double load[3] = {-1, -1, -1};
    if (FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        std::fclose(f);
    }
    char buf[128];
    std::snprintf(buf, sizeof buf, "load average %.2f %.2f %.2f on %d logical CPUs", load[0], load[1], load[2],
                  hostCpu().logical_cpus);
    return buf;
}

// Printed first by every benchmark: where the figures below were measured, and any environment
// variable that forces kernel choices (for ours and the Python baselines alike).
inline void printMachine()
{
    std::printf("machine: %s\n         %s\n", describe(hostCpu()).c_str(), loadAverage().c_str());
    std::string forced;
    for (const char* v : {"OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "TINYSCOPE_GEMM_ISA",
                          "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS"})
        if (const char* value = std::getenv(v)) forced += std::string(" ") + v + "=" + value;
    if (!forced.empty()) std::printf("         environment:%s\n", forced.c_str());
}

}  // namespace tinyscope::bench
