// tinyscope prune  (Lab 1's fine-grained pruning on a design-space subnet: issue 50, docs/COMPRESSION.md)
#include "cli/Cli.h"
#include "cli/CliArgs.h"
#include "cli/EvaluationArgs.h"
#include "cli/StopSignal.h"

#include "Error.h"
#include "io/Text.h"
#include "nn/compress/PruningJob.h"

#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace tinyscope::cli {

namespace {

// A number of a list option's entry.
double listNumber(const std::string& option, const std::string& entry, const std::string& text)
{
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') throw InputError("--" + option + " " + escapedForMessage(entry) + ": '" + escapedForMessage(text) + "' is not a number");
    return v;
}

// --sparsity LAYER=S,…: per-layer sparsities.
std::map<std::string, double> sparsityList(const CliArgs& a)
{
    std::map<std::string, double> out;
    for (const std::string& item : listOption(a, "sparsity")) {
        const std::size_t eq = item.rfind('=');
        if (eq == std::string::npos || eq == 0)
            throw InputError("--sparsity '" + escapedForMessage(item) + "': give LAYER=S (e.g. classifier.linear.weight=0.5)");
        out[item.substr(0, eq)] = listNumber("sparsity", item, item.substr(eq + 1));
    }
    return out;
}

int cmdPrune(const Args& argv)
{
    std::set<std::string> valued = kEvaluationValued, flags = kEvaluationFlags;
    valued.erase("dtype");
    valued.erase("int8-calib-images");
    valued.insert({"uniform", "sparsity", "scan", "out"});
    flags.insert({"sensitivity", "list"});
    CliArgs a(argv, valued, flags);
    if (a.flag("help")) {
        std::cout << "usage: tinyscope prune [--supernet CKPT --space NAME|FILE] [--config CFG.json|min|max] [--resolution R]\n"
                     "                       (--uniform S | --sparsity LAYER=S,… | --sensitivity [--scan 0.4,0.5,…] | --list)\n"
                     "                       [--data DATASET] [--split 0|1] [--images N] [--calib-data DATASET] [--calib-images N]\n"
                     "                       [--calib-batch B] [--seed S] [--no-calib | --lab-calib] [--batch B] [--threads T]\n"
                     "                       [--engine onednn|libtorch] [--out DIR] [--json]\n"
                     "  Lab 1's fine-grained (magnitude) pruning of a subnet: weights with more than one dimension (convs, SE,\n"
                     "  the classifier) keep |w| above the round(numel × S)-th smallest (docs/COMPRESSION.md). The subnet is\n"
                     "  extracted, BatchNorm re-calibrated and measured as `tinyscope eval` does (same options and defaults),\n"
                     "  pruned on its raw conv weights, then measured again on the same images.\n"
                     "  --uniform S           every layer at sparsity S (0–1); --sparsity LAYER=S,… per layer (the rest: --uniform, else 0)\n"
                     "  --sensitivity         the lab's scan: each layer alone at each --scan sparsity (default 0.4,0.5,…,0.9),\n"
                     "                        the others dense; top-1 per point (progress on stderr; Ctrl-C stops, nothing written)\n"
                     "  --list                the prunable layers: name, shape, parameters\n"
                     "  --out DIR             subnet.pth (the pruned subnet, the lab's key names), subnet.json, pruning.json\n"
                     "  --json                dense / pruned top-1, per-layer sparsity and non-zeros, dense and sparse size (bits),\n"
                     "                        the scan's curves\n";
        return 0;
    }
    PruneRequest rq;
    rq.uniform = a.doubleValue("uniform", 0, 0, 1);
    rq.sparsity = sparsityList(a);
    if (a.has("scan")) {
        rq.scan.clear();
        for (const std::string& s : listOption(a, "scan")) rq.scan.push_back(listNumber("scan", s, s));
    }
    rq.sensitivity = a.flag("sensitivity");
    rq.out = a.value("out");
    rq.evaluation = evaluationFromArgs(a);
    if (a.flag("list")) {
        for (const PrunedLayer& l : prunableLayers(rq.evaluation)) {
            std::string shape;
            for (std::int64_t d : l.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
            std::cout << l.name << "  " << shape << "  " << l.params << "\n";
        }
        return 0;
    }
    if (!rq.sensitivity && rq.sparsity.empty() && !a.has("uniform"))
        throw InputError("give the pruning: --uniform S, --sparsity LAYER=S,…, or --sensitivity (--list names the layers)");
    const bool tty = isatty(2);
    JobControl job;
    job.cancel = cancelOnSignals();
    job.progress = [&](std::size_t done, std::size_t total, const std::string& stage) {
        if (tty) std::fprintf(stderr, "\r[%zu/%zu] %s          ", done, total, stage.c_str());
    };
    const PruneResult r = runPruning(rq, job);
    if (tty) std::fprintf(stderr, "\r%70s\r", "");
    if (a.flag("json")) {
        std::cout << r.toJson().dump(2) << "\n";
        return 0;
    }
    std::cout << "data         " << r.data << ", " << r.images << " images\n"
              << "dense top-1  " << formatFixed(r.dense_top1, 2) << " %\n";
    if (r.pruned) std::cout << "pruned top-1 " << formatFixed(r.pruned_top1, 2) << " %\n";
    std::cout << "size         " << formatFixed(static_cast<double>(r.sparse_bits) / 8192.0, 1) << " KiB of non-zeros, dense "
              << formatFixed(static_cast<double>(r.dense_bits) / 8192.0, 1) << " KiB (32-bit, get_model_size)\n";
    for (const SensitivityCurve& c : r.sensitivity) {
        std::cout << c.layer << " (" << c.params << ")";
        for (std::size_t i = 0; i < c.sparsity.size(); ++i) std::cout << "  " << formatFixed(c.sparsity[i], 1) << ": " << formatFixed(c.top1[i], 2);
        std::cout << "\n";
    }
    if (!rq.out.empty()) std::cout << "wrote        " << rq.out << "/subnet.pth, subnet.json, pruning.json\n";
    return 0;
}

}  // namespace

std::vector<Command> compressCommands()
{
    return {
        {"prune", "Lab 1's fine-grained pruning of a subnet: per-layer sparsity, sensitivity scan, sparse size", cmdPrune},
    };
}

}  // namespace tinyscope::cli
