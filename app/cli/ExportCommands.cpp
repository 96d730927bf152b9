// tinyscope quantize | export | inspect  (int8 quantization, TinyEngine export and import)
#include "cli/Cli.h"
#include "cli/CliArgs.h"
#include "cli/ModelArgs.h"

#include "Error.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"
#include "io/AtomicFolder.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "nn/quantize/QuantizationJob.h"
#include "tinyengine/BoardFit.h"
#include "tinyengine/GraphImport.h"

#include <iostream>
#include <map>
#include <optional>

namespace tinyscope::cli {

namespace {


std::string percent(double v) { return formatFixed(v, 2) + " %"; }

int cmdQuantize(const Args& argv)
{
    if (wantsBits(argv)) return quantizeBits(argv);
    CliArgs a(argv, withModelOptions({"data", "images"}),
              {"json", "help"});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope quantize (--model NAME [--params FILE] | --supernet CKPT --config CFG | --subnet DIR) [--calib-data DATASET]\n"
                     "                          [--data DATASET] [--images N] [--json]\n"
                     "  Int8 post-training quantization (BN folded, per-channel symmetric int8 weights, int32 biases,\n"
                     "  per-tensor asymmetric int8 activations, ReLU/ReLU6 folded into the clamp) and the int8 forward's\n"
                     "  top-1 next to the float top-1. Lab 2's n-bit linear and k-means weights (and their QAT) on a subnet:\n"
                     "  tinyscope quantize --bits 8,4,2 … (tinyscope quantize --bits 4 --help).\n"
                  << kModelOptions
                  << "  --data DATASET        evaluation images (default fashion-mnist:test)\n"
                     "  --images N            first N images (default 1000; 0 = all)\n";
        return 0;
    }
    const ModelSource model = modelFromArgs(a);
    const QuantizeOptions o = quantizeFromArgs(a);
    const long long images = a.int64Value("images", 1000, 0, kMaxImages);
    const PreparedModel m = prepareModel(model, o);
    const QuantizeReport r = compareTop1(m, a.value("data", "fashion-mnist:test"), static_cast<std::size_t>(images), o.threads);
    if (a.flag("json")) {
        Json j = r.toJson();
        j["batchnorm"] = m.subnet ? Json(m.batchNorm()) : Json(nullptr);
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::cout << r.model << ": " << r.description << "\n"
              << "  weights      " << (r.from_pickle ? "int8 from the params pickle" : "quantized here on " + std::to_string(r.calib_images) + " calibration images of " + m.calib_data) << "\n"
              << (m.subnet ? "  BatchNorm    " + m.batchNorm() + "\n" : std::string())
              << "  data         " << r.data << ", " << r.images << " images at " << r.resolution << "x" << r.resolution << "\n";
    if (r.has_float)
        std::cout << "  float top-1  " << percent(r.float_top1) << "   (" << formatFixed(1000.0 * r.float_seconds / std::max<std::size_t>(1, r.images), 2) << " ms/image)\n";
    else
        std::cout << "  float top-1  unknown (no scale.json: the float model cannot be recovered)\n";
    std::cout << "  int8 top-1   " << percent(r.int8_top1) << "   (" << formatFixed(1000.0 * r.int8_seconds / std::max<std::size_t>(1, r.images), 2) << " ms/image)\n";
    if (r.has_float) std::cout << "  agreement    " << percent(r.agreement) << " of images get the same class\n";
    return 0;
}

void printFindings(const std::vector<Finding>& findings, std::ostream& os)
{
    if (findings.empty()) {
        os << "checker (§9): no findings\n";
        return;
    }
    os << "checker (§9): " << errorCount(findings) << " error(s), " << findings.size() - static_cast<std::size_t>(errorCount(findings))
       << " warning(s)\n";
    for (const Finding& f : findings) os << "  " << f.text() << "\n";
}

int cmdExport(const Args& argv)
{
    CliArgs a(argv, withModelOptions({"scheme", "out", "mode", "name", "board"}),
              {"strict", "json", "help"});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope export (--model NAME [--params FILE] | --supernet CKPT --config CFG | --subnet DIR) --scheme FILE|NAME\n"
                     "                        [--calib-data DATASET] --out DIR [--mode reference|faithful] [--name STEM]\n"
                     "                        [--board NAME|FILE] [--strict] [--json]\n"
                     "  Writes STEM-graph.json, STEM-params.pkl and scale.json for TinyEngine, all or nothing: DIR is\n"
                     "  replaced as a whole in one rename (its other files are kept; it may hold files only, no folders).\n"
                  << kModelOptions
                  << "  --scheme FILE|NAME    sparse-update scheme: MODEL/49kb … (published), bias-only[:N], last:K, full,\n"
                     "                        classifier, or a tiny-training backward_config .json/.yaml\n"
                     "  --mode M              reference (default: MIT's compiler's graph + identity slices for ratio-1\n"
                     "                        inner weight updates) or faithful (gradients summed at residual adds)\n"
                     "  --board NAME|FILE     check SRAM, flash, DSP and FPU against a board: " + formatList(presetBoardNames()) + "\n"
                     "                        (models/boards/*.json) or a JSON file with the same keys\n"
                     "  --strict              refuse to write when the checker finds errors\n";
        return 0;
    }
    if (!a.has("out")) throw InputError("give the output folder: --out DIR");
    std::optional<BoardProfile> board;
    if (a.has("board")) board = loadBoard(a.value("board"));
    if (!a.has("scheme")) throw InputError("give the sparse-update scheme: --scheme FILE|NAME (e.g. mcunet-5fps/49kb)");
    // Where the files go is checked before the model is quantized.
    if (a.has("name")) requireFileStem(a.value("name"), "--name");
    requireReplaceableFolder(a.value("out"), "--out");
    ExportRequest rq;
    rq.model = modelFromArgs(a);
    rq.quantize = quantizeFromArgs(a);
    rq.scheme_label = a.value("scheme");
    const Network net = rq.model.network();
    rq.scheme = loadScheme(rq.scheme_label, &net);
    rq.form = parseExportForm(a.value("mode", "reference"));
    rq.name = a.value("name");
    ExportPlan plan = planModelExport(rq);
    BoardUse use;
    bool boardFits = true;
    if (board) {
        use = boardUse(plan);
        for (Finding& f : checkBoardFit(*board, use)) {
            boardFits &= !f.error();
            plan.findings.push_back(std::move(f));
        }
    }
    std::ostream& log = a.flag("json") ? std::cerr : std::cout;
    log << plan.network.name << ": " << plan.graph.liveOps() << " ops (" << plan.graph.forward_ops << " forward + loss), "
        << plan.graph.outputs.size() << " graph outputs, " << exportFormName(plan.form) << " form";
    if (plan.identity_slices) log << ", " << plan.identity_slices << " identity strided_slice(s) for ratio-1 weight updates";
    log << "\n";
    if (board)
        log << "board " << board->name << " (" << board->core << "): SRAM " << groupThousands(use.sram_bytes) << " of "
            << groupThousands(board->sram_bytes) << " B (memory ledger), flash " << groupThousands(use.flash_bytes) << " of "
            << groupThousands(board->flash_bytes) << " B (parameters)\n";
    printFindings(plan.findings, log);
    const ExportedFiles files = writeExport(plan, a.value("out"), a.flag("strict"));
    if (a.flag("json")) {
        Json f = Json::array();
        for (const Finding& x : plan.findings) f.push_back(x.toJson());
        std::cout << Json{{"graph", files.graph}, {"params", files.params}, {"scales", files.scales}, {"ops", plan.graph.liveOps()},
                          {"forward_ops", plan.graph.forward_ops}, {"outputs", plan.graph.outputs.size()}, {"mode", exportFormName(plan.form)},
                          {"identity_slices", plan.identity_slices}, {"findings", f}, {"errors", plan.errors()},
                          {"board", board ? board->toJson() : Json(nullptr)}, {"board_use", board ? use.toJson() : Json(nullptr)},
                          {"board_fits", board ? Json(boardFits) : Json(nullptr)}}
                         .dump(2)
                  << "\n";
        return 0;
    }
    std::cout << "wrote " << files.graph << " (" << groupThousands(files.graph_bytes) << " B)\n"
              << "wrote " << files.params << " (" << groupThousands(files.params_bytes) << " B, " << plan.params.arrays.size() << " arrays)\n"
              << "wrote " << files.scales << " (" << plan.params.scales.size() << " scales)\n";
    return 0;
}

int cmdInspect(const Args& argv)
{
    CliArgs a(argv, {"params", "scales"}, {"json", "help"});
    if (a.flag("help") || a.positionals().size() != 1) {
        std::cout << "usage: tinyscope inspect GRAPH.json [--params PARAMS.pkl] [--scales scale.json] [--json]\n"
                     "  Opens a TinyEngine training graph: ops, graph outputs, the network of its forward ops, the\n"
                     "  sparse-update scheme its gradient leaves imply, the memory ledger and the §9 checker.\n";
        return a.flag("help") ? 0 : 2;
    }
    const ImportedGraph im = importTinyEngineGraph(a.positionals()[0], a.value("params"), a.value("scales"));
    const MemoryLedger ledger = TrainingMemoryModel(im.network).ledger(im.scheme.resolve(im.network, "recovered scheme"), im.graph.mode);
    const std::vector<Finding> findings = checkForTinyEngine(im.graph, im.network, im.params ? &*im.params : nullptr);
    if (a.flag("json")) {
        Json j = im.summaryJson();
        j["memory"] = {{"extra_bytes", ledger.extra.total()}, {"peak_bytes", ledger.peak_bytes},
                       {"peak_bytes_no_reorder", ledger.peak_bytes_no_reorder}, {"inference_peak_bytes", ledger.inference_peak_bytes}};
        Json f = Json::array();
        for (const Finding& x : findings) f.push_back(x.toJson());
        j["findings"] = f;
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    const TrainingGraph& g = im.graph;
    std::cout << im.source << "\n"
              << "  ops          " << g.ops.size() << " (" << g.forward_ops << " forward + loss, " << g.ops.size() - static_cast<std::size_t>(g.forward_ops)
              << " backward); " << autodiffModeName(g.mode) << " form\n"
              << "  network      " << im.network.numConvs() << " convs, input " << im.network.input.c << "x" << im.network.input.h << "x"
              << im.network.input.w << ", " << im.network.num_outputs << " classes, " << groupThousands(im.network.params()) << " params, "
              << groupThousands(im.network.macs()) << " MACs\n";
    std::string idx, ratio;
    for (std::size_t i = 0; i < im.scheme.manual_weight_idx.size(); ++i) {
        idx += (i ? "," : "") + std::to_string(im.scheme.manual_weight_idx[i]);
        ratio += (i ? "," : "") + formatRatio(im.scheme.weight_update_ratio[i]);
    }
    std::cout << "  scheme       n_bias_update " << im.scheme.n_bias_update << ", manual_weight_idx [" << idx << "], weight_update_ratio [" << ratio
              << "] (+ classifier bias and weight)\n";
    for (const std::string& n : im.notes) std::cout << "  note         " << n << "\n";
    std::cout << "  memory       extra " << groupThousands(ledger.extra.total()) << " B (analytic), peak " << groupThousands(ledger.peak_bytes)
              << " B (inference peak " << groupThousands(ledger.inference_peak_bytes) << " B)\n";
    std::map<std::string, int> counts;
    for (const Op& op : g.ops) ++counts[opTypeName(op.kind)];
    std::cout << "  op types    ";
    for (const auto& [t, n] : counts) std::cout << " " << t << " " << n;
    std::cout << "\n  outputs      " << g.outputs.size() << "\n";
    for (const GraphOutput& o : g.outputs) {
        const Tensor& t = g.tensor(o.tensor);
        std::cout << "    op " << t.producer << "  " << opTypeName(g.op(t.producer).kind) << "  " << o.info << "  " << Json(t.shape).dump() << "\n";
    }
    printFindings(findings, std::cout);
    return 0;
}

}  // namespace

std::vector<Command> exportCommands()
{
    return {
        {"quantize", "int8 post-training quantization; float vs int8 top-1", cmdQuantize},
        {"export", "write a TinyEngine training graph, params pickle and scale.json", cmdExport},
        {"inspect", "open a TinyEngine training graph JSON (ops, outputs, scheme, memory, checker)", cmdInspect},
    };
}

}  // namespace tinyscope::cli
