#pragma once
// Timing for the benchmark programs: best of several repetitions of n calls.
#include <algorithm>
#include <chrono>
#include <functional>

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

}  // namespace tinyscope::bench
