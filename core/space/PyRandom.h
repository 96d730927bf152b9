#pragma once
// A Mersenne Twister that reproduces CPython's `random` module bit for bit for the calls the
// lab uses (seed(int), random(), choice(), choices(k=...)), so that a seed gives the same
// subnets here as in the lab's notebooks.
#include <cstdint>
#include <vector>

namespace tinyscope {

class PyRandom {
public:
    explicit PyRandom(std::uint64_t seed = 0) { seed_(seed); }
    void seed_(std::uint64_t seed);

    std::uint32_t genrand32();
    double random();                         // random.random(): 53-bit float in [0, 1)
    std::uint32_t getrandbits(int k);        // k in 1..32
    std::uint32_t randbelow(std::uint32_t n);   // random._randbelow (rejection on getrandbits)
    // MT19937's init_genrand(s): how numpy's legacy RandomState.seed(int) seeds the same generator.
    void initGenrand(std::uint32_t s);

    // random.choice(seq): seq[_randbelow(len(seq))]
    template <class T>
    const T& choice(const std::vector<T>& v) { return v[randbelow(static_cast<std::uint32_t>(v.size()))]; }
    // One draw of random.choices(seq, k=...): seq[floor(random() * len(seq))]
    template <class T>
    const T& choicesOne(const std::vector<T>& v)
    {
        return v[static_cast<std::size_t>(random() * static_cast<double>(v.size()))];
    }

private:
    void initByArray(const std::uint32_t* key, std::size_t len);
    std::uint32_t mt_[624];
    int mti_ = 625;
};

}  // namespace tinyscope
