// tinyscope finetune | finetune-table  (on-device fine-tuning, simulated: issue 20, docs/FINETUNING.md)
#include "cli/Cli.h"
#include "cli/CliArgs.h"
#include "cli/ModelArgs.h"
#include "cli/StopSignal.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/JsonFile.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "nn/finetune/ContributionAnalysis.h"
#include "nn/finetune/FineTuneJob.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"
#include "graph/SchemeEdit.h"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

namespace tinyscope::cli {

namespace {

const char* kRecipeOptions =
    "  --data D              fashion-mnist (Debian's: train split to train, test split for top-1, 128x128 RGB)\n"
    "                        or a folder of class sub-folders (its train/ and test/ or val/, else every 5th image held out)\n"
    "  --epochs E            epochs (default 50, tiny-training's); warm-up 5 epochs, at most a tenth of the run\n"
    "  --batch B             batch size (default 64)\n"
    "  --lr L                learning rate per batch 256 (default 0.075 with QAS, 0.1 with --no-qas: tiny-training's)\n"
    "  --no-qas              plain SGD (no quantization-aware scaling)\n"
    "  --head-scale S        the new classifier's int8 output scale (default 1: the graph's loss on the int8 logits\n"
    "                        is the float cross-entropy; 0 keeps the model's head scale)\n"
    "  --resolution R        input size (default: the model's, 128 for mcunet-5fps; must be the model's)\n"
    "  --crop-scale S        random-resized-crop least area fraction (default 0.08); --jitter J colour jitter (0.4);\n"
    "  --no-flip             no horizontal flip; --no-augment: plain resize (crop 1, jitter 0, no flip)\n"
    "  --train-images N      the first N training images after a seeded shuffle (default all)\n"
    "  --test-images N       the first N test images (default all)\n"
    "  --seed S              shuffling, augmentation and the new head (default 0)\n";

FineTuneRecipe recipeFromArgs(const CliArgs& a)
{
    FineTuneRecipe r;
    r.epochs = a.intValue("epochs", r.epochs, 1, 10000);
    r.batch = a.intValue("batch", r.batch, 1, 4096);
    r.qas = !a.flag("no-qas");
    r.bs256_lr = a.doubleValue("lr", r.qas ? 0.075 : 0.1, 0, 1e6);
    r.head_scale = a.doubleValue("head-scale", r.head_scale, 0, 1e6);
    r.resolution = a.intValue("resolution", r.resolution, 8, 1024);   // absent: 0, the model's
    r.crop_scale_min = a.doubleValue("crop-scale", r.crop_scale_min, 0.001, 1);
    r.jitter = a.doubleValue("jitter", r.jitter, 0, 1);
    r.flip = !a.flag("no-flip");
    if (a.flag("no-augment")) {
        r.crop_scale_min = 1;
        r.jitter = 0;
        r.flip = false;
    }
    r.train_images = static_cast<std::size_t>(a.int64Value("train-images", 0, 0, kMaxImages));
    r.test_images = static_cast<std::size_t>(a.int64Value("test-images", 0, 0, kMaxImages));
    r.seed = static_cast<std::uint64_t>(a.int64Value("seed", 0, 0, kMaxSeed));
    r.threads = a.intValue("threads", 2, 1, kMaxThreads);
    return r;
}

const std::set<std::string> kValued = withModelOptions({"scheme", "data", "epochs", "head-scale", "budget", "analysis-epochs", "analysis-images",
                                                       "analysis-test-images", "window", "batch", "lr", "resolution", "crop-scale", "jitter",
                                                       "train-images", "test-images", "out"});
const std::set<std::string> kFlags{"no-qas", "no-flip", "no-augment", "json", "help"};

FineTuneRequest requestFromArgs(const CliArgs& a)
{
    FineTuneRequest rq;
    rq.model = modelFromArgs(a);
    rq.quantize = quantizeFromArgs(a);
    rq.data = a.value("data", rq.data);
    rq.recipe = recipeFromArgs(a);
    rq.out = a.value("out");
    if (a.has("out")) requireWritableFolder(rq.out, "--out");   // before any work
    return rq;
}

// The scheme named on the command line (a file, a published name or a pattern), read for the model.
void useScheme(FineTuneRequest& rq, const std::string& spec, const Network& net)
{
    rq.scheme = loadScheme(spec, &net);
    rq.scheme_name = spec;
}

void printEpoch(const FineTuneEpoch& e, int epochs)
{
    std::cerr << "epoch " << e.epoch << "/" << epochs << "  loss " << formatFixed(e.loss, 4) << "  top-1 " << formatFixed(e.top1, 2)
              << " %  lr " << formatFixed(e.lr, 5) << "  " << formatFixed(e.seconds, 1) << " s\n";
}

JobControl progressLine()
{
    JobControl job;
    job.cancel = cancelOnSignals();   // Ctrl-C: checkpoint where the run is, exit 4
    job.progress = [last = std::string()](std::size_t done, std::size_t total, const std::string& stage) mutable {
        if (stage == last && done != total && done % 50 != 0) return;
        last = stage;
        std::cerr << "\r" << stage << ": " << done << "/" << total << "      " << (done == total ? "\n" : "") << std::flush;
    };
    return job;
}

// --budget: the contribution analysis, then the knapsack; the found scheme goes into `rq` (named by
// its file). The model is prepared once (rq.prepared) for the analysis's runs and the final one.
void searchScheme(const CliArgs& a, FineTuneRequest& rq)
{
    const std::int64_t budget = static_cast<std::int64_t>(std::floor(a.doubleValue("budget", 0, 0, 1e9) * 1024.0));
    rq.prepared = std::make_shared<const PreparedModel>(prepareModel(rq.model, rq.quantize));
    const Network& net = rq.prepared->network;
    bestSchemeUnderBudget(net, {}, budget);   // an infeasible budget fails before any run, with the least a scheme needs
    ContributionOptions o;
    o.base = rq;
    o.base.recipe = ContributionOptions::shortRecipe(rq.recipe);
    o.base.recipe.epochs = a.intValue("analysis-epochs", 1, 1, 1000);
    o.base.recipe.train_images = static_cast<std::size_t>(a.int64Value("analysis-images", 2000, 1, kMaxImages));
    o.base.recipe.test_images = static_cast<std::size_t>(a.int64Value("analysis-test-images", 1000, 1, kMaxImages));
    o.window = a.intValue("window", o.window, 1, 100000);
    o.out = rq.out + "/contributions";
    const ContributionResult c = analyseContributions(o, progressLine(), [](const ContributionRun& r, std::size_t done, std::size_t total) {
        std::cerr << "[" << done << "/" << total << "] " << r.what << ": top-1 " << formatFixed(r.top1, 2) << " %, gain "
                  << formatFixed(r.gain, 2) << "\n";
    });
    writeJsonFile(rq.out + "/contributions.json", c.toJson());
    const KnapsackChoice best = bestSchemeUnderBudget(net, c.contributions, budget);
    const std::string file = rq.out + "/found-scheme.json";
    best.scheme.saveFile(file);
    std::cerr << "found under " << kilobytesText(budget) << ": " << describeScheme(best.resolved, net) << " — extra " << kilobytesText(best.extra_bytes)
              << ", summed gain " << formatFixed(best.gain, 2) << " points -> " << file << "\n";
    rq.scheme = best.scheme;
    rq.scheme_name = file;
}

int cmdFineTune(const Args& argv)
{
    CliArgs a(argv, kValued, kFlags);
    if (a.flag("help")) {
        std::cout << "usage: tinyscope finetune (--model NAME --params FILE | --supernet CKPT --config CFG | --subnet DIR) --scheme S --data D\n"
                     "                          [--epochs E] [--lr L] [--no-qas] [--out DIR] [--json]\n"
                     "  Fine-tunes a quantized model on device, simulated: the int8 forward exactly as the training graph\n"
                     "  computes it, a new classifier for the task's classes, the sparse-update scheme's parameters trained\n"
                     "  by SGD (with QAS unless --no-qas); top-1 on the test split after every epoch; the scheme's memory\n"
                     "  from the ledger. With --out DIR the run checkpoints every epoch (and on Ctrl-C / cancel) and a\n"
                     "  second call with the same arguments resumes it (Ctrl-C checkpoints where the run is and exits 4);\n"
                     "  a checkpoint of another run (the model, scheme, data or recipe differ in content) is refused (exit 2).\n"
                     "  DIR gets finetuned-params.pkl, scale.json, result.json.\n"
                  << kModelOptions
                  << "  --scheme S            MODEL/49kb … (published), bias-only[:N], last:K, full, classifier, or a\n"
                     "                        tiny-training backward_config .json/.yaml (default bias-only)\n"
                     "  --budget KB           instead of --scheme: the scheme with the largest measured gain whose extra memory\n"
                     "                        fits KB (contribution analysis: short runs of bias tails and single weight updates\n"
                     "                        in DIR/contributions, then an exact knapsack; exit 3 with the least a scheme needs);\n"
                     "                        the found scheme is DIR/found-scheme.json, its fine-tuning run DIR/final\n"
                     "  --analysis-epochs E   short runs' epochs (default 1); --analysis-images N their training images (2000);\n"
                     "  --analysis-test-images N  their test images (1000); --window W weight candidates among the last W convs (20)\n"
                  << kRecipeOptions;
        return 0;
    }
    FineTuneRequest rq = requestFromArgs(a);
    if (a.has("budget")) {
        if (a.has("scheme")) throw InputError("give --scheme or --budget, not both (--budget searches the scheme)");
        if (rq.out.empty()) throw InputError("--budget runs a contribution analysis of many short runs: give --out DIR (resumable)");
        searchScheme(a, rq);
        rq.out += "/final";
    } else if (a.has("scheme")) {
        useScheme(rq, a.value("scheme"), rq.model.network());
    }
    const FineTuneResult r = fineTune(rq, progressLine(), [&](const FineTuneEpoch& e) { printEpoch(e, rq.recipe.epochs); });
    if (a.flag("json")) {
        std::cout << r.toJson().dump(2) << "\n";
        return 0;
    }
    std::cout << r.model << " on " << r.data << ", " << r.classes << " classes\n"
              << "  scheme       " << r.scheme << " (" << r.scheme_text << "), " << r.updated_params << " tensors, "
              << groupThousands(r.updated_elements) << " elements updated\n"
              << "  memory       extra " << kilobytesText(r.extra_bytes) << " + inference " << kilobytesText(r.inference_peak_bytes) << " = " << kilobytesText(r.total_bytes)
              << " (training peak " << kilobytesText(r.peak_bytes) << ")\n"
              << "  recipe       " << r.recipe.epochs << " epochs, batch " << r.recipe.batch << ", lr " << r.recipe.bs256_lr << " per 256, "
              << (r.recipe.qas ? "QAS" : "no QAS") << ", " << r.train_images << " training / " << r.test_images << " test images\n"
              << "  top-1        " << formatFixed(r.initial_top1, 2) << " % (new head) -> " << formatFixed(r.final_top1, 2) << " %\n"
              << "  time         " << formatFixed(r.seconds, 1) << " s" << (r.resumed ? " (resumed)" : "") << "\n";
    return 0;
}

// A folder name for a scheme run: its last path component, letters, digits and '-' kept
// ("mcunet-5fps/49kb" -> "49kb", "runs/a.json" -> "a_json"), "-noqas" appended without QAS.
std::string runFolder(const std::string& scheme, bool qas)
{
    std::string s;
    for (char c : std::filesystem::path(scheme).filename().string()) s += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
    return s + (qas ? "" : "-noqas");
}

int cmdFineTuneTable(const Args& argv)
{
    // finetune's options but its scheme choice (--scheme, or --budget with its analysis): --schemes instead.
    std::set<std::string> valued = kValued;
    for (const char* only : {"scheme", "budget", "window", "analysis-epochs", "analysis-images", "analysis-test-images"}) valued.erase(only);
    valued.insert({"schemes", "no-qas-for"});
    CliArgs a(argv, valued, kFlags);
    if (a.flag("help")) {
        std::cout << "usage: tinyscope finetune-table (--model NAME --params FILE | --supernet CKPT --config CFG | --subnet DIR) --schemes S1,S2,…\n"
                     "                                [--no-qas-for S1,…] --data D --out DIR [--epochs E] [--json]\n"
                     "  The accuracy-vs-memory table: one finetune run per scheme (and per --no-qas-for scheme without QAS),\n"
                     "  each in DIR/<scheme>[-noqas] and resumable; a finished run is read back, not repeated. Writes\n"
                     "  DIR/table.json and DIR/table.md (scheme, QAS, extra / total memory, final top-1, time).\n"
                  << kModelOptions << kRecipeOptions
                  << "  --lr L                per 256 for the QAS runs (default 0.075); the no-QAS runs use 0.1\n";
        return 0;
    }
    if (!a.has("out")) throw InputError("give the output folder: --out DIR");
    if (!a.has("schemes")) throw InputError("give the schemes: --schemes S1,S2,… (e.g. bias-only,mcunet-5fps/49kb,full)");
    // Each run has its own folder: a scheme given twice, or two schemes with one folder name, is refused.
    std::vector<std::pair<std::string, bool>> runs;
    std::map<std::string, std::string> byFolder;
    for (const auto& [option, qas] : {std::pair<const char*, bool>{"schemes", true}, {"no-qas-for", false}})
        for (const std::string& scheme : listOption(a, option)) {
            const auto [at, isNew] = byFolder.emplace(runFolder(scheme, qas), scheme);
            if (!isNew)
                throw InputError(std::string("--") + option + ": " +
                                 (at->second == scheme ? "'" + escapedForMessage(scheme) + "' is given twice"
                                                       : "'" + escapedForMessage(at->second) + "' and '" + escapedForMessage(scheme) +
                                                             "' would share the run folder " + escapedForMessage(at->first)));
            runs.emplace_back(scheme, qas);
        }
    const FineTuneRequest base = requestFromArgs(a);
    const Network net = base.model.network();
    const std::string out = base.out;
    Json rows = Json::array();
    std::ostringstream md;
    md << "| scheme | QAS | extra memory | inference peak + extra | top-1 | epochs | time |\n|---|---|---:|---:|---:|---:|---:|\n";
    for (const auto& [scheme, qas] : runs) {
        FineTuneRequest rq = base;
        useScheme(rq, scheme, net);
        rq.recipe.qas = qas;
        if (!qas && !a.has("lr")) rq.recipe.bs256_lr = 0.1;
        rq.out = out + "/" + runFolder(scheme, qas);
        std::cerr << "== " << scheme << (qas ? "" : " (no QAS)") << " -> " << rq.out << "\n";
        const FineTuneResult r = fineTune(rq, progressLine(), [&](const FineTuneEpoch& e) { printEpoch(e, rq.recipe.epochs); });
        Json row = r.toJson();
        rows.push_back(row);
        double total = 0;
        for (const FineTuneEpoch& e : r.epochs) total += e.seconds;
        md << "| " << scheme << " | " << (qas ? "yes" : "no") << " | " << kilobytesText(r.extra_bytes) << " | " << kilobytesText(r.total_bytes) << " | "
           << formatFixed(r.final_top1, 2) << " % | " << r.epochs.size() << " | " << formatFixed(total / 60.0, 1) << " min |\n";
        writeJsonFile(out + "/table.json", Json{{"runs", rows}});
        writeFileAtomic(out + "/table.md", md.str());
    }
    if (a.flag("json")) std::cout << Json{{"runs", rows}}.dump(2) << "\n";
    else std::cout << md.str();
    return 0;
}

}  // namespace

std::vector<Command> fineTuneCommands()
{
    return {
        {"finetune", "on-device fine-tuning, simulated: a sparse-update scheme trained with QAS, top-1 per epoch", cmdFineTune},
        {"finetune-table", "accuracy vs memory: one resumable finetune run per scheme, as a table", cmdFineTuneTable},
    };
}

}  // namespace tinyscope::cli
