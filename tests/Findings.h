#pragma once
// The rules of the findings that are errors (tinyengine/ExportChecker's findings).
#include "tinyengine/ExportChecker.h"

#include <set>
#include <string>
#include <vector>

namespace tinyscope::test {

inline std::set<std::string> errorRules(const std::vector<Finding>& f)
{
    std::set<std::string> r;
    for (const Finding& x : f)
        if (x.error()) r.insert(x.rule);
    return r;
}

}  // namespace tinyscope::test
