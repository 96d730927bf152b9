// tinyscope zoo | train-graph | memory
#include "cli/Cli.h"
#include "cli/CliArgs.h"

#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/ForwardLowering.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"
#include "io/AtomicFile.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "nn/quantize/GradientCheck.h"
#include "space/SpacePresets.h"
#include "viz/GraphvizRenderer.h"
#include "viz/TrainingGraphDot.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"
#include "cli/TextColumns.h"

#include <iostream>
#include <map>
#include <sstream>

namespace tinyscope::cli {

namespace {

std::string shape3(const Shape3& s) { return std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w); }

std::string kB(std::int64_t bytes) { return formatFixed(static_cast<double>(bytes) / 1024.0, 2) + " kB"; }

// --model NAME | --config C [--space S]
Network networkFromArgs(const CliArgs& a, const std::string& positional = "")
{
    const bool model = a.has("model") || !positional.empty();
    if (model && a.has("config")) throw InputError("give either --model or --config, not both");
    if (model) return zooModel(a.has("model") ? a.value("model") : positional);
    if (a.has("config")) {
        const DesignSpace space = loadSpace(a.value("space", defaultSpaceName()));
        const std::string path = a.value("config");
        return networkFromSubnet(space, SubnetConfig::loadFile(path, space), "subnet " + path);
    }
    throw InputError("give the model: --model NAME (see 'tinyscope zoo list') or --config SUBNET.json");
}

std::vector<std::string> commaList(const std::string& text)
{
    std::vector<std::string> out;
    std::string tok;
    std::stringstream ss(text);
    while (std::getline(ss, tok, ',')) out.push_back(tok);
    if (!text.empty() && text.back() == ',') out.emplace_back();
    return out;
}

// --scheme FILE|NAME | --n-bias-update N [--weight-idx i,j,…] [--weight-ratio r,s,…]
SparseScheme schemeFromArgs(const CliArgs& a, const Network& net)
{
    const bool inline_ = a.has("n-bias-update") || a.has("weight-idx") || a.has("weight-ratio");
    if (a.has("scheme") && inline_) throw InputError("give either --scheme or --n-bias-update/--weight-idx/--weight-ratio, not both");
    if (a.has("scheme")) return loadScheme(a.value("scheme"), &net);
    if (!inline_) throw InputError("give the sparse-update scheme: --scheme FILE|NAME or --n-bias-update N [--weight-idx …]");
    if (!a.has("n-bias-update")) throw InputError("--weight-idx/--weight-ratio need --n-bias-update N");
    SparseScheme s;
    const std::string nb = a.value("n-bias-update");
    if (nb == "all") s.n_bias_update = -1;
    else {
        s.n_bias_update = a.intValue("n-bias-update", 0, 0, 1'000'000);
    }
    if (a.has("weight-idx")) {
        const std::vector<std::string> parts = commaList(a.value("weight-idx"));
        for (std::size_t i = 0; i < parts.size(); ++i) {
            try {
                std::size_t used = 0;
                s.manual_weight_idx.push_back(std::stoi(parts[i], &used));
                if (used != parts[i].size()) throw std::invalid_argument(parts[i]);
            } catch (const std::exception&) {
                throw InputError("--weight-idx: entry " + std::to_string(i) + " '" + parts[i] + "' is not a conv index");
            }
        }
    }
    if (a.has("weight-ratio")) {
        const std::vector<std::string> parts = commaList(a.value("weight-ratio"));
        for (std::size_t i = 0; i < parts.size(); ++i)
            s.weight_update_ratio.push_back(parseRatio(parts[i], "--weight-ratio: entry " + std::to_string(i)));
    }
    if (a.has("weight-ratio") && !a.has("weight-idx")) throw InputError("--weight-ratio needs --weight-idx");
    return s;
}

std::string schemeSummary(const Network& net, const ResolvedScheme& r)
{
    std::string s = "n_bias_update " + std::to_string(r.n_bias_update);
    if (r.n_bias_update > 0)
        s += " (convs " + std::to_string(net.numBackboneConvs() - r.n_bias_update) + ".." +
             std::to_string(net.numBackboneConvs() - 1) + ")";
    std::string w;
    for (int i = 0; i < net.numBackboneConvs(); ++i) {
        const ConvUpdate& u = r.conv(i);
        if (u.weight()) w += (w.empty() ? "" : ", ") + std::to_string(i) + " (" + std::to_string(u.k) + "/" + std::to_string(net.conv(i).cin) + ")";
    }
    return s + "; weights " + (w.empty() ? "none" : w) + "; classifier bias + weight";
}

// Every file option the command will write to can be written, checked before any work.
void requireOutputFiles(const CliArgs& a, std::initializer_list<const char*> options)
{
    for (const char* option : options)
        if (a.has(option)) requireWritableFile(a.value(option), std::string("--") + option);
}

void saveSchemeIfAsked(const CliArgs& a, const SparseScheme& s)
{
    if (a.has("save-scheme")) s.saveFile(a.value("save-scheme"));
}

const char* kModelHelp =
    "  --model NAME        a zoo model (tinyscope zoo list)\n"
    "  --config FILE       or a design-space subnet config {wid, ks, e, d, image_size} (--space NAME|FILE)\n";
const char* kSchemeHelp =
    "  --scheme FILE|NAME  tiny-training backward_config as .json/.yaml, or a name: MODEL/49kb … (published),\n"
    "                      bias-only, bias-only:N, last:K, full, classifier\n"
    "  --n-bias-update N   or inline: biases of the last N backbone convs ('all' for every conv)\n"
    "  --weight-idx i,j    conv indices whose weights are updated (0 = stem, classifier excluded)\n"
    "  --weight-ratio r,s  input-channel ratio per index: 0, 1/8, 1/4, 1/2, 1 (or 0.125, …)\n"
    "  --mode M            correct (default) or reference (MIT compiler's quirks)\n"
    "  --save-scheme FILE  also write the scheme as tiny-training config (.json or .yaml)\n";

int cmdZoo(const Args& argv)
{
    CliArgs a(argv, {"config", "space"}, {"json", "help"});
    const auto& pos = a.positionals();
    if (a.flag("help") || pos.empty() || (pos[0] != "list" && pos[0] != "show") || (pos[0] == "list" && pos.size() > 1) ||
        pos.size() > 2) {
        std::cout << "usage: tinyscope zoo list [--json]\n"
                     "       tinyscope zoo show NAME [--json]\n"
                     "       tinyscope zoo show --config SUBNET.json [--space NAME|FILE] [--json]\n";
        return a.flag("help") ? 0 : 2;
    }
    if (pos[0] == "list") {
        Json all = Json::array();
        if (!a.flag("json"))
            std::cout << padded("model", 18) << padded("params", 10, true) << padded("MACs", 13, true) << "  " << padded("input", 11)
                      << "description\n";
        for (const ZooEntry& e : zooEntries()) {
            const Network net = zooModel(e.name);
            if (a.flag("json")) {
                all.push_back(Json{{"name", e.name},
                                   {"summary", e.summary},
                                   {"params", net.params()},
                                   {"macs", net.macs()},
                                   {"input", {net.input.c, net.input.h, net.input.w}},
                                   {"num_outputs", net.num_outputs},
                                   {"trainable_graph", loweringObstacle(net).empty()},
                                   {"published_schemes", publishedSchemesFor(e.name).size()}});
            } else {
                std::cout << padded(e.name, 18) << padded(groupThousands(net.params()), 10, true)
                          << padded(groupThousands(net.macs()), 13, true) << "  " << padded(shape3(net.input), 11) << e.summary
                          << "\n";
            }
        }
        if (a.flag("json")) std::cout << all.dump(2) << "\n";
        return 0;
    }
    const Network net = networkFromArgs(a, pos.size() > 1 ? pos[1] : "");
    if (a.flag("json")) {
        std::cout << net.toJson().dump(2) << "\n";
        return 0;
    }
    int peakAt = -1;
    const std::int64_t peak = net.peakActivationBytes(&peakAt);
    std::cout << net.name << ": " << net.description << "\n"
              << "  source      " << net.source << "\n"
              << "  input       " << shape3(net.input) << ", " << net.num_outputs << " outputs, "
              << (net.loss == LossKind::CrossEntropy ? "cross-entropy" : "mean squared error") << " loss\n"
              << "  params      " << groupThousands(net.params()) << "\n"
              << "  MACs        " << groupThousands(net.macs()) << "\n"
              << "  peak act.   " << groupThousands(peak) << " B (int8, at conv " << peakAt << " " << net.conv(peakAt).name << ")\n"
              << "  convs       " << net.numConvs() << " (" << net.numBackboneConvs() << " backbone + classifier)\n";
    const std::string obstacle = loweringObstacle(net);
    if (!obstacle.empty()) std::cout << "  training graph: not available: " << obstacle << "\n";
    std::cout << "\n"
              << padded("idx", 5) << padded("layer", 26) << padded("role", 17) << padded("in", 12) << padded("out", 12) << padded("k", 6)
              << padded("s", 3) << padded("g", 5) << padded("MACs", 12, true) << padded("params", 10, true) << "\n";
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        const std::string idx = l.isConv() ? std::to_string(l.conv_index) : "";
        std::cout << padded(idx, 5) << padded(l.name, 26) << padded(l.isConv() ? l.role : layerKindName(l.kind), 17)
                  << padded(shape3(l.in), 12) << padded(shape3(l.out), 12)
                  << padded(l.isConv() ? std::to_string(l.kh) + "x" + std::to_string(l.kw) : "", 6)
                  << padded(l.isConv() ? std::to_string(l.stride_h) : "", 3) << padded(l.isConv() ? std::to_string(l.groups) : "", 5)
                  << padded(l.isConv() ? groupThousands(l.macs()) : "", 12, true)
                  << padded(l.params() ? groupThousands(l.params()) : "", 10, true) << "\n";
    }
    return 0;
}

Json tensorShape(const Tensor& t) { return t.shape.empty() ? Json::array({1}) : Json(t.shape); }

const char* gradientKindName(GradientKind k)
{
    switch (k) {
    case GradientKind::Loss: return "loss";
    case GradientKind::Bias: return "bias";
    case GradientKind::Weight: return "weight";
    case GradientKind::Zero: return "zero";
    }
    return "?";
}

int cmdTrainGraph(const Args& argv)
{
    CliArgs a(argv, {"model", "config", "space", "scheme", "n-bias-update", "weight-idx", "weight-ratio", "mode", "dot", "svg",
                     "png", "save-scheme", "seed"},
              {"json", "ops", "check", "help"});
    if (a.flag("help") || !a.positionals().empty()) {
        std::cout << "usage: tinyscope train-graph (--model NAME | --config C) (--scheme FILE|NAME | --n-bias-update N …)\n"
                     "                             [--mode correct|reference] [--dot F] [--svg F] [--png F] [--ops] [--json]\n"
                  << kModelHelp << kSchemeHelp
                  << "  --dot / --svg / --png  the forward + backward graph (pruned ops grey) as DOT text, Graphviz SVG\n"
                     "                      or PNG (144 dpi, at most 6,000 px a side)\n"
                     "  --ops               list the kept ops in execution order\n"
                     "  --check [--seed S]  run the graph on synthetic int8 parameters and compare every gradient\n"
                     "                      with LibTorch autograd on the same fake-quantized model (exit 1 if > 1e-4)\n";
        return a.flag("help") ? 0 : 2;
    }
    requireOutputFiles(a, {"dot", "svg", "png", "save-scheme"});
    const Network net = networkFromArgs(a);
    const AutodiffMode mode = parseAutodiffMode(a.value("mode", "correct"));
    const SparseScheme scheme = schemeFromArgs(a, net);
    const ResolvedScheme r = scheme.resolve(net, a.has("scheme") ? a.value("scheme") : "scheme");
    const TrainingGraph g = buildTrainingGraph(net, r, mode);
    saveSchemeIfAsked(a, scheme);

    if (a.has("dot") || a.has("svg") || a.has("png")) {
        TrainingGraphDotOptions o;
        o.title = net.name + " — " + std::to_string(g.liveOps()) + " ops kept, " + std::to_string(g.prunedOps()) +
                  " pruned (" + autodiffModeName(mode) + " mode)";
        const std::string dot = trainingGraphDot(g, o);
        for (const char* format : {"dot", "svg", "png"})
            if (a.has(format)) writeFileAtomic(a.value(format), renderDotAs(dot, format));
    }

    GradientCheckResult check;
    const bool checked = a.flag("check");
    if (checked) {
        const long long seed = a.int64Value("seed", 1, 0, 4294967295LL);
        check = checkGradients(g, net, r, syntheticQuantParameters(g, net, static_cast<unsigned>(seed)));
    } else if (a.has("seed")) {
        throw InputError("--seed only applies to --check");
    }
    const bool checkFailed = checked && (check.maxRelativeError() > 1e-4 || check.allZero() > 0);

    std::vector<int> position(g.ops.size(), -1);
    for (std::size_t i = 0; i < g.order.size(); ++i) position[static_cast<std::size_t>(g.order[i])] = static_cast<int>(i);
    std::map<std::string, int> types;
    int forward = 0;
    for (int op : g.order) {
        ++types[opTypeName(g.op(op).kind)];
        forward += g.op(op).phase != Phase::Backward;
    }
    std::map<GradientKind, int> kinds;
    for (const GraphOutput& o : g.outputs) ++kinds[o.kind];

    if (a.flag("json")) {
        Json leaves = Json::array();
        for (const GraphOutput& o : g.outputs) {
            const Tensor& t = g.tensor(o.tensor);
            leaves.push_back(Json{{"output_info", o.info},
                                  {"kind", gradientKindName(o.kind)},
                                  {"op", opTypeName(g.op(t.producer).kind)},
                                  {"position", position[static_cast<std::size_t>(t.producer)]},
                                  {"shape", tensorShape(t)},
                                  {"dtype", dtypeName(t.dtype)},
                                  {"conv_index", o.conv_index}});
        }
        Json j{{"model", net.name},
               {"mode", autodiffModeName(mode)},
               {"scheme", scheme.toJson()["backward_config"]},
               {"ops", g.liveOps()},
               {"forward_ops", forward},
               {"backward_ops", g.liveOps() - forward},
               {"pruned_ops", g.prunedOps()},
               {"built_ops", static_cast<int>(g.ops.size())},
               {"op_type_counts", types},
               {"leaves", leaves},
               {"dropped_contributions", g.dropped_contributions.size()}};
        if (a.flag("ops")) {
            Json ops = Json::array();
            for (int op : g.order) {
                const Op& o = g.op(op);
                Json inputs = Json::array();
                for (int in : o.inputs) {
                    const Tensor& t = g.tensor(in);
                    inputs.push_back(t.kind == TensorKind::Parameter ? Json(t.name)
                                     : t.kind == TensorKind::Constant ? Json(t.value)
                                                                      : Json(position[static_cast<std::size_t>(t.producer)]));
                }
                ops.push_back(Json{{"type", opTypeName(o.kind)},
                                   {"attrs", o.attrs},
                                   {"inputs", inputs},
                                   {"shape", tensorShape(g.tensor(o.output))},
                                   {"dtype", dtypeName(g.tensor(o.output).dtype)},
                                   {"role", opRoleName(o.role)},
                                   {"layer", o.layer}});
            }
            j["op_list"] = ops;
        }
        if (checked)
            j["check"] = Json{{"gradients", check.gradients.size()},
                              {"max_relative_error", check.maxRelativeError()},
                              {"all_zero_gradients", check.allZero()},
                              {"loss", check.loss},
                              {"autograd_loss", check.reference_loss},
                              {"passed", !checkFailed}};
        std::cout << j.dump(2) << "\n";
        return checkFailed ? 1 : 0;
    }
    std::cout << "model    " << net.name << " (" << net.numConvs() << " convs)\n"
              << "scheme   " << schemeSummary(net, r) << "\n"
              << "mode     " << autodiffModeName(mode)
              << (mode == AutodiffMode::Reference ? " (skip gradients overwritten, weight gradient without zero point)"
                                                  : " (gradients accumulated, weight gradient of x - zero_x)")
              << "\n"
              << "ops      " << g.liveOps() << " kept (" << forward << " forward + loss, " << g.liveOps() - forward
              << " backward); " << g.prunedOps() << " of " << g.ops.size() << " built ops pruned\n"
              << "leaves   " << g.outputs.size() << ": loss, " << kinds[GradientKind::Bias] << " bias, "
              << kinds[GradientKind::Weight] << " weight" << (kinds[GradientKind::Zero] ? ", " + std::to_string(kinds[GradientKind::Zero]) + " zero (dummy)" : "")
              << " gradients\n";
    if (checked) {
        std::ostringstream e;
        e << check.maxRelativeError();
        std::cout << "check    " << check.gradients.size() << " gradients vs LibTorch autograd on synthetic int8 parameters: "
                  << "max relative error " << e.str() << (checkFailed ? "  FAILED" : "  ok") << "\n";
    }
    if (r.anyKDiffersFromCompiler())
        std::cout << "note     a ratio·C_in is not whole: the analytic model truncates, the reference compiler rounds\n";
    std::cout << "op types";
    for (const auto& [t, n] : types) std::cout << " " << t << "×" << n;
    std::cout << "\n\n" << padded("pos", 6) << padded("leaf", 26) << padded("op", 30) << "shape\n";
    for (const GraphOutput& o : g.outputs) {
        const Tensor& t = g.tensor(o.tensor);
        std::cout << padded(std::to_string(position[static_cast<std::size_t>(t.producer)]), 6) << padded(o.info, 26)
                  << padded(opTypeName(g.op(t.producer).kind), 30) << tensorShape(t).dump() << " " << dtypeName(t.dtype) << "\n";
    }
    if (a.flag("ops")) {
        std::cout << "\n";
        for (std::size_t i = 0; i < g.order.size(); ++i) {
            const Op& o = g.op(g.order[i]);
            std::string ins;
            for (int in : o.inputs) {
                const Tensor& t = g.tensor(in);
                ins += (ins.empty() ? "" : ", ") +
                       (t.kind == TensorKind::Parameter ? t.name
                        : t.kind == TensorKind::Constant ? formatFixed(t.value, 4)
                                                         : "@" + std::to_string(position[static_cast<std::size_t>(t.producer)]));
            }
            std::cout << padded(std::to_string(i), 5) << padded(opTypeName(o.kind), 22) << padded(tensorShape(g.tensor(o.output)).dump(), 18)
                      << "(" << ins << ")\n";
        }
    }
    return checkFailed ? 1 : 0;
}

int cmdMemory(const Args& argv)
{
    CliArgs a(argv, {"model", "config", "space", "scheme", "n-bias-update", "weight-idx", "weight-ratio", "mode", "save-scheme"},
              {"json", "help"});
    if (a.flag("help") || !a.positionals().empty()) {
        std::cout << "usage: tinyscope memory (--model NAME | --config C) (--scheme FILE|NAME | --n-bias-update N …)\n"
                     "                        [--mode correct|reference] [--json]\n"
                  << kModelHelp << kSchemeHelp;
        return a.flag("help") ? 0 : 2;
    }
    requireOutputFiles(a, {"save-scheme"});
    const Network net = networkFromArgs(a);
    const AutodiffMode mode = parseAutodiffMode(a.value("mode", "correct"));
    const SparseScheme scheme = schemeFromArgs(a, net);
    const ResolvedScheme r = scheme.resolve(net, a.has("scheme") ? a.value("scheme") : "scheme");
    // The ledger models the int8 training graph; a network that has none has no such memory.
    const std::string obstacle = loweringObstacle(net);
    if (!obstacle.empty()) throw InputError(net.name + ": no int8 training graph, so no training-memory ledger: " + obstacle);
    const MemoryLedger m = TrainingMemoryModel(net).ledger(r, mode);
    saveSchemeIfAsked(a, scheme);
    if (a.flag("json")) {
        Json j = m.toJson(net);
        j["scheme"] = scheme.toJson()["backward_config"];
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    auto at = [&](int step) {
        const ScheduleStep& s = m.schedule[static_cast<std::size_t>(step)];
        return std::string(s.backward ? "backward of " : "forward at ") + net.layer(s.layer).name;
    };
    const ExtraMemory& e = m.extra;
    std::cout << "model    " << net.name << "\n"
              << "scheme   " << schemeSummary(net, r) << "\n\n"
              << "extra memory (tiny-training analytic)  " << padded(groupThousands(e.total()), 9, true) << " B  ("
              << formatFixed(static_cast<double>(e.totalBits()) / 8192.0, 3) << " kB)\n"
              << "  classifier input                     " << padded(groupThousands(e.classifier_input), 9, true) << "\n"
              << "  masks (1 bit per output)             " << padded(groupThousands(e.masks()), 9, true) << "\n"
              << "  biases (int32)                       " << padded(groupThousands(e.biases), 9, true) << "\n"
              << "  saved inputs (int8, k channels)      " << padded(groupThousands(e.saved_inputs), 9, true) << "\n"
              << "  weights (int8, k channels)           " << padded(groupThousands(e.weights), 9, true) << "\n\n"
              << "peak SRAM, with reordering             " << padded(groupThousands(m.peak_bytes), 9, true) << " B  ("
              << kB(m.peak_bytes) << ", " << at(m.peak_step) << ")\n"
              << "peak SRAM, without reordering          " << padded(groupThousands(m.peak_bytes_no_reorder), 9, true) << " B  ("
              << kB(m.peak_bytes_no_reorder) << ", " << at(m.peak_step_no_reorder) << ")\n"
              << "inference peak                         " << padded(groupThousands(m.inference_peak_bytes), 9, true) << " B  ("
              << kB(m.inference_peak_bytes) << ")\n"
              << "  of which trainable weights + biases  " << padded(groupThousands(m.trainable_bytes), 9, true) << " B in the training peaks\n";
    std::cout << "\n"
              << padded("idx", 5) << padded("layer", 22) << padded("role", 11) << padded("update", 14) << padded("masks", 8, true)
              << padded("biases", 8, true) << padded("saved in", 10, true) << padded("weights", 9, true) << "\n";
    for (const LedgerRow& row : m.rows) {
        if (row.totalBytes() == 0 && !row.classifier) continue;
        std::string upd = row.classifier ? "input " + std::to_string(row.classifier_input_bytes) + " B"
                          : row.k > 0    ? "bias+W " + std::to_string(row.k) + "/" + std::to_string(row.cin)
                                         : "bias";
        std::cout << padded(std::to_string(row.index), 5) << padded(row.name, 22) << padded(row.role, 11) << padded(upd, 14)
                  << padded(groupThousands((row.mask_bits + 7) / 8), 8, true) << padded(groupThousands(row.bias_bytes), 8, true)
                  << padded(groupThousands(row.saved_input_bytes), 10, true) << padded(groupThousands(row.weight_bytes), 9, true)
                  << "\n";
    }
    return 0;
}

}  // namespace

std::vector<Command> graphCommands()
{
    return {
        {"zoo", "list the model zoo or show a model's layers", cmdZoo},
        {"train-graph", "forward + pruned backward training graph of a model under a sparse scheme", cmdTrainGraph},
        {"memory", "training memory of a sparse-update scheme: analytic extra bytes and peak SRAM", cmdMemory},
    };
}

}  // namespace tinyscope::cli
