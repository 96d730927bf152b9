#pragma once
// The lab's search limits (Lab 3): 60 M MACs and 250 KB of peak SRAM.
#include "search/Constraints.h"

namespace tinyscope::test {

inline Constraints labLimits()
{
    Constraints c;
    c.set("millionMACs", 60);
    c.set("KBPeakMemory", 250);
    return c;
}

}  // namespace tinyscope::test
