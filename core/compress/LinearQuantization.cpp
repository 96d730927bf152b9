#include "compress/LinearQuantization.h"

#include "Error.h"
#include "io/Text.h"

#include <algorithm>
#include <cmath>

namespace tinyscope {

std::vector<int> parseBitWidths(const std::string& text)
{
    std::vector<int> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = text.find(',', start);
        std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (!item.empty()) {
            if (item.size() > 1 || item[0] < '1' || item[0] > '8')
                throw InputError("'" + escapedForMessage(item, 20) + "' is not a bit width: give whole numbers 1–8, e.g. 8,4,2");
            out.push_back(item[0] - '0');
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (out.empty()) throw InputError("no bit width given: e.g. 8,4,2");
    return out;
}

QuantizedRange quantizedRange(int bits)
{
    if (bits < 1 || bits > 8) throw InputError("bit width " + std::to_string(bits) + " is outside 1–8");
    return {-(1 << (bits - 1)), (1 << (bits - 1)) - 1};
}

ScaleZeroPoint scaleAndZeroPoint(const float* r, std::size_t n, int bits)
{
    const QuantizedRange q = quantizedRange(bits);
    if (n == 0) throw InputError("an empty tensor has no range");
    const auto [lo, hi] = std::minmax_element(r, r + n);
    const double rMin = *lo, rMax = *hi;
    ScaleZeroPoint s;
    s.scale = (rMax - rMin) / (q.max - q.min);
    const double zero = q.min - rMin / s.scale;
    if (zero < q.min) s.zero_point = q.min;
    else if (zero > q.max) s.zero_point = q.max;
    else s.zero_point = static_cast<int>(std::nearbyint(zero));
    return s;
}

std::vector<std::int8_t> linearQuantize(const float* r, std::size_t n, int bits, double scale, int zeroPoint)
{
    const QuantizedRange range = quantizedRange(bits);
    const float s = static_cast<float>(scale);
    std::vector<std::int8_t> q(n);
    for (std::size_t i = 0; i < n; ++i) {
        // The lab adds the zero point in int8 (after .to(int8)), modulo 256: equal to this int32 sum
        // wherever the sum lies in int8, which is wherever its result means anything.
        const float rounded = std::min(std::max(std::nearbyint(r[i] / s), -65536.0f), 65536.0f);
        const int shifted = static_cast<int>(rounded) + zeroPoint;
        q[i] = static_cast<std::int8_t>(std::min(std::max(shifted, range.min), range.max));
    }
    return q;
}

std::vector<float> linearDequantize(const std::vector<std::int8_t>& q, double scale, int zeroPoint)
{
    std::vector<float> r(q.size());
    const float s = static_cast<float>(scale);
    for (std::size_t i = 0; i < q.size(); ++i) r[i] = s * static_cast<float>(static_cast<int>(q[i]) - zeroPoint);
    return r;
}

PerChannelQuantized quantizeWeightPerChannel(const float* w, int outputs, std::size_t perOutput, int bits)
{
    const QuantizedRange range = quantizedRange(bits);
    PerChannelQuantized p;
    p.q.resize(static_cast<std::size_t>(outputs) * perOutput);
    p.scales.resize(static_cast<std::size_t>(outputs));
    for (int o = 0; o < outputs; ++o) {
        const float* c = w + static_cast<std::size_t>(o) * perOutput;
        double most = 0;
        for (std::size_t k = 0; k < perOutput; ++k) most = std::max(most, static_cast<double>(std::fabs(c[k])));
        const double scale = std::max(most, 5e-7) / range.max;
        p.scales[static_cast<std::size_t>(o)] = scale;
        const std::vector<std::int8_t> q = linearQuantize(c, perOutput, bits, scale, 0);
        std::copy(q.begin(), q.end(), p.q.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(o) * perOutput));
    }
    return p;
}

std::vector<float> dequantizePerChannel(const PerChannelQuantized& p, std::size_t perOutput)
{
    std::vector<float> r(p.q.size());
    for (std::size_t i = 0; i < p.q.size(); ++i) r[i] = static_cast<float>(p.scales[i / perOutput]) * static_cast<float>(p.q[i]);
    return r;
}

}  // namespace tinyscope
