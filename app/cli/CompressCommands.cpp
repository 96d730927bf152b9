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

// --sparsity LAYER=S,… / --channel-ratio GROUP=R,…: a number per name.
std::map<std::string, double> namedNumbers(const CliArgs& a, const std::string& option, const char* example)
{
    std::map<std::string, double> out;
    for (const std::string& item : listOption(a, option)) {
        const std::size_t eq = item.rfind('=');
        if (eq == std::string::npos || eq == 0)
            throw InputError("--" + option + " '" + escapedForMessage(item) + "': give " + example);
        out[item.substr(0, eq)] = listNumber(option, item, item.substr(eq + 1));
    }
    return out;
}

// The fine-tuning options (after pruning; k-means QAT): --finetune-epochs E and how to train.
const std::set<std::string> kFineTuneValued = {"finetune-epochs", "finetune-images", "finetune-batch", "finetune-lr",
                                               "finetune-schedule", "finetune-data"};
const char* const kFineTuneHelp =
    "  --finetune-epochs E   fine-tune after pruning, the masks re-applied after every step (default 0: none): SGD lr\n"
    "                        --finetune-lr (0.01), momentum 0.9, weight decay 1e-4, batch --finetune-batch (64),\n"
    "                        random crop (pad 2) + flip, on --finetune-data (default: the space's own training data,\n"
    "                        fashion-mnist:fit), --finetune-images N per epoch (default all); top-1 after each epoch\n"
    "  --finetune-schedule cosine|lab  cosine over the run (default) or the lab's CosineAnnealingLR(T_max=epochs)\n"
    "                        stepped per batch\n";

SubnetFineTuneOptions fineTuneFromArgs(const CliArgs& a)
{
    SubnetFineTuneOptions o;
    o.epochs = a.intValue("finetune-epochs", 0, 0, 1000);
    o.images = static_cast<std::size_t>(a.int64Value("finetune-images", 0, 1, kMaxImages));
    o.batch = a.intValue("finetune-batch", 64, 1, kMaxBatch);
    o.lr = a.doubleValue("finetune-lr", 0.01, 1e-9, 10);
    o.seed = static_cast<std::uint64_t>(a.int64Value("seed", 0, 0, kMaxSeed));
    const std::string schedule = a.value("finetune-schedule", "cosine");
    if (schedule != "cosine" && schedule != "lab")
        throw InputError("--finetune-schedule '" + escapedForMessage(schedule) + "': give cosine or lab");
    o.schedule = schedule == "lab" ? LrSchedule::Lab : LrSchedule::Cosine;
    return o;
}

int cmdPrune(const Args& argv)
{
    std::set<std::string> valued = kEvaluationValued, flags = kEvaluationFlags;
    valued.erase("dtype");
    valued.erase("int8-calib-images");
    valued.insert({"uniform", "sparsity", "scan", "out", "channels", "channel-ratio", "latency-runs"});
    valued.insert(kFineTuneValued.begin(), kFineTuneValued.end());
    flags.insert({"sensitivity", "list", "sort"});
    CliArgs a(argv, valued, flags);
    if (a.flag("help")) {
        std::cout << "usage: tinyscope prune [--supernet CKPT --space NAME|FILE] [--config CFG.json|min|max] [--resolution R]\n"
                     "                       (--uniform S | --sparsity LAYER=S,… | --sensitivity [--scan 0.4,0.5,…] |\n"
                     "                        --channels R [--channel-ratio GROUP=R,…] [--sort] [--latency-runs N] | --list)\n"
                     "                       [--data DATASET] [--split 0|1] [--images N] [--calib-data DATASET] [--calib-images N]\n"
                     "                       [--calib-batch B] [--seed S] [--no-calib | --lab-calib] [--batch B] [--threads T]\n"
                     "                       [--engine onednn|libtorch] [--finetune-epochs E [--finetune-lr LR] [--finetune-batch B]\n"
                     "                       [--finetune-images N] [--finetune-schedule cosine|lab] [--finetune-data DATASET]]\n"
                     "                       [--out DIR] [--json]\n"
                     "  Lab 1's pruning of a subnet. The subnet is extracted, BatchNorm re-calibrated and measured as\n"
                     "  `tinyscope eval` does (same options and defaults), pruned, then measured again on the same images.\n"
                     "  Fine-grained: weights with more than one dimension (convs, SE, the classifier) keep |w| above the\n"
                     "  round(numel × S)-th smallest, on the raw conv weights (docs/COMPRESSION.md).\n"
                     "  --uniform S           every layer at sparsity S (0–1); --sparsity LAYER=S,… per layer (the rest: --uniform, else 0)\n"
                     "  --sensitivity         the lab's scan: each layer alone at each --scan sparsity (default 0.4,0.5,…,0.9),\n"
                     "                        the others dense; top-1 per point (progress on stderr; Ctrl-C stops, nothing written)\n"
                     "  --channels R          channel pruning instead: every channel group (each block's expanded channels, the stem's\n"
                     "                        outputs, the feature mix's outputs) keeps round(channels × (1 − R)); --channel-ratio\n"
                     "                        GROUP=R,… per group. Top-1 is measured with and without sorting the channels by importance\n"
                     "                        first; --sort keeps the sorted network (fine-tuned, written). MACs, parameters, peak memory\n"
                     "                        and latency (median of --latency-runs single-image runs, default 50) before and after\n"
                     "  --list                the prunable layers (name, shape, parameters), then the channel groups (name, channels)\n"
                  << kFineTuneHelp <<
                     "  --out DIR             subnet.pth (the pruned subnet, the lab's key names), subnet.json, pruning.json\n"
                     "  --json                dense / pruned top-1, per-layer sparsity and non-zeros, dense and sparse size (bits),\n"
                     "                        the scan's curves, the channel groups and costs, the fine-tuning epochs\n";
        return 0;
    }
    PruneRequest rq;
    rq.uniform = a.doubleValue("uniform", 0, 0, 1);
    rq.sparsity = namedNumbers(a, "sparsity", "LAYER=S (e.g. classifier.linear.weight=0.5)");
    rq.channel_ratios = namedNumbers(a, "channel-ratio", "GROUP=R (e.g. blocks.3=0.5)");
    if (a.has("channels")) rq.channels = a.doubleValue("channels", 0, 0, 1);
    rq.sort = a.flag("sort");
    rq.latency_runs = a.intValue("latency-runs", 50, 1, 100000);
    if (rq.channelPruning() && (a.has("uniform") || a.has("sparsity") || rq.sensitivity || a.flag("sensitivity")))
        throw InputError("--channels / --channel-ratio prune channels; --uniform, --sparsity and --sensitivity prune weights: give one kind");
    if (!rq.channelPruning() && (rq.sort || a.has("latency-runs")))
        throw InputError(std::string(rq.sort ? "--sort" : "--latency-runs") + " belongs to channel pruning: give --channels R");
    if (a.has("scan")) {
        rq.scan.clear();
        for (const std::string& s : listOption(a, "scan")) rq.scan.push_back(listNumber("scan", s, s));
    }
    rq.sensitivity = a.flag("sensitivity");
    rq.out = a.value("out");
    rq.finetune = fineTuneFromArgs(a);
    rq.finetune_data = a.value("finetune-data");
    rq.evaluation = evaluationFromArgs(a);
    if (a.flag("list")) {
        for (const PrunedLayer& l : prunableLayers(rq.evaluation)) {
            std::string shape;
            for (std::int64_t d : l.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
            std::cout << l.name << "  " << shape << "  " << l.params << "\n";
        }
        std::cout << "\nchannel groups\n";
        for (const ChannelGroup& g : prunableChannelGroups(rq.evaluation)) std::cout << g.name << "  " << g.channels << "\n";
        return 0;
    }
    if (!rq.sensitivity && rq.sparsity.empty() && !a.has("uniform") && !rq.channelPruning())
        throw InputError("give the pruning: --uniform S, --sparsity LAYER=S,…, --sensitivity or --channels R (--list names the layers and groups)");
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
    if (!r.channel_groups.empty()) {
        std::cout << "top-1 pruned without sorting " << formatFixed(r.unsorted_top1, 2) << " %, after sorting " << formatFixed(r.sorted_top1, 2)
                  << " % (kept: " << (r.sorted ? "sorted" : "unsorted") << ")\n";
        std::cout << "channels    ";
        for (const ChannelGroup& g : r.channel_groups) std::cout << " " << g.name << " " << g.channels << "→" << g.kept;
        std::cout << "\n";
        auto row = [](const char* what, double before, double after, int decimals) {
            std::cout << "  " << what << "  " << formatFixed(before, decimals) << " → " << formatFixed(after, decimals) << "  (×"
                      << formatFixed(after > 0 ? before / after : 0, 2) << ")\n";
        };
        std::cout << "                  original → pruned\n";
        row("MACs (M)       ", static_cast<double>(r.original.macs) / 1e6, static_cast<double>(r.narrowed.macs) / 1e6, 2);
        row("params (k)     ", static_cast<double>(r.original.params) / 1e3, static_cast<double>(r.narrowed.params) / 1e3, 1);
        row("peak (KB)      ", static_cast<double>(r.original.peak_bytes) / 1e3, static_cast<double>(r.narrowed.peak_bytes) / 1e3, 1);
        row("latency (ms)   ", r.original.latency.ms, r.narrowed.latency.ms, 3);
        std::cout << "  latency: " << r.narrowed.latency.engine << ", one image, median of " << r.narrowed.latency.runs << " runs\n";
    }
    for (const SubnetFineTuneEpoch& e : r.finetune)
        std::cout << "fine-tuning  epoch " << e.epoch << ": loss " << formatFixed(e.loss, 4) << ", top-1 " << formatFixed(e.top1, 2)
                  << " % (" << formatFixed(e.seconds, 1) << " s, " << r.finetune_data << ")\n";
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
