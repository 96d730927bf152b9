#pragma once
// One subnet of a design space, with the lab's field names so files move between
// Tinyscope and the Python tools: {"wid", "ks", "e", "d", "image_size"}.
#include "io/JsonFile.h"

#include <string>
#include <vector>

namespace tinyscope {

class DesignSpace;

struct SubnetConfig {
    int wid = 0;              // index into the space's width settings (not the multiplier)
    std::vector<int> ks;      // one kernel size per supernet block (inactive entries ignored; 0 allowed)
    std::vector<int> e;       // one expand ratio per supernet block
    std::vector<int> d;       // extra depth per stage
    int image_size = 0;

    bool operator==(const SubnetConfig& o) const
    {
        return wid == o.wid && image_size == o.image_size && ks == o.ks && e == o.e && d == o.d;
    }
    bool operator!=(const SubnetConfig& o) const { return !(*this == o); }

    // Reads and validates against `space`; errors name the source, the field and the bad value.
    static SubnetConfig fromJson(const Json& j, const DesignSpace& space, const std::string& source);
    static SubnetConfig loadFile(const std::string& path, const DesignSpace& space);
    Json toJson() const;

    // Throws InputError naming `source` and the field if the config is not a member of `space`.
    void validate(const DesignSpace& space, const std::string& source) const;

    // Number of active blocks in stage s (always base_depth for non-elastic stages).
    int activeDepth(const DesignSpace& space, int stage) const;
    bool blockActive(const DesignSpace& space, int block) const;

    // Canonical form: inactive ks/e entries set to 0 and d of non-elastic stages set to their
    // base depth (the encoder's decoded form); equal networks get equal canonical configs.
    SubnetConfig canonical(const DesignSpace& space) const;
};

}  // namespace tinyscope
