// tinyscope cost | encode | decode | space
#include "cli/Cli.h"
#include "cli/CliArgs.h"
#include "cli/ConfigFiles.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "space/ArchEncoder.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "viz/ArchDiagram.h"
#include "viz/GraphvizRenderer.h"
#include "cli/TextColumns.h"

#include <cstdio>
#include <iostream>
#include <sstream>

namespace tinyscope::cli {

namespace {

std::string shapeText(const std::vector<int>& s)
{
    std::string t;
    for (std::size_t i = 1; i < s.size(); ++i) t += (i > 1 ? "x" : "") + std::to_string(s[i]);
    return t;
}

void printHumanSingle(const DesignSpace& space, const SubnetConfig& c, const CostReport& r, bool allModules)
{
    const CostSummary& s = r.summary;
    std::cout << "space      " << space.name << "\n"
              << "subnet     wid=" << c.wid << " (" << space.width_mult_list[static_cast<std::size_t>(c.wid)] << "x)"
              << " image_size=" << c.image_size << " d=" << formatList(c.d) << "\n"
              << "           ks=" << formatList(c.ks) << "\n"
              << "           e=" << formatList(c.e) << "\n\n";
    std::cout << "MACs       " << formatFixed(s.millionMacs(), 6) << " M  (" << groupThousands(s.macs)
              << "; without BN " << groupThousands(s.macs_without_bn) << ")\n"
              << "peak SRAM  " << formatFixed(s.peakKB(), 2) << " KB  (" << groupThousands(s.peak_activation_bytes)
              << " B, at " << r.peak_layer << ")\n"
              << "params     " << groupThousands(s.params) << "\n"
              << "flash      " << formatFixed(s.flashKB(), 2) << " KB  (" << groupThousands(s.flash_bytes)
              << " B: int8 weights + int32 biases)\n\n";
    std::cout << padded("layer", 52) << padded("type", 12) << padded("input", 13) << padded("output", 13) << padded("MACs", 13, true)
              << padded("params", 11, true) << "\n";
    for (const LayerCost& l : r.layers) {
        if (!allModules && l.type != "Conv2d" && l.type != "Linear") continue;
        std::cout << padded(l.name, 52) << padded(l.type, 12) << padded(shapeText(l.input_shape), 13)
                  << padded(shapeText(l.output_shape), 13) << padded(groupThousands(l.macs), 13, true)
                  << padded(groupThousands(l.params), 11, true) << "\n";
    }
    std::cout << "\n" << padded("peak term", 20) << padded("bytes", 11, true) << "\n";
    for (const PeakTerm& t : r.peak_terms)
        std::cout << padded(t.name, 20) << padded(groupThousands(t.elements), 11, true)
                  << (t.name == r.peak_layer ? "  <- peak" : "") << "\n";
}

int cmdCost(const Args& argv)
{
    CliArgs a(argv, {"space", "resolution", "random", "seed", "diagram"}, {"min", "max", "max-full", "json", "all-modules", "help"});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope cost [CONFIG.json ...] [--min] [--max] [--max-full] [--random N --seed S]\n"
                     "                      [--space NAME|FILE] [--resolution R] [--json] [--all-modules] [--diagram FILE]\n"
                     "  CONFIG.json   a subnet config {wid, ks, e, d, image_size} or an array of them\n"
                     "  --min         smallest subnet (at the smallest resolution unless --resolution)\n"
                     "  --max         the lab's max: largest ks/e/d at the widest width its sampler draws (wid=1)\n"
                     "  --max-full    largest ks/e/d at the full width (wid=2 for MCUNet-VWW)\n"
                     "  --random N    N subnets drawn like the lab's random_sample_arch; --seed S as random.seed(S)\n"
                     "  --resolution  override image_size of every subnet\n"
                     "  --diagram     write the subnet's block diagram (one subnet) to FILE.svg, .png or .dot\n";
        return 0;
    }
    if (a.has("diagram")) requireWritableFile(a.value("diagram"), "--diagram");
    DesignSpace space = loadSpace(a.value("space", defaultSpaceName()));
    ArchSampler sampler(space);
    std::vector<SubnetConfig> configs;
    for (const std::string& p : a.positionals()) {
        auto cs = readConfigs(p, space);
        configs.insert(configs.end(), cs.begin(), cs.end());
    }
    const int minRes = space.resolutions.front() < space.resolutions.back() ? space.resolutions.front() : space.resolutions.back();
    const int maxRes = space.resolutions.front() < space.resolutions.back() ? space.resolutions.back() : space.resolutions.front();
    if (a.flag("min")) configs.push_back(sampler.minConfig(minRes));
    if (a.flag("max")) configs.push_back(sampler.labMaxConfig(maxRes));
    if (a.flag("max-full")) configs.push_back(sampler.fullMaxConfig(maxRes));
    appendRandomConfigs(a, space, configs);
    if (configs.empty()) throw InputError("nothing to cost: give a config file, --min, --max, --max-full or --random N");
    if (a.has("resolution")) {
        int r = a.intValue("resolution", 0, 1, 1 << 20);
        if (space.resolutionIndex(r) < 0)
            throw InputError("--resolution " + std::to_string(r) + " is not one of " + formatList(space.resolutions));
        for (SubnetConfig& c : configs) c.image_size = r;
    }

    CostModel model(space);
    if (a.has("diagram")) {
        const std::string path = a.value("diagram");
        drawingFormatOf(path);
        if (configs.size() != 1)
            throw InputError("--diagram draws one subnet; " + std::to_string(configs.size()) + " are given");
        writeDotFile(archDiagramDot(space, configs[0], costedDiagramOptions(model.report(configs[0]))), path);
        if (!a.flag("json")) std::cout << "wrote " << path << "\n\n";
    }
    if (a.flag("json")) {
        Json out = Json::array();
        for (const SubnetConfig& c : configs) {
            Json j = toJson(model.report(c));
            j["config"] = c.toJson();
            out.push_back(std::move(j));
        }
        std::cout << (configs.size() == 1 ? out[0] : out).dump(2) << "\n";
        return 0;
    }
    if (configs.size() == 1) {
        printHumanSingle(space, configs[0], model.report(configs[0]), a.flag("all-modules"));
        return 0;
    }
    std::cout << padded("#", 5) << padded("wid", 5) << padded("res", 6) << padded("MACs (M)", 12, true) << padded("peak KB", 10, true)
              << padded("params", 12, true) << padded("flash KB", 11, true) << "\n";
    for (std::size_t i = 0; i < configs.size(); ++i) {
        CostSummary s = model.summary(configs[i]);
        std::cout << padded(std::to_string(i), 5) << padded(std::to_string(configs[i].wid), 5)
                  << padded(std::to_string(configs[i].image_size), 6) << padded(formatFixed(s.millionMacs(), 3), 12, true)
                  << padded(formatFixed(s.peakKB(), 1), 10, true) << padded(groupThousands(s.params), 12, true)
                  << padded(formatFixed(s.flashKB(), 1), 11, true) << "\n";
    }
    return 0;
}

int cmdEncode(const Args& argv)
{
    CliArgs a(argv, {"space"}, {"json", "help"});
    if (a.flag("help") || a.positionals().size() != 1) {
        std::cout << "usage: tinyscope encode CONFIG.json [--space NAME|FILE] [--json]\n";
        return a.flag("help") ? 0 : 2;
    }
    DesignSpace space = loadSpace(a.value("space", defaultSpaceName()));
    SubnetConfig c = SubnetConfig::loadFile(a.positionals()[0], space);
    ArchEncoder enc(space);
    std::vector<int> idx = enc.oneHotIndices(c);
    std::string bits = enc.bits(c);
    if (a.flag("json")) {
        std::cout << Json{{"one_hot_indices", idx}, {"bits", bits}, {"dims", enc.dims()}}.dump() << "\n";
    } else {
        std::cout << bits << "\n" << formatList(idx) << "\n";
    }
    return 0;
}

int cmdDecode(const Args& argv)
{
    CliArgs a(argv, {"space", "indices", "bits"}, {"help"});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope decode (BITS | FILE.json | --bits BITS | --indices i,j,...) [--space NAME|FILE]\n"
                     "  FILE.json holds {\"one_hot_indices\": [...]} or {\"bits\": \"...\"} (the output of encode --json)\n";
        return 0;
    }
    DesignSpace space = loadSpace(a.value("space", defaultSpaceName()));
    ArchEncoder enc(space);
    SubnetConfig c;
    if (a.has("indices")) {
        std::vector<int> idx;
        std::stringstream ss(a.value("indices"));
        std::string tok;
        while (std::getline(ss, tok, ',')) {
            try {
                std::size_t used = 0;
                idx.push_back(std::stoi(tok, &used));
                if (used != tok.size()) throw std::invalid_argument(tok);
            } catch (const std::exception&) {
                throw InputError("--indices: '" + tok + "' is not an integer");
            }
        }
        c = enc.decodeIndices(idx);
    } else if (a.has("bits")) {
        c = enc.decodeBits(a.value("bits"));
    } else if (a.positionals().size() == 1) {
        const std::string& arg = a.positionals()[0];
        if (arg.find_first_not_of("01") == std::string::npos) {
            c = enc.decodeBits(arg);
        } else {
            Json j = readJsonFile(arg);
            JsonPath p(arg, j);
            if (p.has("one_hot_indices")) c = enc.decodeIndices(p["one_hot_indices"].asIntList());
            else if (p.has("bits")) c = enc.decodeBits(p["bits"].asString());
            else p.fail("expected \"one_hot_indices\" or \"bits\"");
        }
    } else {
        throw InputError("give the encoding: BITS, a JSON file, --bits or --indices");
    }
    std::cout << c.toJson().dump() << "\n";
    return 0;
}

int cmdSpace(const Args& argv)
{
    CliArgs a(argv, {}, {"json", "help"});
    const auto& pos = a.positionals();
    if (a.flag("help") || pos.empty() || (pos[0] != "show" && pos[0] != "list")) {
        std::cout << "usage: tinyscope space list\n       tinyscope space show [NAME|FILE] [--json]\n";
        return a.flag("help") ? 0 : 2;
    }
    if (pos[0] == "list") {
        for (const std::string& n : presetSpaceNames()) std::cout << n << "\n";
        return 0;
    }
    DesignSpace space = loadSpace(pos.size() > 1 ? pos[1] : defaultSpaceName());
    if (a.flag("json")) {
        std::cout << space.toJson().dump(2) << "\n";
        return 0;
    }
    ArchSampler sampler(space);
    CostModel model(space);
    std::cout << space.name << " (" << space.family << ")\n";
    if (!space.description.empty()) std::cout << "  " << space.description << "\n";
    std::cout << "  classes       " << space.n_classes << "\n"
              << "  resolutions   " << formatList(space.resolutions) << "\n"
              << "  kernel sizes  " << formatList(space.ks_list) << "\n"
              << "  expand ratios " << formatList(space.expand_list) << "\n"
              << "  extra depth   " << formatList(space.depth_list) << "\n"
              << "  blocks        " << space.maxBlocks() << " elastic + block 0, " << space.numStages() << " stages\n"
              << "  encoder       " << ArchEncoder(space).dims() << " dims\n  widths:\n";
    for (int w = 0; w < space.numWidths(); ++w) {
        const WidthSet& ws = space.widths[static_cast<std::size_t>(w)];
        std::cout << "    wid " << w << " (" << space.width_mult_list[static_cast<std::size_t>(w)] << "x): first "
                  << ws.first_conv << ", block0 " << ws.block0 << ", stages " << formatList(ws.stages) << ", mix "
                  << ws.feature_mix << "\n";
    }
    std::cout << "  stages:\n";
    for (int s = 0; s < space.numStages(); ++s) {
        const StageSpec& st = space.stages[static_cast<std::size_t>(s)];
        std::cout << "    " << s << ": stride " << st.stride << ", depth " << st.base_depth;
        if (st.elastic_depth) std::cout << "+" << formatList(space.depth_list);
        std::cout << ", SE " << formatList(st.se) << "\n";
    }
    const int r0 = space.resolutions.front();
    for (auto [label, c] : {std::pair<const char*, SubnetConfig>{"min", sampler.minConfig(r0)},
                            {"lab max", sampler.labMaxConfig(r0)}, {"full max", sampler.fullMaxConfig(r0)}}) {
        CostSummary s = model.summary(c);
        std::cout << "  " << padded(label, 9) << "@" << r0 << ": " << formatFixed(s.millionMacs(), 3) << " M MACs, "
                  << formatFixed(s.peakKB(), 1) << " KB peak, " << groupThousands(s.params) << " params\n";
    }
    return 0;
}

}  // namespace

std::vector<Command> costCommands()
{
    return {
        {"cost", "MACs, params, peak SRAM and flash of subnets", cmdCost},
        {"encode", "a subnet config as the predictor's one-hot encoding", cmdEncode},
        {"decode", "an encoding back to a subnet config", cmdDecode},
        {"space", "list or show design spaces", cmdSpace},
    };
}

}  // namespace tinyscope::cli
