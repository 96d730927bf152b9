// Template part of Feasibility.h.
#include <algorithm>

namespace tinyscope {

template <class Visit>
bool forEachBlockExtremeSubnet(const DesignSpace& space, bool largest, std::size_t cap, Visit visit)
{
    std::vector<int> elastic;
    for (int s = 0; s < space.numStages(); ++s)
        if (space.stages[static_cast<std::size_t>(s)].elastic_depth) elastic.push_back(s);
    double combos = static_cast<double>(space.numWidths()) * static_cast<double>(space.resolutions.size());
    for (std::size_t i = 0; i < elastic.size(); ++i) combos *= static_cast<double>(space.depth_list.size());
    if (combos > static_cast<double>(cap)) return false;

    auto pick = [largest](const std::vector<int>& v) {
        return largest ? *std::max_element(v.begin(), v.end()) : *std::min_element(v.begin(), v.end());
    };
    SubnetConfig c;
    c.ks.assign(static_cast<std::size_t>(space.maxBlocks()), pick(space.ks_list));
    c.e.assign(static_cast<std::size_t>(space.maxBlocks()), pick(space.expand_list));
    c.d.assign(static_cast<std::size_t>(space.numStages()), space.minDepth());
    CostModel model(space);
    std::vector<std::size_t> digit(elastic.size(), 0);
    for (int w = 0; w < space.numWidths(); ++w) {
        c.wid = w;
        for (int r : space.resolutions) {
            c.image_size = r;
            std::fill(digit.begin(), digit.end(), 0);
            while (true) {
                for (std::size_t i = 0; i < elastic.size(); ++i)
                    c.d[static_cast<std::size_t>(elastic[i])] = space.depth_list[digit[i]];
                visit(static_cast<const SubnetConfig&>(c), model.summary(c));
                std::size_t i = 0;
                while (i < digit.size() && ++digit[i] == space.depth_list.size()) digit[i++] = 0;
                if (i == digit.size()) break;
            }
        }
    }
    return true;
}

}  // namespace tinyscope
