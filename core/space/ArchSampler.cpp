#include "space/ArchSampler.h"

#include <algorithm>

namespace tinyscope {

SubnetConfig ArchSampler::filled(int wid, int k, int e, int d, int image_size) const
{
    SubnetConfig c;
    c.wid = wid;
    c.ks.assign(static_cast<std::size_t>(space_->maxBlocks()), k);
    c.e.assign(static_cast<std::size_t>(space_->maxBlocks()), e);
    c.d.assign(static_cast<std::size_t>(space_->numStages()), d);
    c.image_size = image_size;
    return c;
}

SubnetConfig ArchSampler::minConfig(int image_size) const
{
    const DesignSpace& s = *space_;
    return filled(0, *std::min_element(s.ks_list.begin(), s.ks_list.end()),
                  *std::min_element(s.expand_list.begin(), s.expand_list.end()), s.minDepth(), image_size);
}

SubnetConfig ArchSampler::labMaxConfig(int image_size) const
{
    const DesignSpace& s = *space_;
    int wid = *std::max_element(s.sampler_width_indices.begin(), s.sampler_width_indices.end());
    SubnetConfig c = fullMaxConfig(image_size);
    c.wid = wid;
    return c;
}

SubnetConfig ArchSampler::fullMaxConfig(int image_size) const
{
    const DesignSpace& s = *space_;
    return filled(s.numWidths() - 1, *std::max_element(s.ks_list.begin(), s.ks_list.end()),
                  *std::max_element(s.expand_list.begin(), s.expand_list.end()), s.maxDepth(), image_size);
}

SubnetConfig ArchSampler::random(PyRandom& rng) const
{
    const DesignSpace& s = *space_;
    SubnetConfig c;
    c.ks.resize(static_cast<std::size_t>(s.maxBlocks()));
    c.e.resize(static_cast<std::size_t>(s.maxBlocks()));
    c.d.resize(static_cast<std::size_t>(s.numStages()));
    for (int& k : c.ks) k = rng.choicesOne(s.ks_list);
    for (int& e : c.e) e = rng.choicesOne(s.expand_list);
    for (int& d : c.d) d = rng.choicesOne(s.depth_list);
    c.image_size = rng.choice(s.resolutions);
    c.wid = static_cast<int>(rng.randbelow(static_cast<std::uint32_t>(s.numWidths())));
    return c;
}

SubnetConfig ArchSampler::mutate(const SubnetConfig& parent, const MutationRates& rates, PyRandom& rng) const
{
    const DesignSpace& s = *space_;
    SubnetConfig c = parent;
    if (rng.random() < rates.resolution) c.image_size = rng.choice(s.resolutions);
    if (rng.random() < rates.width) c.wid = static_cast<int>(rng.randbelow(static_cast<std::uint32_t>(s.numWidths())));
    for (std::size_t i = 0; i < c.ks.size(); ++i) {
        if (rng.random() < rates.arch) {
            c.ks[i] = rng.choice(s.ks_list);
            c.e[i] = rng.choice(s.expand_list);
        }
    }
    for (int& d : c.d)
        if (rng.random() < rates.arch) d = rng.choice(s.depth_list);
    return c;
}

SubnetConfig ArchSampler::crossover(const SubnetConfig& a, const SubnetConfig& b, PyRandom& rng) const
{
    SubnetConfig c = a;
    auto pick = [&](int x, int y) { return rng.randbelow(2) == 0 ? x : y; };
    for (std::size_t i = 0; i < c.ks.size(); ++i) c.ks[i] = pick(a.ks[i], b.ks[i]);
    for (std::size_t i = 0; i < c.e.size(); ++i) c.e[i] = pick(a.e[i], b.e[i]);
    for (std::size_t i = 0; i < c.d.size(); ++i) c.d[i] = pick(a.d[i], b.d[i]);
    c.image_size = pick(a.image_size, b.image_size);
    c.wid = pick(a.wid, b.wid);
    return c;
}

SubnetConfig configByName(const DesignSpace& space, const std::string& which)
{
    ArchSampler sampler(space);
    if (which == "max") return sampler.fullMaxConfig(*std::max_element(space.resolutions.begin(), space.resolutions.end()));
    if (which == "min") return sampler.minConfig(*std::min_element(space.resolutions.begin(), space.resolutions.end()));
    return SubnetConfig::loadFile(which, space);
}

}  // namespace tinyscope
