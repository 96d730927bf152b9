// tinyscope train-predictor | predict | search
#include "cli/Cli.h"
#include "cli/CliArgs.h"
#include "cli/ConfigFiles.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "io/JsonFile.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "io/DataPaths.h"
#include "nn/predictor/AccuracyPredictor.h"
#include "nn/predictor/PredictorCheck.h"
#include "nn/TorchRuntime.h"
#include "nn/accuracy/WinnerMeasurement.h"
#include "space/ArchSampler.h"
#include "search/ArchitectureSearch.h"
#include "search/Feasibility.h"
#include "search/SramRuntime.h"
#include "search/TinyEngineTrainingLimit.h"
#include "search/TrainingMemoryLimit.h"
#include "tinyengine/BoardProfile.h"
#include "space/SpacePresets.h"
#include "viz/ArchDiagram.h"
#include "viz/GraphvizRenderer.h"
#include "workspace/ShippedModels.h"
#include "space/SpaceTransfer.h"
#include "cli/TextColumns.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <unistd.h>

namespace tinyscope::cli {

namespace {

AccuracyPredictor loadPredictor(const CliArgs& a, const DesignSpace& space)
{
    std::string path = a.value("predictor");
    if (path.empty()) {
        path = shippedPredictorPath(space.name);
        if (path.empty())
            throw InputError("no predictor is shipped for space '" + space.name +
                             "': train one with `tinyscope train-predictor --data DIR --out FILE` and pass --predictor FILE");
    }
    return AccuracyPredictor::load(path, space);
}

void printEpoch(std::ostream& os, const EpochRecord& e, int member, int members)
{
    char buf[200];
    std::snprintf(buf, sizeof buf, "%sepoch %3d  train L1 %.4f  val MAE %.4f  RMSE %.4f  r %.4f  tau %.4f  %.1f s\n",
                  members > 1 ? ("member " + std::to_string(member + 1) + "  ").c_str() : "", e.epoch, e.train_loss,
                  e.validation.mae, e.validation.rmse, e.validation.pearson, e.validation.kendall_tau, e.seconds);
    os << buf;
}

int cmdTrainPredictor(const Args& argv)
{
    CliArgs a(argv, {"data", "out", "space", "recipe", "epochs", "lr", "batch-size", "schedule", "seed", "validation", "ensemble", "threads"},
              {"json", "quiet", "help"});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope train-predictor --data DIR --out FILE.bin [--recipe default|lab] [--epochs N]\n"
                     "           [--lr X] [--batch-size N] [--schedule constant|cosine] [--seed S] [--validation F]\n"
                     "           [--ensemble K] [--threads T] [--space NAME|FILE] [--json] [--quiet]\n"
                     "  --data DIR     the lab's accuracy dataset: DIR/acc.dict or DIR/src/*_acc_table.json (or one file)\n"
                     "  --out FILE     writes FILE.bin (weights) and FILE.json (card: space, metrics, recipe, data)\n"
                     "  --recipe       default: cosine lr 2e-3, batch 128, 10 epochs; lab: Adam 1e-3 constant, batch 256,\n"
                     "                 10 epochs (MIT 6.5940 Lab 3). Options after --recipe override single fields.\n"
                     "  --validation F fraction held out for the metrics (0.2 = the lab's 40,000 / 10,000)\n"
                     "  Progress goes to stderr; --json prints the card on stdout when done.\n";
        return 0;
    }
    if (!a.has("data")) throw InputError("train-predictor needs --data DIR (the accuracy dataset)");
    if (!a.has("out")) throw InputError("train-predictor needs --out FILE (where to write the predictor)");
    {
        const auto [bin, card] = predictorFilePaths(a.value("out"));
        requireWritableFile(bin, "--out");
        requireWritableFile(card, "--out");
    }
    DesignSpace space = loadSpace(a.value("space", defaultSpaceName()));
    PredictorRecipe r = PredictorRecipe::named(a.value("recipe", "default"));
    r.epochs = a.intValue("epochs", r.epochs, 1, 100000);
    r.learning_rate = a.doubleValue("lr", r.learning_rate, 1e-12, 10);
    r.batch_size = a.intValue("batch-size", r.batch_size, 1, 1000000);
    r.schedule = a.value("schedule", r.schedule);
    r.seed = static_cast<std::uint64_t>(a.int64Value("seed", static_cast<long long>(r.seed), 0, kMaxSeed));
    r.validation_fraction = a.doubleValue("validation", r.validation_fraction, 0, 0.99);
    r.ensemble = a.intValue("ensemble", r.ensemble, 1, 64);
    r.threads = a.intValue("threads", r.threads, 1, kMaxThreads);
    if (a.has("lr") || a.has("batch-size") || a.has("schedule") || a.has("ensemble") || a.has("epochs"))
        r.name += "+custom";
    r.validate();

    AccuracyDataset data = AccuracyDataset::load(a.value("data"), space);
    const bool quiet = a.flag("quiet");
    if (!quiet)
        std::cerr << "training on " << groupThousands(static_cast<std::int64_t>(data.size())) << " pairs from "
                  << data.origin() << " (" << data.files().size() << " files), recipe " << r.name << "\n";
    AccuracyPredictor pred(space);
    TrainingCallbacks cb;
    cb.onEpoch = [&](const EpochRecord& e, int member) {
        if (!quiet) printEpoch(std::cerr, e, member, r.ensemble);
    };
    pred.train(data, r, cb);
    pred.save(a.value("out"));
    const PredictorCard& c = pred.card();
    if (a.flag("json")) {
        Json j = toJson(c);
        j["path"] = pred.path();
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::printf("wrote %s (+ card .json)\n", pred.path().c_str());
    std::printf("validation (%zu pairs): MAE %.4f  RMSE %.4f points  Pearson %.4f  Kendall tau %.4f  (%.1f s)\n",
                c.validation.count, c.validation.mae, c.validation.rmse, c.validation.pearson, c.validation.kendall_tau,
                c.training_seconds);
    return 0;
}

std::unique_ptr<SupernetAccuracyOracle> measuringOracleFromArgs(const CliArgs& a, const DesignSpace& searchSpace);

// Measuring progress on a terminal's stderr ("\r<what>: subnet 3/40 … 120/200"), wiped when done.
class MeasuringProgress {
public:
    MeasuringProgress(SupernetAccuracyOracle& oracle, std::string what) : tty_(isatty(2))
    {
        JobControl job;
        job.progress = [tty = tty_, what = std::move(what)](std::size_t done, std::size_t total, const std::string& stage) {
            if (tty) std::fprintf(stderr, "\r%s: %s %zu/%zu   ", what.c_str(), stage.c_str(), done, total);
        };
        oracle.setJobControl(job);
    }
    ~MeasuringProgress()
    {
        if (tty_) std::fprintf(stderr, "\r%70s\r", "");
    }

private:
    bool tty_;
};

int cmdPredict(const Args& argv)
{
    CliArgs a(argv, {"predictor", "space", "random", "seed", "supernet", "supernet-space", "data", "calib-data", "images", "calib-images", "engine", "dtype",
                     "int8-calib-images", "threads"},
              {"json", "help", "measure"});
    if (a.flag("help") || (a.positionals().empty() && !a.has("random"))) {
        std::cout << "usage: tinyscope predict [--predictor FILE] [--space NAME|FILE] (CONFIG.json... | --random N [--seed S]) [--json]\n"
                     "                         [--measure [--supernet CKPT] [--supernet-space NAME|FILE] [--data DATASET]\n"
                     "                                    [--calib-data DATASET] [--images N] [--calib-images N] [--threads T] [--engine onednn|libtorch]\n"
                     "                                    [--dtype fp32|bf16|int8 [--int8-calib-images N]]]\n"
                     "  CONFIG.json holds a subnet config or an array of them; all are predicted in one batch.\n"
                     "  --random N  N subnets drawn like the lab's random_sample_arch, --seed S as random.seed(S) (default 0;\n"
                     "              the shipped accuracy datasets used seed 0: take another seed for subnets they never saw)\n"
                     "  Without --predictor the shipped one for the space is used (models/predictors/<space>.bin).\n"
                     "  --measure   also measure every subnet on a supernet (defaults as for search --measure: the supernet\n"
                     "              shipped for --space (else the Fashion-MNIST one), all fashion-mnist:test images, BN re-calibrated on 2,000 holdout\n"
                     "              images) and rank the predictions against the measurements: Kendall tau-b, Pearson r,\n"
                     "              MAE, and MAE after removing the mean offset.\n";
        return a.flag("help") ? 0 : 2;
    }
    DesignSpace space = loadSpace(a.value("space", defaultSpaceName()));
    std::vector<SubnetConfig> configs;
    for (const std::string& p : a.positionals()) {
        auto cs = readConfigs(p, space);
        configs.insert(configs.end(), cs.begin(), cs.end());
    }
    appendRandomConfigs(a, space, configs);
    std::unique_ptr<SupernetAccuracyOracle> measurer = measuringOracleFromArgs(a, space);
    AccuracyPredictor pred = loadPredictor(a, space);
    CostModel model(space);
    if (measurer) {
        const PredictorCheck check = [&] {
            MeasuringProgress progress(*measurer, "measuring");
            return checkPredictor(configs, space, pred, *measurer);
        }();
        if (a.flag("json")) {
            Json out = check.toJson();
            out["predictor"] = pred.path();
            std::cout << out.dump(2) << "\n";
            return 0;
        }
        std::cout << "predictor " << check.predicted_by << "\nmeasured  " << check.measured_by << "\n";
        if (check.transferred)
            std::cout << "          (configs of " << space.name << " transferred to " << measurer->space().name
                      << ": same blocks, resolution of the same rank; compare rankings, not the numbers)\n";
        std::cout << "\n" << padded("#", 5) << padded("predicted %", 13) << padded("measured %", 12) << padded("MACs (M)", 11) << "peak KB\n";
        for (std::size_t i = 0; i < configs.size(); ++i) {
            CostSummary s = model.summary(configs[i]);
            std::cout << padded(std::to_string(i), 5) << padded(formatFixed(check.predicted[i], 3), 13) << padded(formatFixed(check.measured[i], 2), 12)
                      << padded(formatFixed(s.millionMacs(), 3), 11) << formatFixed(s.peakKB(), 1) << "\n";
        }
        const PredictionMetrics& m = check.metrics;
        std::printf("\n%zu subnets: Kendall tau-b %.3f, Pearson r %.3f, MAE %.3f points (%.3f after the mean offset of %+.2f)\n",
                    m.count, m.kendall_tau, m.pearson, m.mae, check.mae_after_offset, check.mean_offset);
        return 0;
    }
    std::vector<double> acc = pred.predict(configs);
    if (a.flag("json")) {
        Json out = Json::array();
        for (std::size_t i = 0; i < configs.size(); ++i) {
            CostSummary s = model.summary(configs[i]);
            out.push_back({{"config", configs[i].toJson()},
                           {"predicted_accuracy", acc[i]},
                           {"macs", s.macs},
                           {"peak_activation_bytes", s.peak_activation_bytes},
                           {"params", s.params}});
        }
        std::cout << Json{{"predictor", pred.path()}, {"predictions", out}}.dump(2) << "\n";
        return 0;
    }
    std::cout << "predictor " << pred.describe() << "\n";
    std::cout << padded("#", 5) << padded("top-1 %", 10) << padded("MACs (M)", 11) << padded("peak KB", 10) << "params\n";
    for (std::size_t i = 0; i < configs.size(); ++i) {
        CostSummary s = model.summary(configs[i]);
        std::cout << padded(std::to_string(i), 5) << padded(formatFixed(acc[i], 3), 10) << padded(formatFixed(s.millionMacs(), 3), 11)
                  << padded(formatFixed(s.peakKB(), 1), 10) << groupThousands(s.params) << "\n";
    }
    return 0;
}

// --train-budget KB --train-scheme PATTERN: the training-memory limit, added after the others so
// the cheap limits reject a draw before the training memory is priced.
std::unique_ptr<TrainingMemoryLimit> trainingLimitFromArgs(const CliArgs& a, const DesignSpace& space, Constraints& c)
{
    if (a.has("train-on")) return nullptr;   // tinyEngineLimitFromArgs
    if (a.has("board")) throw InputError("--board applies with --train-on tinyengine");
    if (!a.has("train-budget") && !a.has("train-scheme")) return nullptr;
    if (!a.has("train-scheme"))
        throw InputError("--train-budget needs --train-scheme PATTERN (e.g. bias-only:12, last:4, bias-only:12+pw1:3@1/4), "
                         "or --train-on tinyengine to choose the scheme per subnet");
    if (!a.has("train-budget")) throw InputError("--train-scheme needs --train-budget KB (inference peak + extra memory)");
    const double kb = a.doubleValue("train-budget", 0, 1e-6, 1e9);
    auto limit = std::make_unique<TrainingMemoryLimit>(space, a.value("train-scheme"));
    c.set(limit->quantity(), kb);
    return limit;
}

// --train-on tinyengine --train-budget KB [--train-scheme PATTERN] [--board NAME|FILE]: only subnets
// TinyEngine can fine-tune on the board with their scheme (search/TinyEngineTrainingLimit.h), last in
// the list like the plain training limit.
std::unique_ptr<TinyEngineTrainingLimit> tinyEngineLimitFromArgs(const CliArgs& a, const DesignSpace& space, Constraints& c)
{
    if (!a.has("train-on")) return nullptr;
    if (a.value("train-on") != "tinyengine")
        throw InputError("--train-on: expected tinyengine, got '" + escapedForMessage(a.value("train-on")) + "'");
    if (!a.has("train-budget")) throw InputError("--train-on tinyengine needs --train-budget KB (inference peak + extra memory)");
    const double kb = a.doubleValue("train-budget", 0, 1e-6, 1e9);
    const BoardProfile board = loadBoard(a.value("board", "stm32f746"));
    auto limit = std::make_unique<TinyEngineTrainingLimit>(space, board, a.value("train-scheme"), kb);
    c.set(limit->quantity(), kb);
    return limit;
}

// --measure [--supernet CKPT --supernet-space S --data D --calib-data D --images N --calib-images N]:
// the oracle that measures the winner. `--space` stays the search's (and the predictor's) space.
std::unique_ptr<SupernetAccuracyOracle> measuringOracleFromArgs(const CliArgs& a, const DesignSpace& searchSpace)
{
    static const char* const kOptions[] = {"supernet",       "supernet-space", "data",  "calib-data", "images",
                                           "calib-images",   "threads",        "engine", "dtype",      "int8-calib-images"};
    if (!a.flag("measure")) {
        for (const char* o : kOptions)
            if (a.has(o)) throw InputError(std::string("--") + o + " only applies with --measure");
        return nullptr;
    }
    // The search space's own shipped supernet, else the default space's (a winner is then transferred).
    const std::string own = shippedSupernetPath(searchSpace.name);
    const std::string checkpoint = a.value("supernet", own.empty() ? shippedSupernetPath() : own);
    if (checkpoint.empty())
        throw InputError("--measure: no --supernet given and no supernet ships for space " + searchSpace.name +
                         " or the default space; pass --supernet CKPT (e.g. made by tinyscope train-supernet)");
    if (!fileExists(checkpoint)) throw InputError(checkpoint + ": no such supernet checkpoint");
    EvaluationRequest rq = supernetRequest(checkpoint);
    if (a.has("supernet-space")) rq.space = loadSpace(a.value("supernet-space"));
    rq.data = a.value("data", rq.data);
    rq.calib_data = a.value("calib-data", rq.calib_data);
    // --images 0: the whole dataset; --calib-images 0: keep the checkpoint's BN statistics.
    const long long images = a.int64Value("images", 0, 0, kMaxImages);
    const long long calib = a.int64Value("calib-images", static_cast<long long>(rq.calibration.images), 0, kMaxImages);
    rq.images = static_cast<std::size_t>(images);
    rq.calibrate = calib > 0;
    rq.calibration.images = static_cast<std::size_t>(calib);
    rq.threads = a.intValue("threads", defaultBatchThreads(), 1, kMaxThreads);
    rq.engine = parseEvalEngine(a.value("engine", "onednn"), "--engine");
    rq.dtype = parseMeasuredDtype(a.value("dtype", "fp32"), "--dtype", rq.engine, rq.int8);
    requireEvalDtype(rq.engine, rq.dtype);   // exit 2 naming the missing instruction set, before searching
    if (!rq.int8 && a.has("int8-calib-images")) throw InputError("--int8-calib-images applies to --dtype int8 only");
    rq.int8_calib_images = static_cast<std::size_t>(a.int64Value("int8-calib-images", 200, 1, kMaxImages));
    // The calibration images, of the supernet's space's task (workspace/CalibrationData.h): chosen
    // and checked before searching, not after.
    rq.calib_words = {"--calib-data DATASET", "--calib-images 0"};
    if (rq.calibrate || rq.int8) {
        rq.calib_data = chooseCalibrationData(rq.space, rq.calib_data, !rq.int8, rq.calib_words);
        openCalibrationData(rq.space, rq.calib_data, !rq.int8, rq.calib_words);
    }
    // Refuse a supernet of another block layout before searching, not after.
    transferConfig(ArchSampler(searchSpace).minConfig(searchSpace.resolutions.front()), searchSpace, rq.space);
    return std::make_unique<SupernetAccuracyOracle>(rq);
}

void printMeasurement(const WinnerMeasurement& m)
{
    const EvalResult& e = m.evaluation;
    std::printf("\nmeasured   %.2f %% top-1 (%zu of %zu images) vs %.3f %% %s\n", m.measured, e.correct, e.images, m.predicted,
                m.transferred ? "predicted for the searched subnet" : "predicted");
    std::printf("           by %s %s (%s)%s%s\n", e.engine.c_str(), e.dtype.c_str(), e.isa.c_str(), e.engine_note.empty() ? "" : "; ",
                e.engine_note.c_str());
    if (m.transferred)
        std::printf("           the winner of %s was transferred to the supernet's space %s: same blocks, %d px -> %d px\n"
                    "           (resolution of the same rank). The predictor and the supernet are for different tasks:\n"
                    "           compare rankings, not the two numbers.\n",
                    m.search_space.c_str(), m.supernet_space.c_str(), m.searched.image_size, m.measured_config.image_size);
    std::printf("           %s; %.1f s\n", m.measured_by.c_str(), e.seconds);
    if (e.skipped) std::printf("           %zu unreadable images skipped\n", e.skipped);
}

Constraints constraintsFromArgs(const CliArgs& a)
{
    Constraints c;
    if (a.has("constraints")) {
        const std::string path = a.value("constraints");
        c = Constraints::fromJson(readJsonFile(path), path);
    }
    const std::pair<const char*, const char*> flags[] = {
        {"macs", "millionMACs"}, {"sram", "KBPeakMemory"}, {"params", "params"}, {"flash", "KBFlash"}};
    for (const auto& [flag, key] : flags) {
        if (!a.has(flag)) continue;
        const double v = a.doubleValue(flag, 0, 1e-9, 1e15);
        c.set(key, v);
    }
    return c;
}

int cmdSearch(const Args& argv)
{
    CliArgs a(argv,
              {"algo", "macs", "sram", "params", "flash", "constraints", "population", "generations", "parent-ratio",
               "mutation-ratio", "arch-mutate-prob", "resolution-mutate-prob", "seed", "predictor", "space", "out",
               "train-budget", "train-scheme", "train-on", "board", "supernet", "supernet-space", "data", "calib-data", "images", "calib-images",
               "engine", "dtype", "int8-calib-images", "threads", "diagram", "runtime"},
              {"json", "no-evaluated", "no-cache", "help", "measure"});
    if (a.flag("help")) {
        std::cout
            << "usage: tinyscope search [--algo evolution|random] [--macs M] [--sram KB] [--runtime tinyengine|tflm]\n"
               "           [--params N] [--flash KB] [--constraints FILE.json] [--population P] [--generations G] [--parent-ratio R]\n"
               "           [--mutation-ratio R] [--arch-mutate-prob p] [--resolution-mutate-prob p] [--seed S]\n"
               "           [--predictor FILE] [--space NAME|FILE] [--json] [--no-evaluated] [--out FILE] [--no-cache]\n"
               "           [--train-budget KB --train-scheme PATTERN] [--diagram FILE]\n"
               "           [--train-budget KB --train-on tinyengine [--train-scheme PATTERN] [--board NAME|FILE]]\n"
               "           [--measure [--supernet CKPT] [--supernet-space NAME|FILE] [--data DATASET] [--calib-data DATASET]\n"
               "                      [--images N] [--calib-images N] [--threads T] [--engine onednn|libtorch]\n"
               "                      [--dtype fp32|bf16|int8 [--int8-calib-images N]]]\n"
               "  --macs M       million MACs (the lab's millionMACs)      --sram KB   peak SRAM (KBPeakMemory)\n"
               "  --params N     parameter count                           --flash KB  int8 weights + int32 biases\n"
               "  --runtime R    which runtime's memory --sram (KBPeakMemory) bounds: tinyengine (default) = our peak\n"
               "                 SRAM, MCUNet's rule, TinyEngine's scheduled arena; tflm = TensorFlow Lite Micro's\n"
               "                 arena_used_bytes() on the Cortex-M7 with CMSIS-NN kernels, predicted exactly from\n"
               "                 the subnet (activations as TFLM's greedy planner lays them out + scratch + its\n"
               "                 persistent records; docs/DEPLOY.md \"Predicting TFLM's arena\")\n"
               "  --constraints  a JSON object of limits, e.g. {\"millionMACs\": 60, \"KBPeakMemory\": 250}\n"
               "  --train-budget KB --train-scheme PATTERN\n"
               "                 inference peak + extra memory of fine-tuning with PATTERN <= KB, e.g.\n"
               "                 bias-only:12, last:4, bias-only:12+pw1:3@1/4 (docs/TRAINING_INSPECTOR.md)\n"
               "  --train-on tinyengine\n"
               "                 only subnets TinyEngine can fine-tune on --board (default stm32f746) with their scheme:\n"
               "                 the export checker's rules on the reference-form graph, the ledger's training peak + 80 KB\n"
               "                 within the board's SRAM, the int8 parameters + 256 KB within its flash, and the budget.\n"
               "                 Without --train-scheme each subnet gets the bias-only:T+pw1:W@R updating the most\n"
               "                 parameters within them (docs/SEARCH.md)\n"
               "  defaults: evolution, population 50, 20 generations, parent ratio 0.25, mutation ratio 0.5,\n"
               "            arch (and width) mutate prob 0.1, resolution mutate prob 0.5, seed 0.\n"
               "  --out FILE     also write the full JSON result (with every evaluated point) to FILE\n"
               "  --diagram FILE the winner's block diagram as FILE.svg, .png or .dot\n"
               "  --measure      after the search, measure the winner's top-1 on a supernet (BN re-calibrated on\n"
               "                 --calib-images of --calib-data, default 2000 of the supernet's space's own images,\n"
               "                 fashion-mnist:holdout; --calib-images 0 keeps the checkpoint's statistics; --images of --data,\n"
               "                 default all of fashion-mnist:test). --calib-data must be of the supernet's space's task (its\n"
               "                 number of classes, colour, at least half its smallest input size); a space without images of\n"
               "                 its own (mcunet-vww) needs it. Default supernet: the one shipped for --space, else\n"
               "                 the Fashion-MNIST one. A winner of another space (e.g. --space mcunet-vww) is\n"
               "                 transferred: same blocks, resolution of the same rank. --engine: who\n"
               "                 computes (default onednn); --dtype bf16: oneDNN's bf16 plans (AVX-512 BF16 or AMX);\n"
               "                 --dtype int8: the deployed top-1 (our PTQ on --int8-calib-images, default 200, of\n"
               "                 --calib-data, then Int8Forward's exact arithmetic on oneDNN's int8 plans).\n"
               "  Limits nothing in the space can meet exit with code 3 and say what the space can reach.\n";
        return 0;
    }
    DesignSpace space = loadSpace(a.value("space", defaultSpaceName()));
    if (a.has("diagram")) drawingFormatOf(a.value("diagram"));
    for (const char* option : {"out", "diagram"})
        if (a.has(option)) requireWritableFile(a.value(option), std::string("--") + option);
    Constraints constraints = constraintsFromArgs(a);
    // Which runtime the SRAM limit is for, before the training limits join the list (cheap limits first).
    const SramRuntime sramRuntime = sramRuntimeFromName(a.value("runtime", "tinyengine"), "--runtime");
    setSramRuntime(constraints, space, sramRuntime);
    std::unique_ptr<TrainingMemoryLimit> trainLimit = trainingLimitFromArgs(a, space, constraints);
    std::unique_ptr<TinyEngineTrainingLimit> engineLimit = tinyEngineLimitFromArgs(a, space, constraints);
    std::unique_ptr<SupernetAccuracyOracle> measurer = measuringOracleFromArgs(a, space);
    SearchOptions o;
    o.algorithm = a.value("algo", o.algorithm);
    o.population = a.intValue("population", o.population, 1, 100000);
    o.generations = a.intValue("generations", o.generations, 0, 1000000);
    o.parent_ratio = a.doubleValue("parent-ratio", o.parent_ratio, 0, 1);
    o.mutation_ratio = a.doubleValue("mutation-ratio", o.mutation_ratio, 0, 1);
    o.arch_mutate_prob = a.doubleValue("arch-mutate-prob", o.arch_mutate_prob, 0, 1);
    o.resolution_mutate_prob = a.doubleValue("resolution-mutate-prob", o.resolution_mutate_prob, 0, 1);
    o.seed = static_cast<std::uint64_t>(a.int64Value("seed", 0, 0, 4294967295LL));
    o.validate();
    // Prove infeasible limits before loading the predictor: the answer does not depend on it (the
    // TinyEngine limit's own check included).
    requireFeasible(space, constraints);
    AccuracyPredictor pred = loadPredictor(a, space);
    pred.setCaching(!a.flag("no-cache"));
    SearchResult r = runSearch(space, pred, constraints, o);
    std::unique_ptr<WinnerMeasurement> measured;
    if (measurer) {
        MeasuringProgress progress(*measurer, "measuring the winner");
        measured = std::make_unique<WinnerMeasurement>(measureWinner(r, space, *measurer));
    }
    // The winner's SRAM figure under the chosen runtime (the limit's report when it had one).
    const std::optional<SramFigure> sram =
        r.found && r.best.hasConfig() ? std::optional<SramFigure>(sramFigure(space, r.best.config, sramRuntime)) : std::nullopt;
    auto resultJson = [&](bool evaluated) {
        Json j = toJson(r, evaluated);
        j["sram_runtime"] = sramRuntimeName(sramRuntime);
        if (sram && j["best"].is_object() && !j["best"].contains("sram_figure")) j["best"]["sram_figure"] = sram->toJson();
        if (measured) j["measurement"] = measured->toJson();
        return j;
    };
    if (a.has("out")) writeJsonFile(a.value("out"), resultJson(true));
    if (a.has("diagram"))
        writeDotFile(archDiagramDot(space, r.best.config, costedDiagramOptions(CostModel(space).report(r.best.config), r.best.accuracy)),
                     a.value("diagram"));
    if (a.flag("json")) {
        std::cout << resultJson(!a.flag("no-evaluated")).dump(1) << "\n";
        return 0;
    }
    const CostSummary& s = r.best.cost;
    std::printf("%s search, population %d, %d generations, seed %llu; %s\n", o.algorithm.c_str(), o.population,
                o.generations, static_cast<unsigned long long>(o.seed), constraints.describe().c_str());
    std::printf("accuracy from: %s\n\n", r.oracle.c_str());
    std::printf("best       %.3f %% predicted top-1 (found in generation %d)\n", r.best.accuracy, r.best.generation);
    std::printf("MACs       %.3f M\npeak SRAM  %.1f KB\nparams     %s\nflash      %.1f KB\n", s.millionMacs(), s.peakKB(),
                groupThousands(s.params).c_str(), s.flashKB());
    if (sram) {
        std::printf("SRAM for   %s: %s %s B", sramRuntimeName(sramRuntime), sram->what.c_str(), groupThousands(sram->bytes).c_str());
        if (sram->parts.contains("head_bytes"))
            std::printf(" = head %s + tail %s", groupThousands(sram->parts["head_bytes"].get<std::int64_t>()).c_str(),
                        groupThousands(sram->parts["tail_bytes"].get<std::int64_t>()).c_str());
        std::printf(" (%.1f KB)\n", static_cast<double>(sram->bytes) / 1024.0);
    }
    if (trainLimit) {
        const Json& t = r.best_reports[TrainingMemoryLimit::kReportKey];
        auto kb = [&t](const char* k) { return t[k].get<double>() / 1024.0; };
        std::printf("training   %s: inference working set %.1f KB + extra %.1f KB = %.1f KB (budget %s KB)\n",
                    t["pattern"].get<std::string>().c_str(), kb("inference_peak_bytes"), kb("extra_bytes"), kb("total_bytes"),
                    formatQuantity(constraints.find(TrainingMemoryLimit::kKey)->max).c_str());
    }
    if (engineLimit) {
        const Json& t = r.best_reports[TinyEngineTrainingLimit::kReportKey];
        auto kb = [&t](const char* k) { return t[k].get<double>() / 1024.0; };
        std::printf("training   on TinyEngine (%s) with %s: inference working set %.1f KB + extra %.1f KB = %.1f KB (budget %s KB);\n"
                    "           ledger's training peak %.1f KB + 80 KB for the binary = %.1f of %.1f KB SRAM; %s parameters updated\n",
                    engineLimit->board().name.c_str(), t["scheme"].get<std::string>().c_str(), kb("inference_peak_bytes"), kb("extra_bytes"),
                    kb("total_bytes"), formatQuantity(engineLimit->budgetKB()).c_str(), kb("ledger_peak_bytes"), kb("device_sram_estimate_bytes"),
                    kb("board_sram_bytes"), groupThousands(t["updated_parameters"].get<std::int64_t>()).c_str());
    }
    std::printf("config     %s\n\n", r.best.config.toJson().dump().c_str());
    std::printf("generation   best %%    mean %%\n");
    const std::size_t n = r.history.size(), stride = n > 12 ? (n + 11) / 12 : 1;
    for (std::size_t i = 0; i < n; ++i)
        if (i % stride == 0 || i + 1 == n)
            std::printf("%10d  %7.3f  %7.3f\n", r.history[i].generation, r.history[i].best, r.history[i].mean);
    std::printf("\n%s subnets evaluated in %zu batches (%s cache hits), %s draws rejected by the limits, %.1f ms\n",
                groupThousands(static_cast<std::int64_t>(r.evaluated.size())).c_str(), r.oracle_calls,
                groupThousands(static_cast<std::int64_t>(pred.cache().hits())).c_str(),
                groupThousands(static_cast<std::int64_t>(r.rejected)).c_str(), r.seconds * 1000);
    for (const std::string& w : r.warnings) std::printf("warning: %s\n", w.c_str());
    if (r.fallbacks > 0)
        std::printf("note: %zu draws hit the redraw bound and fell back (see docs/SEARCH.md)\n", r.fallbacks);
    if (measured) printMeasurement(*measured);
    if (a.has("diagram")) std::printf("wrote %s\n", a.value("diagram").c_str());
    return 0;
}

}  // namespace

std::vector<Command> searchCommands()
{
    return {
        {"train-predictor", "train the accuracy predictor (MLP) on an accuracy dataset", cmdTrainPredictor},
        {"predict", "predicted top-1 accuracy of subnet configs", cmdPredict},
        {"search", "random or evolutionary search under MAC / SRAM / params / flash limits", cmdSearch},
    };
}

}  // namespace tinyscope::cli
