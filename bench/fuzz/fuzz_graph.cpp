// libFuzzer target: arbitrary bytes as a TinyEngine training graph JSON, read the way
// `tinyscope inspect` and the app's File > Open training graph read it: the graph, the network
// recovered from its forward ops, the sparse-update scheme, the memory ledger, the §9 checker,
// the summary and the DOT drawing.
#include "FuzzSupport.h"

#include "graph/MemoryLedger.h"
#include "tinyengine/ExportChecker.h"
#include "tinyengine/GraphImport.h"
#include "viz/TrainingGraphDot.h"

using namespace tinyscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const fuzz::MemoryFile file(std::string(reinterpret_cast<const char*>(data), size));
    fuzz::expectOnlyInputErrors([&] {
        const ImportedGraph im = importTinyEngineGraph(file.path(), "", "");
        TrainingMemoryModel(im.network).ledger(im.scheme.resolve(im.network, "recovered scheme"), im.graph.mode);
        checkForTinyEngine(im.graph, im.network, nullptr);
        im.summaryJson().dump();
        trainingGraphDot(im.graph);
    });
    return 0;
}
