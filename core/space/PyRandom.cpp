#include "space/PyRandom.h"

namespace tinyscope {

// MT19937 as in CPython's Modules/_randommodule.c (Matsumoto & Nishimura's reference).
void PyRandom::initGenrand(std::uint32_t s)
{
    mt_[0] = s;
    for (mti_ = 1; mti_ < 624; ++mti_)
        mt_[mti_] = 1812433253U * (mt_[mti_ - 1] ^ (mt_[mti_ - 1] >> 30)) + static_cast<std::uint32_t>(mti_);
}

void PyRandom::initByArray(const std::uint32_t* key, std::size_t len)
{
    initGenrand(19650218U);
    std::size_t i = 1, j = 0;
    std::size_t k = 624 > len ? 624 : len;
    for (; k; --k) {
        mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + key[j] + static_cast<std::uint32_t>(j);
        ++i;
        ++j;
        if (i >= 624) { mt_[0] = mt_[623]; i = 1; }
        if (j >= len) j = 0;
    }
    for (k = 623; k; --k) {
        mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) - static_cast<std::uint32_t>(i);
        ++i;
        if (i >= 624) { mt_[0] = mt_[623]; i = 1; }
    }
    mt_[0] = 0x80000000U;
}

void PyRandom::seed_(std::uint64_t seed)
{
    // CPython: the key is abs(seed) split into 32-bit words, least significant first; 0 -> [0].
    std::uint32_t key[2] = {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
    initByArray(key, key[1] ? 2 : 1);
}

std::uint32_t PyRandom::genrand32()
{
    static const std::uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    std::uint32_t y;
    if (mti_ >= 624) {
        int kk;
        for (kk = 0; kk < 624 - 397; ++kk) {
            y = (mt_[kk] & 0x80000000U) | (mt_[kk + 1] & 0x7fffffffU);
            mt_[kk] = mt_[kk + 397] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        for (; kk < 623; ++kk) {
            y = (mt_[kk] & 0x80000000U) | (mt_[kk + 1] & 0x7fffffffU);
            mt_[kk] = mt_[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        y = (mt_[623] & 0x80000000U) | (mt_[0] & 0x7fffffffU);
        mt_[623] = mt_[396] ^ (y >> 1) ^ mag01[y & 0x1U];
        mti_ = 0;
    }
    y = mt_[mti_++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

double PyRandom::random()
{
    std::uint32_t a = genrand32() >> 5, b = genrand32() >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

std::uint32_t PyRandom::getrandbits(int k)
{
    return genrand32() >> (32 - k);
}

std::uint32_t PyRandom::randbelow(std::uint32_t n)
{
    if (n <= 1) return 0;
    int k = 0;
    for (std::uint32_t m = n; m; m >>= 1) ++k;   // n.bit_length()
    std::uint32_t r = getrandbits(k);
    while (r >= n) r = getrandbits(k);
    return r;
}

}  // namespace tinyscope
