#pragma once
// The memory ledger as CSV: '#' comment lines with the model, scheme and the schedule totals
// (peak with and without reordering, inference peak), then one row per conv (index order, the
// classifier last) and a final `total` row. Byte columns are exact integers; mask_bits are
// bits, mask_bytes their bytes rounded up per row (the total row rounds the summed bits, as
// the ledger's total does). Readers: pandas.read_csv(path, comment='#'), spreadsheets.
#include "graph/KernelCoverage.h"
#include "graph/MemoryLedger.h"

#include <string>
#include <vector>

namespace tinyscope {

std::string memoryLedgerCsv(const MemoryLedger& ledger, const Network& net, const std::string& schemeText,
                            const std::vector<CoverageFinding>& findings = {});

}  // namespace tinyscope
