#include "space/ArchEncoder.h"

#include "Error.h"

#include <algorithm>

namespace tinyscope {

ArchEncoder::ArchEncoder(const DesignSpace& space) : space_(&space)
{
    w_off_ = static_cast<int>(space.resolutions.size());
    k_off_ = w_off_ + space.numWidths();
    e_off_ = k_off_ + space.maxBlocks() * static_cast<int>(space.ks_list.size());
    dims_ = e_off_ + space.maxBlocks() * static_cast<int>(space.expand_list.size());
}

std::vector<int> ArchEncoder::oneHotIndices(const SubnetConfig& c) const
{
    const DesignSpace& s = *space_;
    std::vector<int> idx;
    idx.push_back(s.resolutionIndex(c.image_size));
    idx.push_back(w_off_ + c.wid);
    std::vector<int> es;
    for (int b = 0; b < s.maxBlocks(); ++b) {
        if (!c.blockActive(s, b)) continue;
        idx.push_back(kernelOffset(b) + s.kernelIndex(c.ks[static_cast<std::size_t>(b)]));
        es.push_back(expandOffset(b) + s.expandIndex(c.e[static_cast<std::size_t>(b)]));
    }
    idx.insert(idx.end(), es.begin(), es.end());
    return idx;
}

void ArchEncoder::encodeInto(const SubnetConfig& c, float* out) const
{
    const DesignSpace& s = *space_;
    std::fill(out, out + dims_, 0.0f);
    out[s.resolutionIndex(c.image_size)] = 1.0f;
    out[w_off_ + c.wid] = 1.0f;
    for (int st = 0; st < s.numStages(); ++st) {
        const StageSpec& spec = s.stages[static_cast<std::size_t>(st)];
        const int depth = c.activeDepth(s, st);
        for (int j = 0; j < depth; ++j) {
            const int b = spec.first_block + j;
            out[kernelOffset(b) + s.kernelIndex(c.ks[static_cast<std::size_t>(b)])] = 1.0f;
            out[expandOffset(b) + s.expandIndex(c.e[static_cast<std::size_t>(b)])] = 1.0f;
        }
    }
}

std::vector<float> ArchEncoder::encode(const SubnetConfig& c) const
{
    std::vector<float> f(static_cast<std::size_t>(dims_));
    encodeInto(c, f.data());
    return f;
}

std::string ArchEncoder::bits(const SubnetConfig& c) const
{
    std::vector<float> f = encode(c);
    std::string s(f.size(), '0');
    for (std::size_t i = 0; i < f.size(); ++i)
        if (f[i] != 0.0f) s[i] = '1';
    return s;
}

SubnetConfig ArchEncoder::decode(const std::vector<float>& f) const
{
    const DesignSpace& s = *space_;
    if (static_cast<int>(f.size()) != dims_)
        throw InputError("encoding has " + std::to_string(f.size()) + " values; space '" + s.name + "' uses " +
                         std::to_string(dims_));
    for (std::size_t i = 0; i < f.size(); ++i)
        if (f[i] != 0.0f && f[i] != 1.0f)
            throw InputError("encoding value " + std::to_string(i) + " is " + std::to_string(f[i]) + " (expected 0 or 1)");
    auto group = [&](int off, int n, const std::string& what, bool allowEmpty) {
        int hot = -1;
        for (int i = 0; i < n; ++i) {
            if (f[static_cast<std::size_t>(off + i)] == 1.0f) {
                if (hot >= 0)
                    throw InputError("encoding: " + what + " has more than one bit set (bits " + std::to_string(off + hot) +
                                     " and " + std::to_string(off + i) + ")");
                hot = i;
            }
        }
        if (hot < 0 && !allowEmpty) throw InputError("encoding: " + what + " has no bit set");
        return hot;
    };
    SubnetConfig c;
    c.image_size = s.resolutions[static_cast<std::size_t>(group(0, w_off_, "resolution", false))];
    c.wid = group(w_off_, s.numWidths(), "width", false);
    c.ks.assign(static_cast<std::size_t>(s.maxBlocks()), 0);
    c.e.assign(static_cast<std::size_t>(s.maxBlocks()), 0);
    c.d.assign(static_cast<std::size_t>(s.numStages()), 0);
    const int nk = static_cast<int>(s.ks_list.size()), ne = static_cast<int>(s.expand_list.size());
    for (int st = 0; st < s.numStages(); ++st) {
        const StageSpec& spec = s.stages[static_cast<std::size_t>(st)];
        int active = 0;
        bool gap = false;
        for (int j = 0; j < spec.max_blocks; ++j) {
            const int b = spec.first_block + j;
            const std::string name = "block " + std::to_string(b);
            int k = group(kernelOffset(b), nk, name + " kernel", true);
            int e = group(expandOffset(b), ne, name + " expand", true);
            if ((k < 0) != (e < 0))
                throw InputError("encoding: " + name + " has a kernel bit but no expand bit or the reverse");
            if (k < 0) { gap = true; continue; }
            if (gap) throw InputError("encoding: " + name + " is active after an inactive block of stage " + std::to_string(st));
            c.ks[static_cast<std::size_t>(b)] = s.ks_list[static_cast<std::size_t>(k)];
            c.e[static_cast<std::size_t>(b)] = s.expand_list[static_cast<std::size_t>(e)];
            ++active;
        }
        if (spec.elastic_depth) {
            int d = active - spec.base_depth;
            if (s.depthIndex(d) < 0)
                throw InputError("encoding: stage " + std::to_string(st) + " has " + std::to_string(active) +
                                 " active blocks, which no depth choice gives");
            c.d[static_cast<std::size_t>(st)] = d;
        } else {
            if (active != spec.base_depth)
                throw InputError("encoding: stage " + std::to_string(st) + " must have " + std::to_string(spec.base_depth) +
                                 " active blocks, has " + std::to_string(active));
            c.d[static_cast<std::size_t>(st)] = spec.base_depth;
        }
    }
    return c;
}

SubnetConfig ArchEncoder::decodeIndices(const std::vector<int>& indices) const
{
    std::vector<float> f(static_cast<std::size_t>(dims_), 0.0f);
    for (int i : indices) {
        if (i < 0 || i >= dims_)
            throw InputError("encoding index " + std::to_string(i) + " out of range 0.." + std::to_string(dims_ - 1));
        f[static_cast<std::size_t>(i)] = 1.0f;
    }
    return decode(f);
}

SubnetConfig ArchEncoder::decodeBits(const std::string& bits) const
{
    std::vector<float> f;
    for (char ch : bits) {
        if (ch == '0' || ch == '1') f.push_back(ch == '1' ? 1.0f : 0.0f);
        else if (ch != ' ' && ch != '\n')
            throw InputError(std::string("encoding bits may contain only 0 and 1, found '") + ch + "'");
    }
    return decode(f);
}

}  // namespace tinyscope
