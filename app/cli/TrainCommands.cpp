// tinyscope train-supernet
#include "cli/Cli.h"
#include "cli/StopSignal.h"
#include "cli/CliArgs.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "data/ImageDataset.h"
#include "io/AtomicFile.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "nn/OneDnnInfo.h"
#include "nn/predictor/AccuracyTableBuilder.h"
#include "nn/train/DistributedContext.h"
#include "nn/train/SupernetTrainer.h"
#include "nn/TorchRuntime.h"
#include "space/ArchSampler.h"

#include <ATen/ATen.h>
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace tinyscope::cli {

namespace {


// A name's room: "<name>_shard<i>of<N>_acc_table.json.state.json" plus a temporary suffix fits 255 bytes.
constexpr std::size_t kMaxAccdataName = 150;

// mkdir -p, or an InputError naming the folder.
void createFolders(const std::string& dir, const std::string& option)
{
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw InputError(option + " " + dir + ": cannot create the folder: " + ec.message());
}

std::string hms(double s)
{
    const long t = static_cast<long>(s + 0.5);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    return buf;
}

int cmdTrainSupernet(const Args& argv)
{
    CliArgs a(argv, {"space", "out", "preset", "recipe", "seed", "threads", "max-steps", "print-every", "init-from", "rendezvous", "dist-timeout"},
              {"help", "show-recipe", "distributed", "local-bn"});
    if (a.flag("help")) {
        std::string presets;
        for (const std::string& n : TrainRecipe::presetNames()) presets += (presets.empty() ? "" : "|") + n;
        std::cout << "usage: tinyscope train-supernet --out DIR [--space NAME|FILE] [--preset " << presets << " | --recipe FILE.json]\n"
                     "                               [--seed S] [--threads N] [--max-steps N] [--print-every N] [--init-from CKPT] [--show-recipe]\n"
                     "                               [--distributed] [--rendezvous tcp|file:PATH] [--dist-timeout SECONDS] [--local-bn]\n"
                     "  Once-for-all training with progressive shrinking and the sandwich rule. DIR/supernet.pth is a\n"
                     "  real-format checkpoint written after every epoch and every few hundred steps; running the same\n"
                     "  command again resumes from it. Ctrl-C writes a checkpoint and stops. --print-every N: a log line\n"
                     "  every N steps (default 1 on a terminal, else 20).\n"
                     "  Data-parallel over processes and machines (c10d with Gloo) when RANK and WORLD_SIZE are set\n"
                     "  (torchrun's MASTER_ADDR, MASTER_PORT, LOCAL_RANK too), or with --distributed under Slurm\n"
                     "  (SLURM_PROCID, SLURM_NTASKS, the first host of SLURM_NODELIST). The recipe's batch is the global\n"
                     "  batch; rank 0 writes the checkpoints and the log; any world size resumes any checkpoint.\n"
                     "  --dist-timeout (default 600 s): a rank that waits longer for the others fails. Batch norm uses the\n"
                     "  global batch's statistics (synchronised); --local-bn: each rank's own, as DDP without SyncBatchNorm.\n";
        return 0;
    }
    DesignSpace space = loadSpace(a.value("space", defaultSpaceName()));
    TrainRecipe recipe = a.has("recipe") ? TrainRecipe::fromJson(readJsonFile(a.value("recipe")), a.value("recipe"))
                                         : TrainRecipe::preset(a.value("preset", "demo"));
    if (a.has("seed")) recipe.seed = static_cast<std::uint64_t>(a.int64Value("seed", 0, 0, kMaxSeed));
    if (a.has("threads")) recipe.threads = a.intValue("threads", 2, 1, kMaxThreads);
    if (a.has("init-from")) recipe.init_from = a.value("init-from");
    if (a.flag("show-recipe")) {
        std::cout << recipe.toJson().dump(2) << "\n";
        return 0;
    }
    if (!a.has("out")) throw InputError("--out DIR is required");
    const std::string out = a.value("out");
    // Every option and variable is read before anything is made (the --out folder, a rendezvous file).
    const int every = a.intValue("print-every", isatty(1) ? 1 : 20, 1, 1'000'000'000);
    const long long maxSteps = a.int64Value("max-steps", 0, 0, kMaxImages);   // 0: train to the end
    const DistributedEnv env = DistributedEnv::fromProcess(a.flag("distributed"), a.value("rendezvous", "tcp"),
                                                           static_cast<double>(a.intValue("dist-timeout", 600, 1, 86400)));
    requireWritableFolder(out, "--out");
    std::unique_ptr<DistributedContext> dist;
    if (env.enabled) try {
        dist = std::make_unique<DistributedContext>(env);
        // The same run on every rank, or a named refusal (exit 2) before any step.
        dist->requireSameRun({{"space", space.name + " #" + std::to_string(fnv1a64(space.toJson().dump()) % 1000000)},
                              {"preset", a.has("recipe") ? "recipe " + a.value("recipe") : a.value("preset", "demo")},
                              {"recipe", "#" + std::to_string(fnv1a64(recipe.toJson().dump()) % 1000000)},
                              {"batch norm", a.flag("local-bn") ? "local" : "synchronised"}});
        std::printf("data-parallel training: %s (%s)\n", env.describe().c_str(), env.source.c_str());
        std::fflush(stdout);
    } catch (const DistributedError& e) {
        std::cerr << "tinyscope train-supernet: " << e.what() << "\n";
        return 1;
    }
    createFolders(out, "--out");   // after the ranks agree: a refused run leaves nothing behind
    const bool logs = !dist || dist->isRoot();   // rank 0 alone logs
    JobControl job;
    job.cancel = cancelOnSignals();
    SupernetTrainer trainer(space, recipe, out);
    trainer.setDistributed(dist.get(), !a.flag("local-bn"));
    const bool tty = isatty(1);
    std::size_t cachePrinted = 0;
    auto onStatus = [&](const TrainStatus& s) {
        if (!logs) return;
        if (s.event == "step" && (s.global_step % static_cast<std::size_t>(every) == 0 || s.step + 1 == s.steps_per_epoch)) {
            std::printf("%s[%s %d/%d] epoch %d/%d step %zu/%zu  loss %.4f  lr %.4f  %.0f img/s  elapsed %s  ETA %s%s",
                        tty ? "\r" : "", s.phase.c_str(), s.phase_index + 1, s.phases, s.epoch + 1, s.epochs, s.step + 1,
                        s.steps_per_epoch, s.loss, s.lr, s.images_per_second, hms(s.elapsed_seconds).c_str(),
                        hms(s.eta_seconds).c_str(), tty ? "   " : "\n");
            std::fflush(stdout);
        } else if (s.event == "teacher-cache") {
            // A line per 5,000 images when logging to a file (the chunks do not align with that).
            if (s.step == s.steps_per_epoch || s.step / 5000 != cachePrinted / 5000 || tty)
                std::printf("%steacher-logit cache: %zu/%zu images (elapsed %s)%s", tty ? "\r" : "", s.step, s.steps_per_epoch,
                            hms(s.elapsed_seconds).c_str(), tty && s.step < s.steps_per_epoch ? "   " : "\n");
            cachePrinted = s.step;
        } else if (s.event == "epoch") {
            std::printf("%sepoch done: %s epoch %d, holdout top-1 %s (elapsed %s)\n", tty ? "\n" : "", s.phase.c_str(), s.epoch + 1,
                        s.monitor.is_null() ? "n/a" : s.monitor.dump().c_str(), hms(s.elapsed_seconds).c_str());
        } else if (s.event == "initialised") {
            std::printf("initialised: %s\n", s.note.c_str());
        } else if (s.event == "resumed") {
            std::printf("resuming %s at phase %s, epoch %d, step %zu (%zu of %zu steps done, %s already spent)\n", out.c_str(),
                        s.phase.c_str(), s.epoch + 1, s.step, s.completed_steps, s.total_steps, hms(s.elapsed_seconds).c_str());
        } else if (s.event == "checkpoint") {
            if (!tty) std::printf("checkpoint after %zu steps\n", s.completed_steps);
        } else if (s.event == "done") {
            std::printf("%straining finished in %s (%s of CPU time); supernet: %s/supernet.pth\n", tty ? "\n" : "",
                        hms(s.elapsed_seconds).c_str(), hms(s.cpu_seconds).c_str(), out.c_str());
        }
        std::fflush(stdout);
    };
    bool finished = false;
    try {
        finished = trainer.run(job, onStatus, static_cast<std::size_t>(maxSteps));
    } catch (const DistributedError& e) {
        std::cerr << "tinyscope train-supernet: " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        // A collective that failed inside autograd may come back wrapped: the first failure says it all.
        if (!dist || dist->failure().empty()) throw;
        std::cerr << "tinyscope train-supernet: " << dist->failure() << "\n";
        return 1;
    }
    if (!finished && logs) std::printf("stopped after --max-steps; run the same command again to continue\n");
    if (dist) std::printf("rank %d: all-reduce %.3f s in %zu calls, %.1f MB; gradients %.3f s, %.1f MB\n", dist->rank(),
                          dist->traffic().seconds, dist->traffic().calls, static_cast<double>(dist->traffic().bytes) / 1e6,
                          dist->traffic().gradient_seconds, static_cast<double>(dist->traffic().gradient_bytes) / 1e6);
    return 0;
}

// The card of a finished shard (beside src/, so the dataset reader does not take it for a table):
// where the pairs come from, how they were measured, and what they look like — including the
// measurement noise, which bounds what a predictor can learn from them.
Json accuracyTableCard(const std::string& tablePath, const std::string& supernet, const DesignSpace& space,
                       const AccuracyTableOptions& o)
{
    const Json table = readJsonFile(tablePath);
    const Json state = readJsonFile(tablePath + ".state.json");
    const std::string dtype = o.int8 ? "int8" : evalDtypeName(o.dtype);
    double sum = 0, sum2 = 0, lo = 100, hi = 0;
    for (const Json& pair : table) {
        const double v = pair.at(1).get<double>();
        sum += v;
        sum2 += v * v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    const double n = static_cast<double>(table.size());
    const double mean = n > 0 ? sum / n : 0, sd = n > 1 ? std::sqrt(std::max(0.0, (sum2 - n * mean * mean) / (n - 1))) : 0;
    std::unique_ptr<ImageDataset> data = openDataset(o.eval_data);
    const std::size_t measuredImages = splitIndices(data->size(), o.eval_split).size();
    const double p = mean / 100.0;
    const double noise = 100.0 * std::sqrt(p * (1 - p) / static_cast<double>(measuredImages));
    return Json{{"table", tablePath.substr(tablePath.rfind('/') + 1)},
                {"space", space.name},
                {"supernet", supernet.substr(supernet.rfind('/') + 1)},
                {"pairs", table.size()},
                {"sampling", {{"method", "ArchSampler::random (the lab's random_sample_arch) with PyRandom(seed)"},
                              {"seed", o.seed}, {"shard", o.shard}, {"shards", o.shards}}},
                {"measurement", {{"data", o.eval_data}, {"measured_split", o.eval_split}, {"measured_images", measuredImages},
                                 {"calibration_split", o.calib_split}, {"calibration_images", o.calib_images},
                                 {"engine", o.int8 ? "onednn-int8" : evalEngineName(o.engine)},
                                 {"dtype", dtype}, {"isa", oneDnnIsa()},
                                 {"int8_calib_images", o.int8 ? Json(o.int8_calib_images) : Json(nullptr)}}},
                {"top1", {{"min", lo}, {"max", hi}, {"mean", mean}, {"std", sd},
                          {"binomial_noise_at_mean", noise}}},
                {"seconds", state.contains("seconds") ? state["seconds"] : Json(nullptr)},   // all runs; null if unknown
                {"cpu", toJson(hostCpuAndKernels())},   // where the last part was measured
                {"reproduce", "tinyscope make-accdata --supernet " + supernet + " --space " + space.name + " --count " +
                                  std::to_string(o.count) + " --seed " + std::to_string(o.seed) + (dtype == "fp32" ? "" : " --dtype " + dtype) + " --out DIR"}};
}

int cmdMakeAccdata(const Args& argv)
{
    CliArgs a(argv, {"supernet", "space", "out", "count", "seed", "shard", "workers", "data", "calib-images", "name", "engine", "dtype"}, {"help"});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope make-accdata --out DIR [--supernet CKPT --space NAME|FILE] [--count N] [--seed S]\n"
                     "                             [--shard i/N] [--workers W] [--data DATASET] [--calib-images N] [--name NAME]\n"
                     "                             [--engine onednn|libtorch] [--dtype fp32|bf16|int8]\n"
                     "  Measures N sampled subnets (BN re-calibrated on the even items of DATASET, top-1 on the odd items)\n"
                     "  and writes DIR/src/<name>_acc_table.json in the lab's format (<name>: --name, default the space's\n"
                     "  name). Re-running continues an interrupted\n"
                     "  run, and a larger --count extends a finished one (sample i is the same draw for every count).\n"
                     "  --shard i/N measures every N-th sample starting at i into its own file, so N machines build\n"
                     "  one dataset; the accuracy-dataset reader merges DIR/src/.\n"
                     "  --engine onednn|libtorch: what measures the subnets (default oneDNN, docs/ONEDNN.md).\n"
                     "  --dtype int8: the deployed top-1 instead: our PTQ (200 images of the calibration split), then\n"
                     "  Int8Forward's exact int8 arithmetic (batched on oneDNN, bit-identical).\n"
                     "  --dtype bf16: oneDNN's bf16 plans measure (a CPU with AVX-512 BF16 or AMX).\n";
        return 0;
    }
    if (!a.has("out")) throw InputError("--out DIR is required");
    // Where the table goes is checked before the supernet is loaded: the name is a plain file
    // name (it never leads outside --out), the folders can be created.
    const std::string dir = a.value("out");
    requireWritableFolder(dir, "--out");
    requireWritableFolder(dir + "/src", "--out");
    if (a.has("name")) requireFileStem(a.value("name"), "--name", kMaxAccdataName);
    configureAllocator();
    DesignSpace space = loadSpace(a.value("space", defaultSpaceName()));
    std::string ckpt = a.value("supernet", findModelFile("supernets/mcunet-fmnist.pth"));
    if (ckpt.empty()) throw InputError("no --supernet given and the shipped demo supernet was not found");
    Supernet supernet = Supernet::load(space, ckpt);
    AccuracyTableOptions o;
    o.count = static_cast<std::size_t>(a.int64Value("count", 2000, 1, 100'000'000));
    o.seed = static_cast<std::uint64_t>(a.int64Value("seed", 0, 0, kMaxSeed));
    o.workers = a.intValue("workers", defaultBatchThreads(), 1, kMaxThreads);
    o.eval_data = a.value("data", o.eval_data);
    o.engine = parseEvalEngine(a.value("engine", "onednn"), "--engine");
    const std::string dtype = a.value("dtype", "fp32");
    if (dtype != "fp32" && dtype != "bf16" && dtype != "int8")
        throw InputError("--dtype: unknown data type '" + dtype + "' (fp32, bf16 or int8)");
    o.int8 = dtype == "int8";
    if (dtype == "bf16") {
        o.dtype = EvalDtype::Bf16;
        requireEvalDtype(o.engine, o.dtype);   // exit 2 naming the missing instruction set, before any work
    }
    o.calib_images = static_cast<std::size_t>(a.int64Value("calib-images", static_cast<long long>(o.calib_images), 1, kMaxImages));
    if (a.has("shard")) {
        const std::string sh = a.value("shard");
        auto slash = sh.find('/');
        try {
            if (slash == std::string::npos) throw std::invalid_argument(sh);
            o.shard = std::stoi(sh.substr(0, slash));
            o.shards = std::stoi(sh.substr(slash + 1));
        } catch (const std::exception&) {
            throw InputError("--shard expects i/N, e.g. 0/4, got '" + sh + "'");
        }
    }
    if (!a.has("name")) requireFileStem(space.name, "the design space's name (give --name)", kMaxAccdataName);
    createFolders(dir + "/src", "--out");
    const std::string name = a.value("name", space.name) + "_shard" + std::to_string(o.shard) + "of" + std::to_string(o.shards);
    const std::string path = dir + "/src/" + name + "_acc_table.json";
    JobControl job;
    job.cancel = cancelOnSignals();
    const bool tty = isatty(1);
    std::size_t n = buildAccuracyTable(supernet, o, path, job, [&](const AccuracyTableProgress& p) {
        if (tty || p.done % 25 == 0 || p.done == p.total)
            std::printf("%s%zu/%zu subnets  last top-1 %.2f %%  elapsed %s  ETA %s%s", tty ? "\r" : "", p.done, p.total, p.last_top1,
                        hms(p.seconds).c_str(), hms(p.etaSeconds()).c_str(), tty ? "   " : "\n");
        std::fflush(stdout);
    });
    std::printf("%swrote %zu pairs to %s\n", tty ? "\n" : "", n, path.c_str());
    if (n == accuracyTableSamples(space, o).size()) {
        const std::string cardPath = dir + "/" + name + "_card.json";
        writeJsonFile(cardPath, accuracyTableCard(path, ckpt, space, o));
        std::printf("wrote %s\n", cardPath.c_str());
    }
    return 0;
}

// The preset a finished run used, recognised by its phases and seed ("" if none matches).
std::string presetOf(const Json& recipe)
{
    for (const std::string& name : TrainRecipe::presetNames()) {
        const Json p = TrainRecipe::preset(name).toJson();
        if (p["phases"] == recipe["phases"] && p.value("seed", 0) == recipe.value("seed", 0)) return name;
    }
    return "";
}

// A shipped run may continue an earlier one (--init-from): every stage, earliest first, read from
// the training checkpoints the chain names. A missing earlier checkpoint ends the chain there.
Json trainingStages(const Json& lastState)
{
    std::vector<Json> states = {lastState};
    while (states.back()["recipe"].contains("init_from") && states.back()["recipe"]["init_from"].is_string()) {
        const std::string from = states.back()["recipe"]["init_from"].get<std::string>();
        if (!fileExists(from)) break;
        Checkpoint prev = readCheckpoint(from);
        const std::string* text = prev.text("tinyscope_training");
        if (!text) break;
        states.push_back(parseJson(*text, from));
        if (states.size() > 16) throw InputError(from + ": the --init-from chain of training runs does not end");
    }
    std::reverse(states.begin(), states.end());
    Json stages = Json::array();
    for (const Json& st : states) {
        const std::string preset = presetOf(st["recipe"]);
        stages.push_back({{"preset", preset.empty() ? Json(nullptr) : Json(preset)},
                          {"space", st.value("space", std::string(defaultSpaceName()))},
                          {"recipe", st["recipe"]},
                          {"seconds", st["elapsed_seconds"]},
                          {"cpu_seconds", st.contains("cpu_seconds") ? st["cpu_seconds"] : Json(nullptr)},
                          {"steps", st["total_steps"]},
                          {"history", st["history"]}});
    }
    return stages;
}

// The commands that rebuild the shipped file: one train-supernet per stage, then ship-supernet.
std::string reproduceCommand(const Json& stages, const std::string& stem)
{
    // A first stage initialised from a file that is a shipped supernet names it where a clone has it.
    auto initialWeights = [](const std::string& from) {
        if (!fileExists(from)) return from;
        const std::string bytes = readFileBytes(from);
        for (const std::string& space : presetSpaceNames()) {
            const std::string shipped = shippedSupernetPath(space);
            if (!shipped.empty() && readFileBytes(shipped) == bytes) return "models/supernets/" + space + ".pth";
        }
        return from;
    };
    std::string cmd;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        const Json& st = stages[i];
        const std::string run = "RUN" + std::to_string(i + 1);
        cmd += "tinyscope train-supernet ";
        const std::string space = st.value("space", std::string(defaultSpaceName()));
        if (space != defaultSpaceName()) cmd += "--space " + space + " ";
        cmd += st["preset"].is_string() ? "--preset " + st["preset"].get<std::string>() : std::string("--recipe RECIPE") + std::to_string(i + 1) + ".json";
        if (i > 0) cmd += " --init-from RUN" + std::to_string(i) + "/supernet.pth";
        else if (const std::string from = st["recipe"].value("init_from", std::string()); !from.empty())
            cmd += " --init-from " + initialWeights(from);
        cmd += " --out " + run + " && ";
    }
    return cmd + "tinyscope ship-supernet --run RUN" + std::to_string(stages.size()) + " --out " + stem;
}

int cmdShipSupernet(const Args& argv)
{
    CliArgs a(argv, {"run", "out", "space", "storage", "calib-images", "images"}, {"help"});
    if (a.flag("help") || !a.has("run") || !a.has("out")) {
        std::cout << "usage: tinyscope ship-supernet --run DIR --out PATH_STEM [--space NAME|FILE] [--storage float16|float32]\n"
                     "  (the space is the run's; --space for a space file of that name)\n"
                     "                              [--images N] [--calib-images N]\n"
                     "  Writes PATH_STEM.pth (a plain real-format supernet, float16 by default) from a finished training\n"
                     "  run and PATH_STEM.json, its card: data, recipe, seed, training time and the top-1 measured on the\n"
                     "  Fashion-MNIST test set for the smallest, largest and 5 random subnets (BN re-calibrated on holdout).\n"
                     "  A run made with --init-from is recorded with every earlier stage. --images N measures on the\n"
                     "  first N test images only (default all 10,000; for quick checks, not for shipping).\n";
        return a.flag("help") ? 0 : 2;
    }
    const std::string stem = a.value("out");
    for (const std::string& f : {stem, stem + ".pth", stem + ".json"}) requireWritableFile(f, "--out");
    configureAllocator();
    setTorchThreads(defaultBatchThreads());
    const std::string runCkpt = a.value("run") + "/supernet.pth";
    Checkpoint run = readCheckpoint(runCkpt);
    const std::string* stateText = run.text("tinyscope_training");
    if (!stateText) throw InputError(runCkpt + ": not a tinyscope training checkpoint");
    Json state = parseJson(*stateText, runCkpt);
    if (!state.value("finished", false))
        throw InputError(runCkpt + ": training has not finished (run train-supernet again to continue it)");
    // The run's own space (its state names it); --space only for a space file of that name.
    const std::string runSpace = state.value("space", std::string());
    DesignSpace space = loadSpace(a.value("space", spaceOrDefault(runSpace)));
    if (!runSpace.empty() && space.name != runSpace)
        throw InputError("--space " + space.name + ": the run " + a.value("run") + " trained space '" + runSpace + "'");
    const std::string storage = a.value("storage", "float16");
    if (storage != "float16" && storage != "float32") throw InputError("--storage must be float16 or float32");
    StateDict sd;
    for (const auto& kv : run.state_dict)
        sd.emplace_back(kv.first, (storage == "float16" && at::isFloatingType(kv.second.scalar_type())) ? kv.second.to(at::kHalf) : kv.second);
    const Json stages = trainingStages(state);
    double seconds = 0, cpuSeconds = 0;
    bool cpuKnown = true;
    for (const Json& st : stages) {
        seconds += st["seconds"].get<double>();
        if (st["cpu_seconds"].is_number()) cpuSeconds += st["cpu_seconds"].get<double>();
        else cpuKnown = false;
    }
    saveStateDict(stem + ".pth", sd, true);

    // Measure what is shipped: reload the written file.
    Supernet net = Supernet::load(space, stem + ".pth");
    std::unique_ptr<ImageDataset> test = openDataset("fashion-mnist:test");
    std::unique_ptr<ImageDataset> hold = openDataset("fashion-mnist:holdout");
    std::vector<std::size_t> testItems = splitIndices(test->size(), -1);
    if (a.has("images")) {
        const long long n = a.int64Value("images", 0, 1, kMaxImages);
        testItems.resize(std::min(testItems.size(), static_cast<std::size_t>(n)));
    }
    ArchSampler sampler(space);
    const int rMax = *std::max_element(space.resolutions.begin(), space.resolutions.end());
    const int rMin = *std::min_element(space.resolutions.begin(), space.resolutions.end());
    std::vector<std::pair<std::string, SubnetConfig>> subnets = {{"smallest", sampler.minConfig(rMin)}, {"largest", sampler.fullMaxConfig(rMax)}};
    PyRandom rng(0);
    for (int i = 0; i < 5; ++i) subnets.emplace_back("random " + std::to_string(i), sampler.random(rng));
    CostModel cost(space);
    CalibrationOptions co;
    co.images = static_cast<std::size_t>(a.int64Value("calib-images", 2000, 1, kMaxImages));
    Json measured = Json::array();
    for (const auto& [name, cfg] : subnets) {
        Subnet sub = net.extract(cfg);
        calibrateBn(sub, *hold, co);
        sub.setFolded(true);
        EvalResult r = evaluateTop1(sub, *test, testItems, 250);
        CostSummary c = cost.summary(cfg);
        measured.push_back({{"name", name}, {"config", cfg.toJson()}, {"top1", r.top1}, {"images", r.images},
                            {"million_macs", c.millionMacs()}, {"peak_kb", c.peakKB()}, {"params", c.params}});
        std::printf("%-9s top-1 %.2f %%  (%.2f M MACs, %.1f KB)\n", name.c_str(), r.top1, c.millionMacs(), c.peakKB());
    }
    // The check the test suite repeats: the smallest subnet on test images 0..999, 500 calibration images.
    Subnet check = net.extract(subnets[0].second);
    CalibrationOptions cc;
    cc.images = 500;
    calibrateBn(check, *hold, cc);
    check.setFolded(true);
    std::vector<std::size_t> first1000 = splitIndices(std::min<std::size_t>(1000, testItems.size()), -1);
    EvalResult cr = evaluateTop1(check, *test, first1000, 250);

    Json card = {
        {"space", space.name},
        {"file", stem.substr(stem.rfind('/') + 1) + ".pth"},
        {"storage", storage},
        {"classes", space.class_names},
        {"data", {{"train", state["recipe"]["data"]}, {"holdout", "fashion-mnist:holdout (train images 55,000-59,999)"},
                  {"test", "fashion-mnist:test (10,000 images)"}, {"package", "dataset-fashion-mnist (Debian)"}}},
        {"recipe", state["recipe"]},
        {"seed", state["recipe"]["seed"]},
        {"training_seconds", seconds},   // wall time over every stage
        {"training_cpu_seconds", cpuKnown ? Json(cpuSeconds) : Json(nullptr)},
        {"training_stages", stages},
        {"evaluation", {{"bn_calibration", groupThousands(static_cast<std::int64_t>(co.images)) +
                                               " random fashion-mnist:holdout images at the subnet's resolution, seed 0"},
                        {"test_images", testItems.size()}}},
        {"measured", measured},
        {"check", {{"name", "smallest"}, {"config", subnets[0].second.toJson()}, {"data", "fashion-mnist:test items 0-" + std::to_string(first1000.size() - 1)},
                   {"calibration", "500 fashion-mnist:holdout images, seed 0"}, {"top1", cr.top1}}},
        {"reproduce", reproduceCommand(stages, stem)},
        {"cpu", toJson(hostCpuAndKernels())},   // where it was shipped (measured); training may have run elsewhere
    };
    writeJsonFile(stem + ".json", card);
    std::printf("wrote %s.pth and %s.json (check: smallest on test[0:1000] %.2f %%)\n", stem.c_str(), stem.c_str(), cr.top1);
    return 0;
}

}  // namespace

std::vector<Command> trainCommands()
{
    return {
        {"train-supernet", "once-for-all training of a supernet (resumable)", cmdTrainSupernet},
        {"ship-supernet", "write a trained supernet and its measured card", cmdShipSupernet},
        {"make-accdata", "measure sampled subnets into a lab-format accuracy dataset", cmdMakeAccdata},
    };
}

}  // namespace tinyscope::cli
