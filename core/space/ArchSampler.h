#pragma once
// Sampling subnets with the lab's semantics (MCUNetArchEncoder.random_sample_arch, mutate_*,
// EvolutionSearcher.crossover_sample). With a PyRandom seeded like Python's random.seed(s),
// the draws equal the lab's draw for draw.
#include "space/DesignSpace.h"
#include "space/PyRandom.h"
#include "space/SubnetConfig.h"

namespace tinyscope {

struct MutationRates {
    double resolution = 0.5;   // probability of redrawing image_size
    double width = 0.5;        // probability of redrawing wid
    double arch = 0.1;         // per block (ks and e together) and per stage (d)
};

class ArchSampler {
public:
    explicit ArchSampler(const DesignSpace& space) : space_(&space) {}

    // Smallest subnet: narrowest width, smallest kernel/expand, least depth.
    SubnetConfig minConfig(int image_size) const;
    // The lab's `max`: largest kernel/expand/depth at the widest width the supernet's own sampler
    // draws (wid = 1 for MCUNet-VWW, i.e. 0.75×).
    SubnetConfig labMaxConfig(int image_size) const;
    // The true largest subnet: widest width in the space.
    SubnetConfig fullMaxConfig(int image_size) const;

    // random_sample_arch: ks (choices), e (choices), d (choices), image_size (choice), wid (choice).
    SubnetConfig random(PyRandom& rng) const;
    // mutate_resolution, mutate_width, mutate_arch in the lab's order.
    SubnetConfig mutate(const SubnetConfig& parent, const MutationRates& rates, PyRandom& rng) const;
    // Every key and element from a random parent (key order ks, e, d, image_size, wid).
    SubnetConfig crossover(const SubnetConfig& a, const SubnetConfig& b, PyRandom& rng) const;

    const DesignSpace& space() const { return *space_; }

private:
    SubnetConfig filled(int wid, int k, int e, int d, int image_size) const;
    const DesignSpace* space_;
};

// A subnet config by name: "max" (fullMaxConfig at the largest resolution), "min" (minConfig at
// the smallest), else a config file read and validated against `space`.
SubnetConfig configByName(const DesignSpace& space, const std::string& which);

}  // namespace tinyscope
