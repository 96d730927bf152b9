#pragma once
// numpy's legacy global generator for the one call the lab's evolution uses to pick parents:
// np.random.seed(s) then np.random.randint(n) (MT19937 seeded by init_genrand, masked rejection
// on 32-bit draws). With PyRandom for the architecture draws, a seed reproduces the lab's run.
#include "space/PyRandom.h"

#include <cstdint>

namespace tinyscope {

class NumpyRandom {
public:
    explicit NumpyRandom(std::uint32_t seed) { mt_.initGenrand(seed); }

    // Uniform integer in [0, n); n >= 1. n == 1 consumes no draw, as numpy.
    std::uint32_t randint(std::uint32_t n)
    {
        const std::uint32_t max = n - 1;
        if (max == 0) return 0;
        std::uint32_t mask = max;
        for (int s = 1; s < 32; s <<= 1) mask |= mask >> s;
        std::uint32_t v;
        while ((v = mt_.genrand32() & mask) > max) {}
        return v;
    }

private:
    PyRandom mt_{0};
};

}  // namespace tinyscope
