// tinyscope prune  (Lab 1's fine-grained pruning on a design-space subnet: issue 50, docs/COMPRESSION.md)
#include "cli/Cli.h"
#include "cli/CliArgs.h"
#include "cli/EvaluationArgs.h"
#include "cli/StopSignal.h"

#include "Error.h"
#include "io/Text.h"
#include "nn/compress/PruningJob.h"
#include "nn/compress/WeightQuantizationJob.h"

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

// The training options after pruning (--finetune-*) and of quantization-aware training (--qat-*).
std::set<std::string> trainingOptions(const std::string& prefix)
{
    return {prefix + "-epochs", prefix + "-images", prefix + "-batch", prefix + "-lr", prefix + "-schedule", prefix + "-data"};
}

std::string trainingHelp(const std::string& prefix, const std::string& what, const std::string& decay)
{
    const std::string p = "--" + prefix;
    return "  " + p + "-epochs E" + std::string(14 - prefix.size(), ' ') + what + " (default 0: none): SGD lr " + p + "-lr (0.01),\n"
           "                        momentum 0.9, weight decay " + decay + ", batch " + p + "-batch (64), random crop (pad 2) + flip,\n"
           "                        on " + p + "-data (default: the space's own training data, fashion-mnist:fit), " + p + "-images N\n"
           "                        per epoch (default all); top-1 after each epoch\n"
           "  " + p + "-schedule cosine|lab  cosine over the run (default) or the lab's CosineAnnealingLR(T_max=epochs)\n"
           "                        stepped per batch\n";
}

SubnetFineTuneOptions trainingFromArgs(const CliArgs& a, const std::string& prefix, SubnetFineTuneOptions o)
{
    o.epochs = a.intValue(prefix + "-epochs", 0, 0, 1000);
    o.images = static_cast<std::size_t>(a.int64Value(prefix + "-images", 0, 1, kMaxImages));
    o.batch = a.intValue(prefix + "-batch", 64, 1, kMaxBatch);
    o.lr = a.doubleValue(prefix + "-lr", 0.01, 1e-9, 10);
    o.seed = static_cast<std::uint64_t>(a.int64Value("seed", 0, 0, kMaxSeed));
    const std::string schedule = a.value(prefix + "-schedule", "cosine");
    if (schedule != "cosine" && schedule != "lab")
        throw InputError("--" + prefix + "-schedule '" + escapedForMessage(schedule) + "': give cosine or lab");
    o.schedule = schedule == "lab" ? LrSchedule::Lab : LrSchedule::Cosine;
    return o;
}

// prune's and quantize --bits' options: eval's less its data type (they measure float weights), the
// training options under `prefix`, and the command's own.
CliArgs compressionArgs(const Args& argv, const std::string& prefix, std::initializer_list<std::string> own, std::initializer_list<std::string> ownFlags)
{
    std::set<std::string> valued = kEvaluationValued, flags = kEvaluationFlags;
    valued.erase("dtype");
    valued.erase("int8-calib-images");
    valued.insert(own);
    const std::set<std::string> training = trainingOptions(prefix);
    valued.insert(training.begin(), training.end());
    flags.insert(ownFlags);
    return CliArgs(argv, valued, flags);
}

// Their usage lines after the command's own: the evaluation's options and the training ones, at `indent`.
std::string compressionUsage(std::size_t indent, const std::string& prefix)
{
    const std::string pad(indent, ' '), p = "--" + prefix;
    return pad + "[--data DATASET] [--split 0|1] [--images N] [--calib-data DATASET] [--calib-images N]\n" + pad +
           "[--calib-batch B] [--seed S] [--no-calib | --lab-calib] [--batch B] [--threads T]\n" + pad + "[--engine onednn|libtorch] [" + p +
           "-epochs E [" + p + "-lr LR] [" + p + "-batch B]\n" + pad + "[" + p + "-images N] [" + p + "-schedule cosine|lab] [" + p +
           "-data DATASET]]\n";
}

// Progress on stderr when it is a terminal; Ctrl-C cancels.
JobControl terminalJob()
{
    JobControl job;
    job.cancel = cancelOnSignals();
    if (isatty(2))
        job.progress = [](std::size_t done, std::size_t total, const std::string& stage) {
            std::fprintf(stderr, "\r[%zu/%zu] %s          ", done, total, stage.c_str());
        };
    return job;
}

void clearProgress()
{
    if (isatty(2)) std::fprintf(stderr, "\r%70s\r", "");
}

int cmdPrune(const Args& argv)
{
    const CliArgs a = compressionArgs(argv, "finetune",
                                      {"uniform", "sparsity", "scan", "target-size", "out", "channels", "channel-ratio", "latency-runs"},
                                      {"sensitivity", "list", "sort"});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope prune [--supernet CKPT --space NAME|FILE] [--config CFG.json|min|max] [--resolution R]\n"
                     "                       (--uniform S | --sparsity LAYER=S,… | --sensitivity [--scan 0.4,0.5,…] [--target-size F] |\n"
                     "                        --channels R [--channel-ratio GROUP=R,…] [--sort] [--latency-runs N] | --list)\n"
                  << compressionUsage(23, "finetune")
                  << "                       [--out DIR] [--json]\n"
                     "  Lab 1's pruning of a subnet. The subnet is extracted, BatchNorm re-calibrated and measured as\n"
                     "  `tinyscope eval` does (same options and defaults), pruned, then measured again on the same images.\n"
                     "  Fine-grained: weights with more than one dimension (convs, SE, the classifier) keep |w| above the\n"
                     "  round(numel × S)-th smallest, on the raw conv weights (docs/COMPRESSION.md).\n"
                     "  --uniform S           every layer at sparsity S (0–1); --sparsity LAYER=S,… per layer (the rest: --uniform, else 0)\n"
                     "  --sensitivity         the lab's scan: each layer alone at each --scan sparsity (default 0.4,0.5,…,0.9),\n"
                     "                        the others dense; top-1 per point (progress on stderr; Ctrl-C stops: the finished\n"
                     "                        layers' curves are printed, nothing pruned or written, exit 4)\n"
                     "  --target-size F       with the scan: a sparsity per layer from its curves (one accuracy budget for all\n"
                     "                        layers, the smallest that works) so that the non-zeros are at most F of the dense\n"
                     "                        size; exit 3 naming the smallest size the scan's sparsities reach when they cannot\n"
                     "  --channels R          channel pruning instead: every channel group (each block's expanded channels, the stem's\n"
                     "                        outputs, the feature mix's outputs) keeps round(channels × (1 − R)); --channel-ratio\n"
                     "                        GROUP=R,… per group. Top-1 is measured with and without sorting the channels by importance\n"
                     "                        first; --sort keeps the sorted network (fine-tuned, written). MACs, parameters, peak memory\n"
                     "                        and latency (median of --latency-runs single-image runs, default 50) before and after\n"
                     "  --list                the prunable layers (name, shape, parameters), then the channel groups (name, channels)\n"
                  << trainingHelp("finetune", "fine-tune after pruning, the masks re-applied after every step", "1e-4") <<
                     "  --out DIR             subnet.pth (the pruned subnet, the lab's key names), subnet.json, space.json, pruning.json:\n"
                     "                        what quantize / export / deploy / finetune take as --subnet DIR\n"
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
    rq.target_size = a.doubleValue("target-size", 0, 0.001, 1);
    rq.out = a.value("out");
    rq.finetune = trainingFromArgs(a, "finetune", {});
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
    const PruneResult r = runPruning(rq, terminalJob());
    clearProgress();
    // Ctrl-C during the scan: the finished layers' curves, then exit 4 as any cancelled command.
    const auto end = [&r] {
        if (!r.scan_cancelled) return 0;
        std::cerr << "tinyscope prune: cancelled after " << r.sensitivity.size() << " of " << r.scan_layers
                  << " layers of the scan (their curves are above); nothing pruned or written\n";
        return 4;
    };
    if (a.flag("json")) {
        std::cout << r.toJson().dump(2) << "\n";
        return end();
    }
    std::cout << "data         " << r.data << ", " << r.images << " images\n"
              << "dense top-1  " << formatFixed(r.dense_top1, 2) << " %\n";
    if (r.pruned) std::cout << "pruned top-1 " << formatFixed(r.pruned_top1, 2) << " %\n";
    if (r.target_size > 0) {
        std::cout << "chosen       every layer's largest scanned sparsity within " << formatFixed(r.choice_drop, 2)
                  << " points of the dense top-1 (target " << formatFixed(100 * r.target_size, 1) << " % of the dense size):";
        for (const PrunedLayer& l : r.layers) std::cout << (&l == &r.layers.front() ? " " : ",") << l.name << "=" << formatFixed(l.sparsity, 1);
        std::cout << "\n";
    }
    if (!r.channel_groups.empty()) {
        std::cout << "top-1 pruned without sorting " << formatFixed(r.unsorted_top1, 2) << " %, after sorting " << formatFixed(r.sorted_top1, 2)
                  << " % (kept: " << (r.sorted ? "sorted" : "unsorted") << ")\n";
        if (r.recalibrated_top1 >= 0)
            std::cout << "top-1 after BatchNorm re-calibration " << formatFixed(r.recalibrated_top1, 2)
                      << " % (measured only: the network kept has the statistics it had)\n";
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
    if (rq.sensitivity) std::cout << "scan         " << r.sensitivity.size() << " layers × " << rq.scan.size() << (rq.scan.size() == 1 ? " sparsity in " : " sparsities in ") << formatFixed(r.scan_seconds, 1) << " s\n";
    for (const SensitivityCurve& c : r.sensitivity) {
        std::cout << c.layer << " (" << c.params << ")";
        for (std::size_t i = 0; i < c.sparsity.size(); ++i) std::cout << "  " << formatFixed(c.sparsity[i], 1) << ": " << formatFixed(c.top1[i], 2);
        std::cout << "\n";
    }
    if (!rq.out.empty() && !r.scan_cancelled) std::cout << "wrote        " << rq.out << "/subnet.pth, subnet.json, space.json, pruning.json\n";
    return end();
}

}  // namespace

bool wantsBits(const Args& args)
{
    for (const std::string& s : args)
        if (s == "--bits" || s.rfind("--bits=", 0) == 0) return true;
    return false;
}

int quantizeBits(const Args& argv)
{
    const CliArgs a = compressionArgs(argv, "qat", {"bits", "method", "kmeans-seed"}, {});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope quantize --bits N,… [--method linear|kmeans,…] [--kmeans-seed S]\n"
                     "                          [--supernet CKPT --space NAME|FILE] [--config CFG.json|min|max] [--resolution R]\n"
                  << compressionUsage(26, "qat") << "                          [--json]\n"
                     "  Lab 2's n-bit weight quantization of a subnet (docs/COMPRESSION.md): every weight with more than one\n"
                     "  dimension replaced by its quantized values, top-1 measured with float arithmetic on them. The subnet is\n"
                     "  extracted, BatchNorm re-calibrated and measured as `tinyscope eval` does (same options and defaults).\n"
                     "  --bits N,…            bit widths, 1–8 (e.g. 8,4,2)\n"
                     "  --method M,…          linear (per output channel, symmetric) and/or kmeans (2^N centroids per tensor,\n"
                     "                        k-means++ seeded by --kmeans-seed, default 0); default both\n"
                  << trainingHelp("qat", "quantization-aware training after each quantization (k-means: the lab's\n"
                                         "                        update_codebook after every step; linear: float shadow weights)", "0")
                  << "  --json                per method and width: top-1 before / after QAT, sizes (the lab's params × N and ours),\n"
                     "                        each tensor's distinct values\n";
        return 0;
    }
    WeightQuantRequest rq;
    rq.bits.clear();
    for (const std::string& b : listOption(a, "bits")) {
        const double v = listNumber("bits", b, b);
        if (v != static_cast<int>(v) || v < 1 || v > 8) throw InputError("--bits " + escapedForMessage(b) + ": a bit width is a whole number in 1–8");
        rq.bits.push_back(static_cast<int>(v));
    }
    if (a.has("method")) {
        rq.methods.clear();
        for (const std::string& m : listOption(a, "method")) {
            if (m != "linear" && m != "kmeans") throw InputError("--method '" + escapedForMessage(m) + "': give linear or kmeans");
            rq.methods.push_back(m == "kmeans" ? WeightQuantMethod::KMeans : WeightQuantMethod::Linear);
        }
    }
    rq.kmeans_seed = static_cast<std::uint64_t>(a.int64Value("kmeans-seed", 0, 0, kMaxSeed));
    rq.qat = trainingFromArgs(a, "qat", rq.qat);
    rq.qat_data = a.value("qat-data");
    rq.evaluation = evaluationFromArgs(a);
    const WeightQuantResult r = runWeightQuantization(rq, terminalJob());
    clearProgress();
    if (a.flag("json")) {
        std::cout << r.toJson().dump(2) << "\n";
        return 0;
    }
    auto kib = [](std::int64_t bits) { return formatFixed(static_cast<double>(bits) / 8192.0, 1) + " KiB"; };
    std::cout << "data        " << r.data << ", " << r.images << " images\n"
              << "float       top-1 " << formatFixed(r.float_top1, 2) << " %, " << kib(r.float_bits) << " (" << r.params << " parameters × 32)\n"
              << "method  bits  top-1     after QAT  size (lab: params × bits)  ours: weights + rest at 32 + codebooks/scales\n";
    for (const WeightQuantRun& run : r.runs)
        std::cout << (run.method == WeightQuantMethod::KMeans ? "kmeans  " : "linear  ") << run.bits << "     " << formatFixed(run.top1, 2)
                  << " %   " << (run.qat.empty() ? std::string("   —    ") : formatFixed(run.qat_top1, 2) + " %") << "  " << kib(run.lab_size_bits)
                  << "                  " << kib(run.weight_bits) << " + " << kib(run.other_bits) << " + " << kib(run.overhead_bits) << "\n";
    if (!r.train_data.empty()) std::cout << "QAT on      " << r.train_data << "\n";
    return 0;
}

std::vector<Command> compressCommands()
{
    return {
        {"prune", "Lab 1's fine-grained pruning of a subnet: per-layer sparsity, sensitivity scan, sparse size", cmdPrune},
    };
}

}  // namespace tinyscope::cli
