// libFuzzer target (issue 45): the names that reach TinyEngine's generated C. The input's first
// byte chooses where the rest goes — the name grammar itself, a scale.json key, or a parameter name
// of MIT's hand-made graph (example/tiny-graph.json's v1_bias, every use renamed; read from the
// seed corpus path in TINYSCOPE_FUZZ_GRAPH, else a minimal two-op graph) — and the target checks:
//   * an accepted name is a C identifier (or label) of at most 128 bytes, whatever the reader;
//   * the readers refuse every other name with an InputError and nothing else;
//   * escapedForMessage's output holds no control byte and is bounded, so a refusal prints safely.
#include "FuzzSupport.h"

#include "io/JsonFile.h"
#include "io/Text.h"
#include "tinyengine/GraphImport.h"
#include "tinyengine/QuantizedParams.h"
#include "tinyengine/TinyEngineNames.h"

#include <cstdlib>

using namespace tinyscope;

namespace {

bool grammarHolds(const std::string& s, bool identifier)
{
    if (s.empty() || s.size() > kMaxTinyEngineName) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        const bool digit = c >= '0' && c <= '9';
        const bool extra = !identifier && (c == '.' || c == '@' || c == '-');
        if (!(letter || (i > 0 && (digit || extra)))) return false;
    }
    return true;
}

void check(bool ok)
{
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0) return 0;
    const int mode = data[0] % 3;
    const std::string name(reinterpret_cast<const char*>(data + 1), size - 1);

    const std::string shown = escapedForMessage(name);
    check(shown.size() <= 80 + 6 + 40);
    for (unsigned char c : shown) check(c >= 0x20 && c != 0x7f);   // no C0 control or DEL reaches a terminal

    check(isTinyEngineIdentifier(name) == grammarHolds(name, true));
    check(isTinyEngineLabel(name) == grammarHolds(name, false));

    if (mode == 1) {
        const Json j = {{name, 0.5}};
        const fuzz::MemoryFile file(j.dump(-1, ' ', false, Json::error_handler_t::replace));
        fuzz::expectOnlyInputErrors([&] {
            for (const auto& [key, value] : readScaleJson(file.path())) check(grammarHolds(key, true));
        });
    } else if (mode == 2) {
        static const Json base = [] {
            const char* p = std::getenv("TINYSCOPE_FUZZ_GRAPH");
            try {
                if (p) return readJsonFile(p);
            } catch (const InputError&) {
            }
            return Json::array();
        }();
        if (base.empty()) return 0;
        Json g = base;
        for (Json& op : g)
            for (Json& t : op["inputs"])
                if (t["name"] == "v1_bias") t["name"] = name;
        const fuzz::MemoryFile file(g.dump(-1, ' ', false, Json::error_handler_t::replace));
        fuzz::expectOnlyInputErrors([&] {
            const ImportedGraph im = importTinyEngineGraph(file.path());
            for (const Tensor& t : im.graph.tensors)
                if (t.kind == TensorKind::Parameter) check(grammarHolds(t.name, true));
        });
    }
    return 0;
}
