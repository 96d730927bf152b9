#pragma once
// A Mersenne Twister that reproduces CPython's `random` module bit for bit for the calls the
// lab uses (seed(int), random(), choice(), choices(k=...)), so that a seed gives the same
// subnets here as in the lab's notebooks.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tinyscope {

// Python 3's round() to an int: halves to even (the current rounding mode, as CPython's).
inline int pyRound(double v) { return static_cast<int>(std::nearbyint(v)); }

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

    // random.shuffle(x): for i from the end, swap x[i] with x[_randbelow(i + 1)].
    template <class T>
    void shuffle(T* x, std::size_t n)
    {
        for (std::size_t i = n; i-- > 1;) std::swap(x[i], x[randbelow(static_cast<std::uint32_t>(i + 1))]);
    }
    template <class T>
    void shuffle(std::vector<T>& v) { shuffle(v.data(), v.size()); }

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

// An independent seed per (seed, key) — per epoch, step, image, ...: splitmix64 of a combination,
// 48 bits (exact as a Python int and a double). SupernetTrainer, the fine-tuning job and its
// augmentation derive their streams with it.
inline std::uint64_t seedStream(std::uint64_t seed, std::uint64_t key)
{
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + key + 0x632BE59BD9B4E019ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (z ^ (z >> 31)) & 0xFFFFFFFFFFFFULL;
}

}  // namespace tinyscope
