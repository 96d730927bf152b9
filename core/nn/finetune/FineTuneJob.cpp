#include "nn/finetune/FineTuneJob.h"

#include "Error.h"
#include "data/Augment.h"
#include "data/BatchLoader.h"
#include "data/ImageDataset.h"
#include "graph/SchemeEdit.h"
#include "io/AtomicFile.h"
#include "io/DataPaths.h"
#include "io/OutputPaths.h"
#include "io/Text.h"
#include "nn/TorchRuntime.h"
#include "nn/measure/Evaluator.h"
#include "nn/finetune/FineTuneModel.h"
#include "space/PyRandom.h"

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>

namespace tinyscope {

namespace {

constexpr int kStateVersion = 2;   // 2: the fingerprint hashes contents (issue 45)
constexpr const char* kStateFile = "finetune-state.json";
constexpr const char* kValuesFile = "finetune-values.pkl";
constexpr const char* kStepKey = "v_checkpoint_step";   // in the values pickle: the checkpoint it belongs to

std::vector<std::size_t> shuffled(std::size_t n, std::uint64_t seed)
{
    std::vector<std::size_t> v(n);
    std::iota(v.begin(), v.end(), std::size_t{0});
    PyRandom(seed).shuffle(v);
    return v;
}

struct TaskData {
    std::shared_ptr<const ImageDataset> train, test;
    std::string describe;
};

// Debian's Fashion-MNIST (train / test splits), or an image folder: its train/ and test/ (or val/)
// sub-folders when present, else every fifth image (4, 9, 14, ...) held out for the test split.
TaskData openTask(const std::string& spec)
{
    TaskData d;
    if (spec == "fashion-mnist") {
        d.train = openDataset("fashion-mnist:train");
        d.test = openDataset("fashion-mnist:test");
        d.describe = "fashion-mnist (train 60,000 / test 10,000)";
        return d;
    }
    namespace fs = std::filesystem;
    if (!fs::is_directory(spec))
        throw InputError(pathForMessage(spec) + ": not a dataset (give fashion-mnist or a folder of class sub-folders with .png/.jpg images)");
    for (const char* held : {"test", "val"})
        if (fs::is_directory(fs::path(spec) / "train") && fs::is_directory(fs::path(spec) / held)) {
            d.train = openDataset((fs::path(spec) / "train").string());
            d.test = openDataset((fs::path(spec) / held).string());
            if (d.train->classNames() != d.test->classNames())
                throw InputError(pathForMessage(spec) + ": train/ and " + held + "/ have different class folders");
            d.describe = spec + " (train/ and " + held + "/)";
            return d;
        }
    std::shared_ptr<const ImageDataset> all = openDataset(spec);
    std::vector<std::size_t> tr, te;
    for (std::size_t i = 0; i < all->size(); ++i) (i % 5 == 4 ? te : tr).push_back(i);
    if (tr.empty() || te.empty()) throw InputError(pathForMessage(spec) + ": too few images to hold out a test split (" + std::to_string(all->size()) + ")");
    d.train = std::make_shared<SubsetDataset>(all, tr, spec + " (4 of 5)");
    d.test = std::make_shared<SubsetDataset>(all, te, spec + " (every 5th)");
    d.describe = spec + " (every 5th image held out)";
    return d;
}

struct RunCheckpoint {
    int epochs_done = 0;
    std::int64_t next_batch = 0;     // within the epoch after epochs_done
    double loss_sum = 0;             // of the partial epoch
    double partial_seconds = 0;
    double initial_top1 = -1;
    std::vector<FineTuneEpoch> history;
};

// The checkpoint's step, stored in both files so that a state and a values file of different
// checkpoints are not combined.
std::int64_t stepOf(const RunCheckpoint& c) { return (static_cast<std::int64_t>(c.epochs_done) * 1000000 + c.next_batch) % 2000000000; }

Json epochJson(const FineTuneEpoch& e)
{
    return Json{{"epoch", e.epoch}, {"loss", e.loss}, {"top1", e.top1}, {"lr", e.lr}, {"seconds", e.seconds}};
}

// A loss as saved: not negative; a diverged run's NaN is written as null.
double lossFrom(const JsonPath& j, double max) { return j.node().is_null() ? std::nan("") : j.asDoubleIn(0, max); }

FineTuneEpoch epochFrom(const JsonPath& j, int epoch)
{
    FineTuneEpoch e;
    e.epoch = j["epoch"].asIntIn(epoch, epoch);
    e.loss = lossFrom(j["loss"], 1e9);
    e.top1 = j["top1"].asDoubleIn(0, 100);
    e.lr = j["lr"].asDoubleIn(0, 1e9);
    e.seconds = j["seconds"].asDoubleIn(0, 1e12);
    return e;
}

std::string hex64(std::uint64_t h)
{
    char text[17];
    std::snprintf(text, sizeof text, "%016" PRIx64, h);
    return text;
}

// The model as given, by content: its layer table, int8 parameters and scales — whichever files,
// subnet config, space and calibration made them.
std::string modelFingerprint(const Network& net, const QuantizedParams& params)
{
    Json layers = net.toJson();
    layers.erase("description");   // words and where it came from: not the model
    layers.erase("source");
    return hex64(fnv1a64(layers.dump() + '\n' + paramsPickleBytes(params) + '\n' + scaleJsonText(params.scales)));
}

// What defines a run, by content, never by path (issue 45: a subnet config edited in place was
// resumed as the old subnet): the model (modelFingerprint), the scheme, the data items it trains and
// tests on, the recipe. `described` says the same in words, for messages; only `print` is compared.
struct RunIdentity {
    Json print, described;
};

RunIdentity runIdentity(const std::string& modelPrint, const SparseScheme& scheme, const TaskData& task, const std::vector<std::size_t>& trainItems,
                        std::size_t nTest, const FineTuneRecipe& r, const FineTuneRequest& rq, const std::string& schemeText)
{
    std::vector<std::size_t> testItems(nTest);
    std::iota(testItems.begin(), testItems.end(), std::size_t{0});
    Json recipe = r.toJson();
    recipe.erase("threads");   // speed only
    RunIdentity id;
    id.print = Json{{"model", modelPrint},
                    {"scheme", scheme.toJson()},
                    {"data", hex64(fnv1a64(hex64(contentFingerprint(*task.train, trainItems)) + hex64(contentFingerprint(*task.test, testItems))))},
                    {"recipe", recipe}};
    id.described = Json{{"model", rq.model.describe()}, {"scheme", rq.scheme_name + " (" + schemeText + ")"}, {"data", task.describe}};
    return id;
}

// What differs between a checkpoint's identity and this run's, in words ("" when nothing does).
std::string identityDifference(const JsonPath& saved, const RunIdentity& now)
{
    std::string diff;
    auto add = [&](const std::string& what) { diff += (diff.empty() ? "" : "; ") + what; };
    const Json& print = saved["fingerprint"].node();
    const Json was = saved.has("described") ? saved["described"].node() : Json::object();
    for (const char* part : {"model", "scheme", "data"}) {
        if (print.contains(part) && print[part] == now.print[part]) continue;
        const std::string before = was.contains(part) && was[part].is_string() ? was[part].get<std::string>() : "?";
        const std::string after = now.described[part].get<std::string>();
        add(std::string("the ") + part + " differs (checkpoint: " + pathForMessage(before) + "; this run: " + pathForMessage(after) +
            (before == after ? "; same name, other contents" : "") + ")");
    }
    const Json recipe = print.contains("recipe") && print["recipe"].is_object() ? print["recipe"] : Json::object();
    for (const auto& [key, value] : now.print["recipe"].items())
        if (!recipe.contains(key) || recipe[key] != value)
            add("recipe " + key + " " + (recipe.contains(key) ? jsonBrief(recipe[key]) : "absent") + " in the checkpoint, " + jsonBrief(value) + " now");
    for (const auto& [key, value] : recipe.items())
        if (!now.print["recipe"].contains(key)) add("recipe " + escapedForMessage(key) + " " + jsonBrief(value) + " in the checkpoint, absent now");
    return diff;
}

void saveCheckpoint(const std::string& dir, const RunIdentity& id, const RunCheckpoint& c, const FineTuneModel& m)
{
    std::filesystem::create_directories(dir);
    QuantizedParams v;
    for (const auto& [name, values] : m.values()) v.set(name, float32Array(values, {static_cast<std::int64_t>(values.size())}));
    v.set(kStepKey, int32Array({static_cast<std::int32_t>(stepOf(c))}, {1}));
    writeFileAtomic(dir + "/" + kValuesFile, paramsPickleBytes(v));
    Json hist = Json::array();
    for (const FineTuneEpoch& e : c.history) hist.push_back(epochJson(e));
    const Json state{{"version", kStateVersion},         {"fingerprint", id.print},  {"described", id.described},
                     {"epochs_done", c.epochs_done},     {"next_batch", c.next_batch}, {"loss_sum", c.loss_sum},
                     {"partial_seconds", c.partial_seconds}, {"initial_top1", c.initial_top1}, {"history", hist},
                     {"step", stepOf(c)}};
    writeJsonFile(dir + "/" + kStateFile, state);
}

// The checkpoint in `dir`, or none; InputError when it belongs to another run (saying what differs)
// or is damaged: every figure is checked against this run's own bounds (issue 45: epochs_done 99
// made a 2-epoch run "finished" after 1), naming the file and the key.
std::optional<RunCheckpoint> loadCheckpoint(const std::string& dir, const RunIdentity& id, int epochs, std::int64_t batchesPerEpoch,
                                            FineTuneModel& m)
{
    const std::string statePath = dir + "/" + kStateFile;
    if (!fileExists(statePath)) return std::nullopt;
    const Json state = readJsonFile(statePath);
    const JsonPath s(pathForMessage(statePath), state);
    if (!state.is_object()) s.fail("expected a fine-tuning checkpoint (an object)");
    if (s["version"].asInt() != kStateVersion)
        s["version"].fail("written by another version of the simulator (delete the folder to start afresh)");
    if (const std::string diff = identityDifference(s, id); !diff.empty())
        throw InputError(s.where() + ": a checkpoint of another run: " + diff + " — use another output folder, or delete this one to start afresh");
    RunCheckpoint c;
    c.epochs_done = s["epochs_done"].asIntIn(0, epochs);
    c.next_batch = s["next_batch"].asInt64In(0, c.epochs_done == epochs ? 0 : batchesPerEpoch - 1);
    c.loss_sum = lossFrom(s["loss_sum"], 1e9 * static_cast<double>(batchesPerEpoch));
    c.partial_seconds = s["partial_seconds"].asDoubleIn(0, 1e12);
    c.initial_top1 = s["initial_top1"].asDoubleIn(-1, 100);
    const JsonPath history = s["history"];
    if (history.size() != static_cast<std::size_t>(c.epochs_done))
        history.fail("holds " + std::to_string(history.size()) + " epochs, epochs_done says " + std::to_string(c.epochs_done));
    for (std::size_t i = 0; i < history.size(); ++i) c.history.push_back(epochFrom(history[i], static_cast<int>(i) + 1));
    if (s["step"].asInt64() != stepOf(c)) s["step"].fail("is not the step of epochs_done and next_batch (" + std::to_string(stepOf(c)) + ")");
    const std::string valuesPath = pathForMessage(dir + "/" + kValuesFile);
    const QuantizedParams v = readParamsPickle(dir + "/" + kValuesFile);
    if (!v.has(kStepKey) || static_cast<std::int64_t>(v.value(kStepKey)) != stepOf(c))
        throw InputError(valuesPath + ": does not belong to " + s.where() + " (different step)");
    for (const FineTuneParameter& p : m.parameters()) {
        const std::string key = v.has(p.name) ? p.name : "v" + p.name;   // the reader's 'v' prefix rule
        if (!v.has(key)) throw InputError(valuesPath + ": no values for " + p.name);
        m.setValues(p.name, v.floats(key));
    }
    return c;
}

double evaluateTop1(const FineTuneModel& m, const ImageDataset& data, std::size_t n, int resolution, int threads, const JobControl& job,
                    const std::string& stage)
{
    constexpr std::size_t kBatch = 200;
    std::size_t correct = 0, seen = 0;
    for (std::size_t start = 0; start < n; start += kBatch) {
        job.check();
        std::vector<std::size_t> items(std::min(kBatch, n - start));
        std::iota(items.begin(), items.end(), start);
        const Batch b = loadBatch(data, items, resolution, {}, threads);
        if (b.size() == 0) continue;
        const torch::Tensor pred = m.logits(m.quantizeInput(batchImages(b))).argmax(1);
        for (std::size_t i = 0; i < b.size(); ++i) correct += pred[static_cast<std::int64_t>(i)].item<std::int64_t>() == b.labels[i];
        seen += b.size();
        job.report(start + items.size(), n, stage);
    }
    return seen ? 100.0 * static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
}

}  // namespace

Json FineTuneRecipe::toJson() const
{
    return Json{{"epochs", epochs},       {"warmup_epochs", warmup_epochs}, {"batch", batch},   {"bs256_lr", bs256_lr},
                {"qas", qas},             {"head_scale", head_scale}, {"resolution", resolution},       {"crop_scale_min", crop_scale_min},
                {"jitter", jitter},       {"flip", flip},                   {"seed", seed},     {"train_images", train_images},
                {"test_images", test_images}, {"threads", threads}, {"evaluate_initial", evaluate_initial}};
}

FineTuneRecipe FineTuneRecipe::fromJson(const JsonPath& j)
{
    FineTuneRecipe r;
    if (j.has("epochs")) r.epochs = j["epochs"].asIntIn(1, 10000);
    if (j.has("warmup_epochs")) r.warmup_epochs = j["warmup_epochs"].asDoubleIn(0, 10000);
    if (j.has("batch")) r.batch = j["batch"].asIntIn(1, 4096);
    if (j.has("bs256_lr")) r.bs256_lr = j["bs256_lr"].asDoubleIn(0, 1e6);
    if (j.has("qas")) r.qas = j["qas"].asBool();
    if (j.has("head_scale")) r.head_scale = j["head_scale"].asDoubleIn(0, 1e6);
    if (j.has("resolution")) r.resolution = j["resolution"].asIntIn(0, 1024);
    if (j.has("crop_scale_min")) r.crop_scale_min = j["crop_scale_min"].asDoubleIn(0.001, 1);
    if (j.has("jitter")) r.jitter = j["jitter"].asDoubleIn(0, 1);
    if (j.has("flip")) r.flip = j["flip"].asBool();
    if (j.has("seed")) r.seed = static_cast<std::uint64_t>(j["seed"].asInt64In(0, 1LL << 62));
    if (j.has("train_images")) r.train_images = static_cast<std::size_t>(j["train_images"].asInt64In(0, 1LL << 40));
    if (j.has("test_images")) r.test_images = static_cast<std::size_t>(j["test_images"].asInt64In(0, 1LL << 40));
    if (j.has("threads")) r.threads = j["threads"].asIntIn(1, 256);
    if (j.has("evaluate_initial")) r.evaluate_initial = j["evaluate_initial"].asBool();
    return r;
}

double FineTuneRecipe::lrAt(std::int64_t it, std::int64_t itersPerEpoch) const
{
    const double base = bs256_lr * batch / 256.0;
    const double total = static_cast<double>(epochs) * static_cast<double>(itersPerEpoch);
    const double warm = std::min(warmup_epochs, 0.1 * epochs) * static_cast<double>(itersPerEpoch);
    const double t = static_cast<double>(it);
    if (t < warm) return base * (t + 1.0) / warm;
    if (total <= warm) return base;
    return 0.5 * base * (1.0 + std::cos(M_PI * (t - warm) / (total - warm)));
}

Json FineTuneResult::toJson() const
{
    Json e = Json::array();
    for (const FineTuneEpoch& x : epochs) e.push_back(epochJson(x));
    return Json{{"model", model},
                {"scheme", scheme},
                {"scheme_text", scheme_text},
                {"data", data},
                {"classes", classes},
                {"train_images", train_images},
                {"test_images", test_images},
                {"recipe", recipe.toJson()},
                {"qas", recipe.qas},
                {"initial_top1", initial_top1},
                {"epochs", e},
                {"final_top1", final_top1},
                {"extra_bytes", extra_bytes},
                {"inference_peak_bytes", inference_peak_bytes},
                {"total_bytes", total_bytes},
                {"peak_bytes", peak_bytes},
                {"updated_params", updated_params},
                {"updated_elements", updated_elements},
                {"seconds", seconds},
                {"resumed", resumed}};
}

bool hasFineTuneCheckpoint(const std::string& out) { return !out.empty() && fileExists(out + "/" + kStateFile); }

SchemeMemory schemeMemory(const Network& net, const ResolvedScheme& scheme)
{
    const TrainingMemoryModel mm(net);
    const MemoryLedger l = mm.ledger(scheme);
    SchemeMemory s;
    s.extra_bytes = l.extra.total();
    s.inference_peak_bytes = l.inference_peak_bytes;
    s.total_bytes = s.extra_bytes + s.inference_peak_bytes;
    s.peak_bytes = l.peak_bytes;
    s.scheme_text = describeScheme(scheme, net);
    return s;
}

FineTuneResult fineTune(const FineTuneRequest& rq, const JobControl& job, const std::function<void(const FineTuneEpoch&)>& onEpoch)
{
    FineTuneProgress progress;
    progress.onEpoch = onEpoch;
    return fineTune(rq, job, progress);
}

FineTuneResult fineTune(const FineTuneRequest& rq, const JobControl& job, const FineTuneProgress& progress)
{
    const auto started = std::chrono::steady_clock::now();
    auto elapsed = [](std::chrono::steady_clock::time_point since) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
    };
    FineTuneRecipe r = rq.recipe;
    const bool checkpointed = !rq.out.empty();
    if (checkpointed) requireWritableFolder(rq.out, "the checkpoint folder");   // before any work
    const int previousThreads = torchThreads();
    setTorchThreads(r.threads);
    struct RestoreThreads {
        int n;
        ~RestoreThreads() { setTorchThreads(n); }
    } restore{previousThreads};
    const TaskData task = openTask(rq.data);
    const int classes = static_cast<int>(task.train->classNames().size());

    job.report(0, 1, "preparing the model");
    PreparedModel pm = rq.prepared ? *rq.prepared : prepareModel(rq.model, rq.quantize, job);
    Network net = pm.network;
    if (net.input.c != 3)
        throw InputError(net.name + " takes " + std::to_string(net.input.c) + "-channel input; the image loader gives 3 channels (RGB, grey replicated)");
    if (r.resolution == 0) r.resolution = net.input.h;   // the model's own input size
    if (net.input.h != r.resolution || net.input.w != r.resolution)
        throw InputError(net.name + " takes " + std::to_string(net.input.h) + "×" + std::to_string(net.input.w) + " images; the recipe asks for " +
                         std::to_string(r.resolution) + " (give --resolution " + std::to_string(net.input.h) + ")");
    const std::string modelPrint = checkpointed ? modelFingerprint(net, pm.params) : "";   // as given, before the new head
    replaceClassifier(net, pm.params, classes, seedStream(r.seed, 0x68656164), r.head_scale);
    const SparseScheme& sparse = rq.scheme;
    const ResolvedScheme scheme = sparse.resolve(net, rq.scheme_name);
    FineTuneModel model(net, pm.params, scheme);

    FineTuneResult res;
    res.model = rq.model.describe();
    res.scheme = rq.scheme_name;
    res.data = task.describe;
    res.recipe = r;
    res.classes = classes;
    const SchemeMemory mem = schemeMemory(net, scheme);
    res.scheme_text = mem.scheme_text;
    res.extra_bytes = mem.extra_bytes;
    res.inference_peak_bytes = mem.inference_peak_bytes;
    res.total_bytes = mem.total_bytes;
    res.peak_bytes = mem.peak_bytes;
    for (const FineTuneParameter& p : model.parameters()) {
        ++res.updated_params;
        res.updated_elements += p.elements;
    }

    std::vector<std::size_t> trainItems = shuffled(task.train->size(), seedStream(r.seed, 0x7472));
    if (r.train_images > 0 && r.train_images < trainItems.size()) trainItems.resize(r.train_images);
    const std::size_t nTest = r.test_images > 0 ? std::min(r.test_images, task.test->size()) : task.test->size();
    res.train_images = trainItems.size();
    res.test_images = nTest;
    const std::int64_t ipe = static_cast<std::int64_t>(trainItems.size()) / r.batch;
    if (ipe == 0)
        throw InputError("the training split has " + std::to_string(trainItems.size()) + " images, fewer than one batch of " + std::to_string(r.batch));

    // Only a checkpointed run needs its identity (it reads each item it trains and tests on once).
    if (checkpointed) job.report(0, 1, "fingerprinting the data");
    const RunIdentity id = checkpointed ? runIdentity(modelPrint, sparse, task, trainItems, nTest, r, rq, res.scheme_text) : RunIdentity{};
    RunCheckpoint ck;
    if (checkpointed)
        if (auto loaded = loadCheckpoint(rq.out, id, r.epochs, ipe, model)) {
            ck = *loaded;
            res.resumed = true;
        }
    if (ck.initial_top1 < 0 && r.evaluate_initial) ck.initial_top1 = evaluateTop1(model, *task.test, nTest, r.resolution, r.threads, job, "top-1 of the new head");
    res.initial_top1 = std::max(0.0, ck.initial_top1);
    if (ck.initial_top1 >= 0 && progress.onInitial) progress.onInitial(ck.initial_top1);

    FineTuneAugment augment;
    augment.crop_scale_min = r.crop_scale_min;
    augment.jitter = r.jitter;
    augment.flip = r.flip;
    augment.seed = r.seed;
    augment.check();
    for (int epoch = ck.epochs_done; epoch < r.epochs; ++epoch) {
        const auto epochStart = std::chrono::steady_clock::now();
        const std::vector<std::size_t> order = shuffled(trainItems.size(), seedStream(r.seed, static_cast<std::uint64_t>(epoch) + 1));
        double lr = 0;
        try {
            for (std::int64_t b = ck.next_batch; b < ipe; ++b) {
                job.check();
                std::vector<std::size_t> items(static_cast<std::size_t>(r.batch));
                for (int i = 0; i < r.batch; ++i) items[static_cast<std::size_t>(i)] = trainItems[order[static_cast<std::size_t>(b * r.batch + i)]];
                const Batch batch = loadBatch(*task.train, items, r.resolution, {}, r.threads, augment.hook(epoch, items, r.resolution));
                lr = r.lrAt(static_cast<std::int64_t>(epoch) * ipe + b, ipe);
                ck.loss_sum += model.step(model.quantizeInput(batchImages(batch)), batch.labels, lr, r.qas);
                ck.next_batch = b + 1;
                if (progress.onBatch) progress.onBatch(FineTuneBatch{epoch + 1, b + 1, ipe, ck.loss_sum / static_cast<double>(b + 1)});
                job.report(static_cast<std::size_t>(b + 1), static_cast<std::size_t>(ipe),
                           "epoch " + std::to_string(epoch + 1) + "/" + std::to_string(r.epochs));
            }
        } catch (const CancelledError&) {
            if (checkpointed) {
                ck.partial_seconds += elapsed(epochStart);
                saveCheckpoint(rq.out, id, ck, model);
            }
            throw;
        }
        FineTuneEpoch e;
        e.epoch = epoch + 1;
        e.loss = ck.loss_sum / static_cast<double>(ipe);
        e.lr = lr;
        e.top1 = evaluateTop1(model, *task.test, nTest, r.resolution, r.threads, job, "top-1 after epoch " + std::to_string(epoch + 1));
        e.seconds = ck.partial_seconds + elapsed(epochStart);
        ck.history.push_back(e);
        ck.epochs_done = epoch + 1;
        ck.next_batch = 0;
        ck.loss_sum = 0;
        ck.partial_seconds = 0;
        if (checkpointed) saveCheckpoint(rq.out, id, ck, model);
        if (progress.onEpoch) progress.onEpoch(e);
    }
    res.epochs = ck.history;
    res.final_top1 = res.epochs.empty() ? res.initial_top1 : res.epochs.back().top1;
    if (checkpointed) {
        const QuantizedParams q = model.quantizedParams();
        writeFileAtomic(rq.out + "/finetuned-params.pkl", paramsPickleBytes(q));
        writeFileAtomic(rq.out + "/scale.json", scaleJsonText(q.scales));
    }
    res.seconds = elapsed(started);
    if (checkpointed) writeJsonFile(rq.out + "/result.json", res.toJson());
    return res;
}

}  // namespace tinyscope
