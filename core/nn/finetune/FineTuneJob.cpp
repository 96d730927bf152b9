#include "nn/finetune/FineTuneJob.h"

#include "Error.h"
#include "data/Augment.h"
#include "data/BatchLoader.h"
#include "data/ImageDataset.h"
#include "graph/PublishedSchemes.h"
#include "graph/SchemeEdit.h"
#include "io/AtomicFile.h"
#include "io/DataPaths.h"
#include "nn/TorchRuntime.h"
#include "nn/measure/Evaluator.h"
#include "nn/finetune/FineTuneModel.h"
#include "space/PyRandom.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>

namespace tinyscope {

namespace {

constexpr int kStateVersion = 1;
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
        throw InputError(spec + ": not a dataset (give fashion-mnist or a folder of class sub-folders with .png/.jpg images)");
    for (const char* held : {"test", "val"})
        if (fs::is_directory(fs::path(spec) / "train") && fs::is_directory(fs::path(spec) / held)) {
            d.train = openDataset((fs::path(spec) / "train").string());
            d.test = openDataset((fs::path(spec) / held).string());
            if (d.train->classNames() != d.test->classNames())
                throw InputError(spec + ": train/ and " + held + "/ have different class folders");
            d.describe = spec + " (train/ and " + held + "/)";
            return d;
        }
    std::shared_ptr<const ImageDataset> all = openDataset(spec);
    std::vector<std::size_t> tr, te;
    for (std::size_t i = 0; i < all->size(); ++i) (i % 5 == 4 ? te : tr).push_back(i);
    if (tr.empty() || te.empty()) throw InputError(spec + ": too few images to hold out a test split (" + std::to_string(all->size()) + ")");
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

Json epochJson(const FineTuneEpoch& e)
{
    return Json{{"epoch", e.epoch}, {"loss", e.loss}, {"top1", e.top1}, {"lr", e.lr}, {"seconds", e.seconds}};
}

FineTuneEpoch epochFrom(const JsonPath& j)
{
    FineTuneEpoch e;
    e.epoch = j["epoch"].asInt();
    e.loss = j["loss"].asDouble();
    e.top1 = j["top1"].asDouble();
    e.lr = j["lr"].asDouble();
    e.seconds = j["seconds"].asDouble();
    return e;
}

// What a checkpoint must agree on to be resumed.
Json fingerprint(const FineTuneRequest& rq, const std::string& schemeText)
{
    Json r = rq.recipe.toJson();
    r.erase("threads");   // speed only
    Json print{{"model", rq.model.describe()}, {"scheme", schemeText}, {"data", rq.data}, {"recipe", r}};
    // A subnet is quantized (and BN re-calibrated) on these: another calibration is another model.
    // (A params pickle is read as it is: they do not matter then.)
    if (!rq.model.supernet.empty())
        print["quantize"] = {{"calib_data", rq.quantize.calib_data}, {"calib_images", rq.quantize.calib_images}, {"bn_images", rq.quantize.bn_images}};
    return print;
}

void saveCheckpoint(const std::string& dir, const Json& print, const RunCheckpoint& c, const FineTuneModel& m)
{
    std::filesystem::create_directories(dir);
    const std::int64_t step = static_cast<std::int64_t>(c.epochs_done) * 1000000 + c.next_batch;
    QuantizedParams v;
    for (const auto& [name, values] : m.values()) v.set(name, float32Array(values, {static_cast<std::int64_t>(values.size())}));
    v.set(kStepKey, int32Array({static_cast<std::int32_t>(step % 2000000000)}, {1}));
    writeFileAtomic(dir + "/" + kValuesFile, paramsPickleBytes(v));
    Json hist = Json::array();
    for (const FineTuneEpoch& e : c.history) hist.push_back(epochJson(e));
    const Json state{{"version", kStateVersion}, {"fingerprint", print},     {"epochs_done", c.epochs_done},
                     {"next_batch", c.next_batch}, {"loss_sum", c.loss_sum}, {"partial_seconds", c.partial_seconds},
                     {"initial_top1", c.initial_top1}, {"history", hist}, {"step", step % 2000000000}};
    writeJsonFile(dir + "/" + kStateFile, state);
}

// The checkpoint in `dir`, or none; InputError when it belongs to another run or is damaged.
std::optional<RunCheckpoint> loadCheckpoint(const std::string& dir, const Json& print, FineTuneModel& m)
{
    const std::string statePath = dir + "/" + kStateFile;
    if (!fileExists(statePath)) return std::nullopt;
    const Json state = readJsonFile(statePath);
    const JsonPath s(statePath, state);
    if (s["version"].asInt() != kStateVersion) s["version"].fail("written by another version of the simulator");
    if (state["fingerprint"] != print)
        throw InputError(statePath + ": a checkpoint of another run (" + state["fingerprint"].dump() + "); this run is " + print.dump() +
                         " — use another --out folder or delete the checkpoint");
    RunCheckpoint c;
    c.epochs_done = s["epochs_done"].asIntIn(0, 1000000);
    c.next_batch = s["next_batch"].asInt64In(0, 1LL << 40);
    c.loss_sum = s["loss_sum"].asDouble();
    c.partial_seconds = s["partial_seconds"].asDouble();
    c.initial_top1 = s["initial_top1"].asDouble();
    for (std::size_t i = 0; i < s["history"].size(); ++i) c.history.push_back(epochFrom(s["history"][i]));
    const QuantizedParams v = readParamsPickle(dir + "/" + kValuesFile);
    if (!v.has(kStepKey) || static_cast<std::int64_t>(v.value(kStepKey)) != s["step"].asInt64())
        throw InputError(dir + "/" + kValuesFile + ": does not belong to " + statePath + " (different step)");
    for (const FineTuneParameter& p : m.parameters()) {
        const std::string key = v.has(p.name) ? p.name : "v" + p.name;   // the reader's 'v' prefix rule
        if (!v.has(key)) throw InputError(dir + "/" + kValuesFile + ": no values for " + p.name);
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
    const auto started = std::chrono::steady_clock::now();
    auto elapsed = [](std::chrono::steady_clock::time_point since) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
    };
    FineTuneRecipe r = rq.recipe;
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
    replaceClassifier(net, pm.params, classes, seedStream(r.seed, 0x68656164), r.head_scale);
    const ResolvedScheme scheme = loadScheme(rq.scheme, &net).resolve(net, rq.scheme);
    FineTuneModel model(net, pm.params, scheme);

    FineTuneResult res;
    res.model = rq.model.describe();
    res.scheme = rq.scheme;
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

    const Json print = fingerprint(rq, res.scheme_text);
    RunCheckpoint ck;
    if (!rq.out.empty())
        if (auto loaded = loadCheckpoint(rq.out, print, model)) {
            ck = *loaded;
            res.resumed = true;
        }
    if (ck.initial_top1 < 0 && r.evaluate_initial) ck.initial_top1 = evaluateTop1(model, *task.test, nTest, r.resolution, r.threads, job, "top-1 of the new head");
    res.initial_top1 = std::max(0.0, ck.initial_top1);

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
                job.report(static_cast<std::size_t>(b + 1), static_cast<std::size_t>(ipe),
                           "epoch " + std::to_string(epoch + 1) + "/" + std::to_string(r.epochs));
            }
        } catch (const CancelledError&) {
            if (!rq.out.empty()) {
                ck.partial_seconds += elapsed(epochStart);
                saveCheckpoint(rq.out, print, ck, model);
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
        if (!rq.out.empty()) saveCheckpoint(rq.out, print, ck, model);
        if (onEpoch) onEpoch(e);
    }
    res.epochs = ck.history;
    res.final_top1 = res.epochs.empty() ? res.initial_top1 : res.epochs.back().top1;
    if (!rq.out.empty()) {
        const QuantizedParams q = model.quantizedParams();
        writeFileAtomic(rq.out + "/finetuned-params.pkl", paramsPickleBytes(q));
        writeFileAtomic(rq.out + "/scale.json", scaleJsonText(q.scales));
    }
    res.seconds = elapsed(started);
    if (!rq.out.empty()) writeJsonFile(rq.out + "/result.json", res.toJson());
    return res;
}

}  // namespace tinyscope
