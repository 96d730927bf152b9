#pragma once
// The FP32 FMA peak this machine reaches, measured rather than assumed: every thread runs a loop of
// independent fused multiply-adds on the widest vectors the CPU has (AVX-512: 16 lanes; else
// AVX2 + FMA: 8), enough chains in flight to hide the FMA latency on two pipes. A VM's nominal
// clock (/proc/cpuinfo) is not the clock the core runs at under boost, so an assumed
// "GHz x pipes x lanes" can be exceeded by a real convolution; the measured figure cannot be.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
// GCC 12 warns, wrongly, about the _mm512_undefined_*() inside _mm512_reduce_add_ps (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace tinyscope::bench {

namespace detail {

// Independent accumulators, > latency (4) × FMA pipes (2): 16 of AVX-512's 32 registers; 12 of
// AVX2's 16 (16 chains and the two constants spilled to memory and measured a third of the peak).
constexpr int kChains = 16, kChains256 = 12;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) inline float fmaLoop512(long iters)
{
    __m512 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (long it = 0; it < iters; ++it)
#pragma GCC unroll 16
        for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __m512 s = acc[0];
    for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) inline float fmaLoop256(long iters)
{
    __m256 acc[kChains256];
    for (int i = 0; i < kChains256; ++i) acc[i] = _mm256_set1_ps(0.001f * static_cast<float>(i));
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (long it = 0; it < iters; ++it)
#pragma GCC unroll 16
        for (int i = 0; i < kChains256; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    float out[8];
    __m256 s = acc[0];
    for (int i = 1; i < kChains256; ++i) s = _mm256_add_ps(s, acc[i]);
    _mm256_storeu_ps(out, s);
    float t = 0;
    for (float v : out) t += v;
    return t;
}
#endif

}   // namespace detail

struct FmaPeak {
    int lanes = 0;               // 16 (AVX-512), 8 (AVX2 + FMA), 0 (not measured)
    double gmacsPerThread = 0;   // best of the runs, one thread alone
    double gmacsAll = 0;         // `threads` threads at once (best run)
    int threads = 0;
};

// Best of `runs` runs of ~`seconds` each, one thread alone and then `threads` at once. `avx512`
// false: the AVX2 loop even on an AVX-512 CPU (the engine bounded to AVX2 by ONEDNN_MAX_CPU_ISA runs
// 8-lane FMAs, so that is its peak).
inline FmaPeak measureFmaPeak(int threads, int runs = 5, double seconds = 0.1, bool avx512 = true)
{
    FmaPeak p;
    p.threads = threads;
#if defined(__x86_64__)
    __builtin_cpu_init();
    float (*loop)(long) = nullptr;
    if (avx512 && __builtin_cpu_supports("avx512f")) loop = detail::fmaLoop512, p.lanes = 16;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) loop = detail::fmaLoop256, p.lanes = 8;
    if (!loop) return p;
    using Clock = std::chrono::steady_clock;
    // Iterations for ~`seconds` from a short calibration run.
    long iters = 1 << 16;
    auto t0 = Clock::now();
    volatile float sink = loop(iters);
    const double calib = std::chrono::duration<double>(Clock::now() - t0).count();
    iters = std::max<long>(1 << 16, static_cast<long>(iters * seconds / std::max(calib, 1e-6)));
    const double macs = static_cast<double>(iters) * (p.lanes == 16 ? detail::kChains : detail::kChains256) * p.lanes;
    auto rate = [&](int n) {
        std::vector<double> secs(n);
        std::vector<std::thread> pool;
        std::atomic<int> ready{0};
        for (int t = 0; t < n; ++t)
            pool.emplace_back([&, t] {
                ready.fetch_add(1);
                while (ready.load() < n) {}
                const auto s = Clock::now();
                sink = loop(iters);
                secs[t] = std::chrono::duration<double>(Clock::now() - s).count();
            });
        for (auto& th : pool) th.join();
        double total = 0;
        for (double s : secs) total += macs / s / 1e9;
        return total;
    };
    for (int r = 0; r < runs; ++r) {
        p.gmacsPerThread = std::max(p.gmacsPerThread, rate(1));
        p.gmacsAll = std::max(p.gmacsAll, rate(threads));
    }
    (void)sink;
#endif
    return p;
}

}   // namespace tinyscope::bench
