#include "nn/train/SupernetTrainer.h"

#include "Error.h"
#include "data/Augment.h"
#include "data/BatchLoader.h"
#include "data/TeacherLogitCache.h"
#include "io/AtomicFile.h"
#include "io/DataPaths.h"
#include "io/Text.h"
#include "nn/supernet/Supernet.h"
#include "nn/train/DistributedContext.h"
#include "nn/TorchRuntime.h"
#include "space/ArchSampler.h"
#include "space/PyRandom.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <sys/resource.h>

namespace tinyscope {

// ---------------------------------------------------------------------------------------------
// Recipes.

TrainRecipe TrainRecipe::preset(const std::string& name)
{
    TrainRecipe r;
    auto phase = [](const char* n, int epochs, double lr, std::vector<int> ks, std::vector<int> e, std::vector<int> d,
                    std::vector<int> w, int randoms, std::size_t images = 0) {
        TrainPhase p;
        p.name = n;
        p.epochs = epochs;
        p.lr = lr;
        p.ks = std::move(ks);
        p.expand = std::move(e);
        p.depth = std::move(d);
        p.widths = std::move(w);
        p.random_subnets = randoms;
        p.images_per_epoch = images;
        return p;
    };
    if (name == "demo") {
        // Sized for the 150-minute budget on 2 cores (docs/SUPERNET_TRAINING.md).
        r.batch = 64;
        r.images_per_epoch = 0;
        r.warmup_steps = 200;
        r.phases = {
            phase("largest", 2, 0.1, {7}, {6}, {2}, {2}, -1),
            phase("kernel", 1, 0.03, {3, 5, 7}, {6}, {2}, {2}, 1, 12800),
            phase("depth", 1, 0.03, {3, 5, 7}, {6}, {0, 1, 2}, {2}, 1, 12800),
            phase("expand", 1, 0.03, {3, 5, 7}, {3, 4, 6}, {0, 1, 2}, {2}, 1, 12800),
            phase("width", 2, 0.03, {}, {}, {}, {}, 1, 25600),
        };
        return r;
    }
    if (name == "demo2") {
        // The second recipe (docs/SUPERNET_TRAINING.md): the largest network alone for three
        // epochs, then longer shrinking phases with two random subnets per step, the children
        // learning half from the labels and half from the largest: 111 minutes with two threads
        // on this 2-core machine (the shipped supernet).
        r.batch = 64;
        r.warmup_steps = 200;
        r.child_label_weight = 0.5;
        r.seed = 2;
        r.phases = {
            phase("largest", 3, 0.1, {7}, {6}, {2}, {2}, -1),
            phase("kernel", 1, 0.03, {3, 5, 7}, {6}, {2}, {2}, 2, 38400),
            phase("depth", 1, 0.03, {3, 5, 7}, {6}, {0, 1, 2}, {2}, 2, 38400),
            phase("expand", 1, 0.03, {3, 5, 7}, {3, 4, 6}, {0, 1, 2}, {2}, 2, 44800),
            phase("width", 3, 0.03, {}, {}, {}, {}, 2, 44800),
        };
        return r;
    }
    // The third and fourth recipes (docs/SUPERNET_TRAINING.md) in two stages. Stage 1: the largest
    // network alone; it becomes the frozen teacher of stage 2 (--init-from).
    auto teacherStage = [&](std::uint64_t seed, int epochs) {
        r.batch = 64;
        r.warmup_steps = 200;
        r.seed = seed;
        r.phases = {phase("largest", epochs, 0.05, {7}, {6}, {2}, {2}, -1)};
        return r;
    };
    // Stage 2: kernel / depth / expand phases and width epochs against the frozen stage-1 network,
    // whose top-5 predictions are cached for four augmentation draws per image; every subnet learns
    // half from it, half from the labels.
    auto frozenTeacherStage = [&](std::uint64_t seed, std::size_t kernelImages, std::size_t depthImages, std::size_t expandImages,
                                  int widthEpochs, std::size_t widthImages) {
        r.batch = 64;
        r.warmup_steps = 100;
        r.child_label_weight = 0.5;
        r.seed = seed;
        r.frozen_teacher = true;
        r.augment_draws = 4;
        r.teacher_cache_top_k = 5;
        r.phases = {
            phase("kernel", 1, 0.02, {3, 5, 7}, {6}, {2}, {2}, 2, kernelImages),
            phase("depth", 1, 0.02, {3, 5, 7}, {6}, {0, 1, 2}, {2}, 2, depthImages),
            phase("expand", 1, 0.02, {3, 5, 7}, {3, 4, 6}, {0, 1, 2}, {2}, 2, expandImages),
            phase("width", widthEpochs, 0.02, {}, {}, {}, {}, 2, widthImages),
        };
        return r;
    };
    if (name == "demo3-teacher") return teacherStage(3, 9);
    if (name == "demo3") return frozenTeacherStage(3, 12800, 19200, 25600, 4, 35200);
    // The fourth (shipped): the time channels-last activations freed (0.23 s per largest-network step
    // instead of 0.61) buys twice the teacher's epochs and about twice the shrinking steps.
    if (name == "demo4-teacher") return teacherStage(4, 18);
    if (name == "demo4") return frozenTeacherStage(4, 25600, 38400, 44800, 6, 44800);
    // Transfer (the TinyEngine-trainable space, docs/SUPERNET_TRAINING.md): stage 1 starts from a
    // related space's trained once-for-all weights (--init-from), whose kernels, depths and widths
    // were already trained elastic, so the teacher needs 4 epochs instead of 18 and the shrinking
    // phases a sixth of demo4's images.
    if (name == "transfer-teacher") return teacherStage(5, 4);
    if (name == "transfer") return frozenTeacherStage(5, 6400, 6400, 12800, 1, 32000);
    if (name == "demo-finetune") {
        // Stage 2 of the shipped run (with --init-from the stage-1 supernet): the largest network
        // alone at a lower rate, then the sandwich with the children learning half from the labels.
        r.batch = 64;
        r.warmup_steps = 0;
        r.child_label_weight = 0.5;
        r.seed = 1;
        r.phases = {
            phase("largest", 1, 0.02, {7}, {6}, {2}, {2}, -1),
            phase("width", 3, 0.01, {}, {}, {}, {}, 1, 25600),
        };
        return r;
    }
    if (name == "tiny") {
        // Seconds, for tests: the same mechanics on 128 images at the smallest resolution.
        r.batch = 16;
        r.images_per_epoch = 128;
        r.warmup_steps = 2;
        r.checkpoint_every = 3;
        r.monitor_images = 64;
        r.phases = {
            phase("largest", 2, 0.05, {7}, {6}, {2}, {2}, -1),
            phase("width", 1, 0.02, {}, {}, {}, {}, 1),
        };
        return r;
    }
    std::string known;
    for (const std::string& n : presetNames()) known += (known.empty() ? "" : ", ") + n;
    throw InputError("unknown training preset '" + name + "' (presets: " + known + ")");
}

const std::vector<std::string>& TrainRecipe::presetNames()
{
    static const std::vector<std::string> names = {"demo", "demo-finetune", "demo2", "demo3-teacher", "demo3", "demo4-teacher", "demo4", "transfer-teacher", "transfer", "tiny"};
    return names;
}

Json TrainRecipe::toJson() const
{
    Json ph = Json::array();
    for (const TrainPhase& p : phases)
        ph.push_back({{"name", p.name}, {"epochs", p.epochs}, {"lr", p.lr}, {"ks", p.ks}, {"expand", p.expand},
                      {"depth", p.depth}, {"widths", p.widths}, {"random_subnets", p.random_subnets},
                      {"images_per_epoch", p.images_per_epoch}});
    Json j = {{"data", data},
            {"images_per_epoch", images_per_epoch},
            {"batch", batch},
            {"momentum", momentum},
            {"weight_decay", weight_decay},
            {"label_smoothing", label_smoothing},
            {"child_label_weight", child_label_weight},
            {"warmup_steps", warmup_steps},
            {"pad", pad},
            {"flip", flip},
            {"seed", seed},
            {"monitor_images", monitor_images},
            {"monitor_data", monitor_data},
            {"init_from", init_from},
            {"phases", ph}};
    // Written only when set, so the states of runs made before these keys existed still match.
    if (frozen_teacher) j["frozen_teacher"] = true;
    if (augment_draws) j["augment_draws"] = augment_draws;
    if (teacher_cache_top_k) j["teacher_cache_top_k"] = teacher_cache_top_k;
    if (checkpoint_every != TrainRecipe().checkpoint_every) j["checkpoint_every"] = checkpoint_every;
    return j;
}

TrainRecipe TrainRecipe::fromJson(const Json& j, const std::string& source)
{
    JsonPath root(source, j);
    TrainRecipe r;
    if (root.has("data")) r.data = root["data"].asString();
    // Every number within what a run can use (a count of 0 or below, or a rate outside its range,
    // would fail hours later or silently train something else).
    constexpr long long kMaxImages = 1'000'000'000LL;
    if (root.has("images_per_epoch")) r.images_per_epoch = static_cast<std::size_t>(root["images_per_epoch"].asInt64In(0, kMaxImages));
    if (root.has("batch")) r.batch = root["batch"].asIntIn(2, 65536);
    if (root.has("momentum")) r.momentum = root["momentum"].asDoubleIn(0, 1);
    if (root.has("weight_decay")) r.weight_decay = root["weight_decay"].asDoubleIn(0, 1);
    if (root.has("label_smoothing")) r.label_smoothing = root["label_smoothing"].asDoubleIn(0, 1);
    if (root.has("child_label_weight")) r.child_label_weight = root["child_label_weight"].asDoubleIn(0, 1);
    if (root.has("warmup_steps")) r.warmup_steps = root["warmup_steps"].asIntIn(0, 100'000'000);
    if (root.has("pad")) r.pad = root["pad"].asIntIn(0, 64);
    if (root.has("flip")) r.flip = root["flip"].asBool();
    if (root.has("seed")) r.seed = static_cast<std::uint64_t>(root["seed"].asInt64In(0, 9223372036854775807LL));
    if (root.has("monitor_images")) r.monitor_images = static_cast<std::size_t>(root["monitor_images"].asInt64In(0, kMaxImages));
    if (root.has("monitor_data")) r.monitor_data = root["monitor_data"].asString();
    if (root.has("init_from")) r.init_from = root["init_from"].asString();
    if (root.has("frozen_teacher")) r.frozen_teacher = root["frozen_teacher"].asBool();
    if (root.has("augment_draws")) r.augment_draws = root["augment_draws"].asIntIn(0, 1'000'000);
    if (root.has("teacher_cache_top_k")) r.teacher_cache_top_k = root["teacher_cache_top_k"].asIntIn(0, 1'000'000);
    if (root.has("checkpoint_every")) r.checkpoint_every = root["checkpoint_every"].asIntIn(1, 100'000'000);
    if (r.augment_draws < 0) root["augment_draws"].fail("must be 0 (fresh every epoch) or a positive number of draws");
    if (r.teacher_cache_top_k < 0) root["teacher_cache_top_k"].fail("must be 0 (no cache) or k >= 1");
    if (r.teacher_cache_top_k > 0 && (!r.frozen_teacher || r.augment_draws == 0))
        root["teacher_cache_top_k"].fail("needs frozen_teacher and augment_draws > 0 (the cache holds one row per draw and image)");
    JsonPath ph = root["phases"];
    for (std::size_t i = 0; i < ph.size(); ++i) {
        JsonPath p = ph[i];
        TrainPhase t;
        t.name = p["name"].asString();
        t.epochs = p["epochs"].asIntIn(1, 100'000);
        t.lr = p["lr"].asDoubleIn(0, 100);
        for (auto [key, dst] : {std::pair<const char*, std::vector<int>*>{"ks", &t.ks}, {"expand", &t.expand},
                                {"depth", &t.depth}, {"widths", &t.widths}})
            if (p.has(key)) *dst = p[key].asIntList();
        if (p.has("random_subnets")) t.random_subnets = p["random_subnets"].asIntIn(-1, 64);   // -1: the largest only
        if (p.has("images_per_epoch")) t.images_per_epoch = static_cast<std::size_t>(p["images_per_epoch"].asInt64In(0, kMaxImages));
        if (t.epochs < 1) p["epochs"].fail("must be at least 1");
        r.phases.push_back(t);
    }
    if (r.phases.empty()) root["phases"].fail("needs at least one phase");
    if (r.batch < 2) root["batch"].fail("must be at least 2 (BatchNorm needs a batch)");
    return r;
}

// ---------------------------------------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;


struct Position {
    int phase = 0, epoch = 0;
    std::size_t step = 0, global_step = 0;
};

std::vector<int> orAll(const std::vector<int>& v, const std::vector<int>& all) { return v.empty() ? all : v; }

class Run {
public:
    Run(const DesignSpace& space, const TrainRecipe& recipe, const std::string& out, DistributedContext* dist, bool syncBn)
        : space_(space), r_(recipe), out_(out), ckpt_(out + "/supernet.pth"), dist_(dist), syncBn_(syncBn)
    {
        if (dist_ && r_.batch % dist_->worldSize() != 0)
            throw InputError("the batch of " + std::to_string(r_.batch) + " (the global batch) does not split evenly over " +
                             std::to_string(dist_->worldSize()) + " ranks");
        data_ = openDataset(r_.data);
        for (const TrainPhase& p : r_.phases) {
            const std::size_t want = p.images_per_epoch ? p.images_per_epoch : r_.images_per_epoch;
            const std::size_t n = want > 0 ? std::min(want, data_->size()) : data_->size();
            phaseImages_.push_back(n);
            phaseSteps_.push_back(n / static_cast<std::size_t>(r_.batch));
            if (phaseSteps_.back() == 0) throw InputError("phase '" + p.name + "' has fewer images than one batch");
            totalSteps_ += phaseSteps_.back() * static_cast<std::size_t>(p.epochs);
        }
        if (r_.frozen_teacher && r_.init_from.empty())
            throw InputError("frozen_teacher needs --init-from: the teacher is the largest subnet of that supernet");
        if (static_cast<int>(data_->classNames().size()) != space_.n_classes)
            throw InputError(r_.data + " has " + std::to_string(data_->classNames().size()) + " classes; space '" +
                             space_.name + "' has " + std::to_string(space_.n_classes));
    }

    bool run(const JobControl& job, const std::function<void(const TrainStatus&)>& onStatus, std::size_t maxSteps);

private:
    void resumeOrInit();
    void shareStartingState();
    bool writes() const { return !dist_ || dist_->isRoot(); }   // rank 0 alone writes checkpoints and monitors
    void prepareTeacher(const JobControl& job, const std::function<void(std::size_t done, std::size_t total)>& progress);
    int drawOf(int globalEpoch) const { return r_.augment_draws > 0 ? globalEpoch % r_.augment_draws : globalEpoch; }
    ImageAugment augmentFor(int draw, const std::vector<std::size_t>& items) const;
    int maxResolution() const { return *std::max_element(space_.resolutions.begin(), space_.resolutions.end()); }
    void checkpoint(const Position& next, bool finished, double elapsedSeconds);
    double cpuNow() const;
    std::vector<std::size_t> epochItems(int globalEpoch, std::size_t n) const;
    std::vector<SubnetConfig> sandwich(const TrainPhase& p, std::size_t globalStep) const;
    double learningRate(const Position& at) const;
    double step(const std::vector<std::size_t>& items, int globalEpoch, const TrainPhase& p, std::size_t globalStep, double lr);
    Json monitor();

    DesignSpace space_;
    TrainRecipe r_;
    std::string out_, ckpt_;
    DistributedContext* dist_ = nullptr;
    bool syncBn_ = true;
    std::unique_ptr<ImageDataset> data_;
    std::vector<std::size_t> phaseImages_, phaseSteps_;
    std::size_t totalSteps_ = 0;
    std::unique_ptr<Supernet> net_;
    std::string initNote_;   // what --init-from took, said once when a fresh run starts
    std::unique_ptr<Subnet> teacher_;               // frozen teacher (eval mode, folded BN)
    std::unique_ptr<TeacherLogitCache> cache_;      // its cached top-k predictions
    std::vector<std::pair<std::string, at::Tensor>> params_;   // trainable, with names
    std::vector<at::Tensor> momentum_;
    Position pos_;
    double elapsedBefore_ = 0;
    double cpuBefore_ = 0;
    Json history_ = Json::array();
    double epochLoss_ = 0;            // running sum over the current epoch, checkpointed
    std::size_t epochSteps_ = 0;
};

void Run::resumeOrInit()
{
    if (writes() && fileExists(ckpt_)) {   // the other ranks get rank 0's state (shareStartingState)
        Checkpoint ck = readCheckpoint(ckpt_);
        const std::string* state = ck.text("tinyscope_training");
        if (!state) throw InputError(ckpt_ + ": not a training checkpoint of tinyscope (no training state); use another --out");
        Json st = parseJson(*state, ckpt_ + ": training state");
        Json mine = r_.toJson();
        if (r_.init_from.empty()) mine.erase("init_from");   // states written before these keys existed
        if (r_.child_label_weight == 0 && !st["recipe"].contains("child_label_weight")) mine.erase("child_label_weight");
        Json theirs = st["recipe"];
        if (theirs.contains("init_from") && theirs["init_from"] == "") theirs.erase("init_from");
        if (theirs != mine)
            throw InputError(ckpt_ + ": this folder holds a run with a different recipe; use another --out or the same recipe");
        if (st["space"] != space_.name)
            throw InputError(ckpt_ + ": this folder holds a run of space '" + st["space"].get<std::string>() + "'");
        net_ = std::make_unique<Supernet>(Supernet::fromStateDict(space_, ck.state_dict, ckpt_));
        pos_.phase = st["phase"].get<int>();
        pos_.epoch = st["epoch"].get<int>();
        pos_.step = st["step"].get<std::size_t>();
        pos_.global_step = st["global_step"].get<std::size_t>();
        elapsedBefore_ = st["elapsed_seconds"].get<double>();
        cpuBefore_ = st.value("cpu_seconds", 0.0);
        history_ = st["history"];
        epochLoss_ = st.value("epoch_loss_sum", 0.0);
        epochSteps_ = st.value("epoch_loss_steps", std::size_t(0));
        const StateDict* mom = ck.section("optimizer_momentum");
        for (const SchemaEntry& e : supernetSchema(space_).entries) {
            if (e.is_buffer) continue;
            params_.emplace_back(e.key, net_->tensor(e.key));
            const at::Tensor* m = mom ? findTensor(*mom, e.key) : nullptr;
            if (m) {
                if (m->sizes() != net_->tensor(e.key).sizes() || !at::isFloatingType(m->scalar_type()))
                    throw InputError(ckpt_ + ": optimizer_momentum/" + e.key + " is " + std::string(c10::toString(m->scalar_type())) + " " +
                                     shapeString(*m) + ", the weight is float " + shapeString(net_->tensor(e.key)));
                checkTensorValues(ckpt_, "optimizer_momentum/" + e.key, *m);
            }
            momentum_.push_back(m ? m->to(at::kFloat).clone() : at::zeros_like(net_->tensor(e.key)).detach());
        }
        return;
    }
    if (r_.init_from.empty()) {
        net_ = std::make_unique<Supernet>(Supernet::initialize(space_, r_.seed));
    } else {
        // The weights of a related space are taken where the layers agree (issue 46).
        WeightTransfer transfer;
        net_ = std::make_unique<Supernet>(Supernet::initializeFrom(space_, r_.seed, r_.init_from, &transfer));
        initNote_ = transfer.summary();
    }
    for (const SchemaEntry& e : supernetSchema(space_).entries) {
        if (e.is_buffer) continue;
        params_.emplace_back(e.key, net_->tensor(e.key));
        momentum_.push_back(at::zeros_like(net_->tensor(e.key)).detach());
    }
}

// Every rank starts where rank 0 is: its weights, BN statistics, momentum and position (a fresh
// run's initialisation is seeded and would agree anyway; a resumed one exists on rank 0 alone).
void Run::shareStartingState()
{
    std::vector<at::Tensor> state;
    for (const SchemaEntry& e : supernetSchema(space_).entries) state.push_back(net_->tensor(e.key));
    for (const at::Tensor& m : momentum_) state.push_back(m);
    state.push_back(at::tensor({static_cast<std::int64_t>(pos_.phase), static_cast<std::int64_t>(pos_.epoch),
                                static_cast<std::int64_t>(pos_.step), static_cast<std::int64_t>(pos_.global_step)}, at::kLong));
    dist_->broadcastFromRoot(state);
    const at::Tensor& p = state.back();
    pos_.phase = static_cast<int>(p[0].item<std::int64_t>());
    pos_.epoch = static_cast<int>(p[1].item<std::int64_t>());
    pos_.step = static_cast<std::size_t>(p[2].item<std::int64_t>());
    pos_.global_step = static_cast<std::size_t>(p[3].item<std::int64_t>());
}

double Run::cpuNow() const
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return cpuBefore_ + static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void Run::checkpoint(const Position& next, bool finished, double elapsedSeconds)
{
    if (!writes()) return;
    Checkpoint ck;
    ck.state_dict = net_->stateDict();
    StateDict mom;
    for (std::size_t i = 0; i < params_.size(); ++i) mom.emplace_back(params_[i].first, momentum_[i]);
    ck.sections.emplace_back("optimizer_momentum", std::move(mom));
    Json st = {{"space", space_.name},     {"recipe", r_.toJson()},      {"phase", next.phase},
               {"epoch", next.epoch},      {"step", next.step},          {"global_step", next.global_step},
               {"total_steps", totalSteps_}, {"elapsed_seconds", elapsedSeconds}, {"cpu_seconds", cpuNow()}, {"finished", finished},
               {"epoch_loss_sum", next.step == 0 ? 0.0 : epochLoss_}, {"epoch_loss_steps", next.step == 0 ? 0 : epochSteps_},
               {"history", history_}};
    ck.strings.emplace_back("tinyscope_training", st.dump());
    writeCheckpoint(ckpt_, ck);   // one atomic file: weights, optimizer and position agree
}

std::vector<std::size_t> Run::epochItems(int globalEpoch, std::size_t n) const
{
    std::vector<std::size_t> idx(data_->size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    PyRandom rng(seedStream(r_.seed, 1000 + static_cast<std::uint64_t>(globalEpoch)));
    for (std::size_t i = idx.size() - 1; i > 0; --i) std::swap(idx[i], idx[rng.randbelow(static_cast<std::uint32_t>(i + 1))]);
    idx.resize(n);
    return idx;
}

std::vector<SubnetConfig> Run::sandwich(const TrainPhase& p, std::size_t globalStep) const
{
    const DesignSpace& s = space_;
    std::vector<int> widths;
    for (int w = 0; w < s.numWidths(); ++w) widths.push_back(w);
    const std::vector<int> ks = orAll(p.ks, s.ks_list), ex = orAll(p.expand, s.expand_list), dl = orAll(p.depth, s.depth_list),
                           wd = orAll(p.widths, widths);
    auto fill = [&](int wid, int k, int e, int d, int r) {
        SubnetConfig c;
        c.wid = wid;
        c.ks.assign(static_cast<std::size_t>(s.maxBlocks()), k);
        c.e.assign(static_cast<std::size_t>(s.maxBlocks()), e);
        c.d.assign(static_cast<std::size_t>(s.numStages()), d);
        c.image_size = r;
        return c;
    };
    const int rMax = *std::max_element(s.resolutions.begin(), s.resolutions.end());
    const int rMin = *std::min_element(s.resolutions.begin(), s.resolutions.end());
    std::vector<SubnetConfig> out;
    out.push_back(fill(s.numWidths() - 1, *std::max_element(s.ks_list.begin(), s.ks_list.end()),
                       *std::max_element(s.expand_list.begin(), s.expand_list.end()), s.maxDepth(), rMax));
    if (p.random_subnets < 0) return out;
    out.push_back(fill(*std::min_element(wd.begin(), wd.end()), *std::min_element(ks.begin(), ks.end()),
                       *std::min_element(ex.begin(), ex.end()), *std::min_element(dl.begin(), dl.end()), rMin));
    PyRandom rng(seedStream(r_.seed, 7000000 + globalStep));
    for (int i = 0; i < p.random_subnets; ++i) {
        SubnetConfig c = fill(rng.choice(wd), 0, 0, 0, rng.choice(s.resolutions));
        for (int& k : c.ks) k = rng.choice(ks);
        for (int& e : c.e) e = rng.choice(ex);
        for (int& d : c.d) d = rng.choice(dl);
        out.push_back(c);
    }
    return out;
}

// One augmentation per image and draw, the same for every subnet of a step (and for the teacher
// cache): crop and flip are a function of (seed, draw, image).
ImageAugment Run::augmentFor(int draw, const std::vector<std::size_t>& items) const
{
    return PadCropFlip{r_.pad, r_.flip, r_.seed}.hook(static_cast<std::uint64_t>(draw), items);
}

void Run::prepareTeacher(const JobControl& job, const std::function<void(std::size_t, std::size_t)>& progress)
{
    if (!r_.frozen_teacher) return;
    const Supernet source = Supernet::load(space_, r_.init_from);
    const std::vector<SubnetConfig> ends = sandwich(TrainPhase{"", 1, 0, {}, {}, {}, {}, -1}, 0);
    teacher_ = std::make_unique<Subnet>(source.extract(ends[0]));
    const std::unique_ptr<ImageDataset> hold = openDataset(r_.monitor_data);
    CalibrationOptions co;
    co.images = std::min<std::size_t>(2000, hold->size());
    calibrateBn(*teacher_, *hold, co, job);
    teacher_->setFolded(true);
    if (r_.teacher_cache_top_k == 0) return;

    cache_ = std::make_unique<TeacherLogitCache>(space_.n_classes, r_.teacher_cache_top_k, data_->size(), r_.augment_draws);
    // Data-parallel: each rank caches the rows of its own shards, in a file of its own.
    const std::string path = out_ + (writes() ? "/teacher_topk.bin" : "/teacher_topk.rank" + std::to_string(dist_->rank()) + ".bin");
    const std::size_t batch = static_cast<std::size_t>(r_.batch);
    const auto [first, last] = dist_ ? dist_->shardOf(batch) : std::pair<std::size_t, std::size_t>(0, batch);
    const Json header = {{"teacher", r_.init_from}, {"teacher_bytes", std::filesystem::file_size(r_.init_from)}, {"data", r_.data},
                         {"resolution", maxResolution()}, {"calibration_images", co.images}, {"seed", r_.seed},
                         {"pad", r_.pad}, {"flip", r_.flip}};
    // A cache file from the same teacher (this run's, or another run's copied here) is reused;
    // only the (draw, image) pairs some epoch of this run will ask for and the file lacks are computed.
    cache_->load(path, header);
    std::vector<std::vector<char>> needed(static_cast<std::size_t>(r_.augment_draws), std::vector<char>(data_->size(), 0));
    std::size_t total = 0;
    for (int globalEpoch = 0, ph = 0; ph < static_cast<int>(r_.phases.size()); ++ph)
        for (int e = 0; e < r_.phases[static_cast<std::size_t>(ph)].epochs; ++e, ++globalEpoch) {
            const std::vector<std::size_t> order = epochItems(globalEpoch, phaseImages_[static_cast<std::size_t>(ph)]);
            for (std::size_t j = 0; j < order.size(); ++j) {
                if (j % batch < first || j % batch >= last) continue;
                const std::size_t i = order[j];
                const int d = drawOf(globalEpoch);
                char& n = needed[static_cast<std::size_t>(d)][i];
                if (n == 0 && !cache_->filled(d, i)) {
                    n = 1;
                    ++total;
                }
            }
        }
    if (total == 0) return;
    const std::size_t chunk = 256;
    std::size_t done = 0;
    at::NoGradGuard guard;
    for (int d = 0; d < r_.augment_draws; ++d)
        for (std::size_t from = 0; from < data_->size();) {
            if (job.cancel && job.cancel->load()) throw CancelledError();
            std::vector<std::size_t> items;
            for (; from < data_->size() && items.size() < chunk; ++from)
                if (needed[static_cast<std::size_t>(d)][from]) items.push_back(from);
            if (items.empty()) continue;
            Batch b = loadBatch(*data_, items, maxResolution(), {}, 2, augmentFor(d, items));
            at::Tensor probs = at::softmax(teacher_->forward(batchImages(b)), 1).contiguous();
            for (std::size_t row = 0; row < b.size(); ++row)
                cache_->put(d, b.items[row], probs.data_ptr<float>() + row * static_cast<std::size_t>(space_.n_classes));
            done += items.size();
            if (progress) progress(done, total);
        }
    cache_->save(path, header);
}

double Run::learningRate(const Position& at) const
{
    const TrainPhase& p = r_.phases[static_cast<std::size_t>(at.phase)];
    const double perEpoch = static_cast<double>(phaseSteps_[static_cast<std::size_t>(at.phase)]);
    const double t = (static_cast<double>(at.epoch) * perEpoch + static_cast<double>(at.step)) / (perEpoch * p.epochs);
    double lr = 0.5 * p.lr * (1.0 + std::cos(M_PI * t));
    if (at.phase == 0 && at.global_step < static_cast<std::size_t>(r_.warmup_steps))
        lr *= static_cast<double>(at.global_step + 1) / static_cast<double>(r_.warmup_steps);
    return lr;
}

double Run::step(const std::vector<std::size_t>& items, int globalEpoch, const TrainPhase& p, std::size_t globalStep, double lr)
{
    const std::vector<SubnetConfig> nets = sandwich(p, globalStep);
    std::vector<std::size_t> mine = items;   // data-parallel: this rank's rows of the global batch
    if (dist_) {
        const auto [first, last] = dist_->shardOf(items.size());
        mine.assign(items.begin() + static_cast<std::ptrdiff_t>(first), items.begin() + static_cast<std::ptrdiff_t>(last));
        std::string arch;
        for (const SubnetConfig& c : nets) arch += c.toJson().dump();
        dist_->requireSame(fnv1a64(arch), "the subnets of step " + std::to_string(globalStep));
    }
    const int draw = drawOf(globalEpoch);
    const ImageAugment augment = augmentFor(draw, mine);
    std::map<int, Batch> batches;
    auto batchAt = [&](int res) -> Batch& {
        auto it = batches.find(res);
        if (it == batches.end()) it = batches.emplace(res, loadBatch(*data_, mine, res, {}, 2, augment)).first;
        return it->second;
    };
    double total = 0;
    at::Tensor teacher;
    if (teacher_) {
        Batch& b = batchAt(maxResolution());
        if (cache_) {
            const std::vector<float> t = cache_->targets(draw, b.items);
            teacher = at::from_blob(const_cast<float*>(t.data()), {static_cast<std::int64_t>(b.size()), space_.n_classes}, at::kFloat).clone();
        } else {
            at::NoGradGuard guard;
            teacher = at::softmax(teacher_->forward(batchImages(b)), 1);
        }
    }
    for (std::size_t i = 0; i < nets.size(); ++i) {
        Batch& b = batchAt(nets[i].image_size);
        at::Tensor x = batchImages(b);
        at::Tensor y = at::from_blob(b.labels.data(), {static_cast<std::int64_t>(b.size())}, at::kInt).to(at::kLong);
        NetWeights w = net_->weightsFor(nets[i]);
        ForwardOptions fo;
        fo.bn = BnMode::Train;
        if (dist_ && syncBn_) fo.sum_across_ranks = [this](const at::Tensor& t) { return dist_->sumAcrossRanks(t); };
        at::Tensor logits = forwardNet(w, x, fo);
        at::Tensor loss;
        if (i == 0 && !teacher_) {
            loss = at::cross_entropy_loss(logits, y, {}, at::Reduction::Mean, -100, r_.label_smoothing);
            teacher = at::softmax(logits.detach(), 1);
        } else {
            // Distillation: the children (with a frozen teacher, every subnet) learn the teacher's
            // soft predictions, in place the largest subnet's (optionally mixed with the labels).
            loss = -(teacher * at::log_softmax(logits, 1)).sum(1).mean();
            if (r_.child_label_weight > 0)
                loss = loss * (1.0 - r_.child_label_weight) +
                       at::cross_entropy_loss(logits, y, {}, at::Reduction::Mean, -100, r_.label_smoothing) * r_.child_label_weight;
        }
        loss.backward();
        total += loss.item<double>();
    }
    if (dist_) {
        // The same parameters have gradients on every rank (the same subnets): average them.
        std::vector<at::Tensor> grads;
        for (auto& kv : params_)
            if (kv.second.mutable_grad().defined()) grads.push_back(kv.second.mutable_grad());
        dist_->averageGradients(grads);
        total = dist_->average(total);
    }
    // SGD with Nesterov momentum; weight decay on conv / linear weights only.
    at::NoGradGuard guard;
    for (std::size_t i = 0; i < params_.size(); ++i) {
        at::Tensor& prm = params_[i].second;
        at::Tensor g = prm.mutable_grad();
        if (!g.defined()) continue;
        const std::string& key = params_[i].first;
        const bool decay = prm.dim() > 1 && key.find("_matrix") == std::string::npos;
        if (decay) g.add_(prm, r_.weight_decay);
        momentum_[i].mul_(r_.momentum).add_(g);
        prm.add_(g.add(momentum_[i], r_.momentum), -lr);
        g.zero_();
    }
    return total / static_cast<double>(nets.size());
}

Json Run::monitor()
{
    if (r_.monitor_images == 0 || !writes()) return Json();
    std::unique_ptr<ImageDataset> hold;
    try {
        hold = openDataset(r_.monitor_data);
    } catch (const InputError&) {
        return Json();
    }
    // Top-1 on the first monitor_images holdout images after BN re-calibration on 500.
    auto top1 = [&](const SubnetConfig& cfg) {
        Subnet sub = net_->extract(cfg);
        CalibrationOptions co;
        co.images = std::min<std::size_t>(500, hold->size());
        calibrateBn(sub, *hold, co);
        return evaluateTop1(sub, *hold, splitIndices(std::min(r_.monitor_images, hold->size()), -1), 200).top1;
    };
    Json j;
    const std::vector<SubnetConfig> ends = sandwich(TrainPhase{"", 1, 0, {}, {}, {}, {}, 0}, 0);
    j["largest"] = top1(ends[0]);
    j["smallest"] = top1(ends[1]);
    // The middle of the space: the mean over three fixed random subnets (the lab's sampler, seed 0).
    ArchSampler sampler(space_);
    PyRandom rng(0);
    double sum = 0;
    const int randoms = 3;
    for (int i = 0; i < randoms; ++i) sum += top1(sampler.random(rng));
    j["random_mean"] = std::round(sum / randoms * 10.0) / 10.0;
    return j;
}

bool Run::run(const JobControl& job, const std::function<void(const TrainStatus&)>& onStatus, std::size_t maxSteps)
{
    resumeOrInit();
    if (dist_) shareStartingState();
    const auto t0 = Clock::now();
    auto elapsed = [&] { return elapsedBefore_ + std::chrono::duration<double>(Clock::now() - t0).count(); };
    TrainStatus st;
    st.phases = static_cast<int>(r_.phases.size());
    st.total_steps = totalSteps_;
    auto emit = [&](const char* event, std::size_t completed) {
        st.event = event;
        st.completed_steps = completed;
        st.phase_index = pos_.phase;
        st.phase = pos_.phase < st.phases ? r_.phases[static_cast<std::size_t>(pos_.phase)].name : "done";
        st.epoch = pos_.epoch;
        st.epochs = pos_.phase < st.phases ? r_.phases[static_cast<std::size_t>(pos_.phase)].epochs : 0;
        st.step = pos_.step;
        st.global_step = pos_.global_step;
        st.elapsed_seconds = elapsed();
        st.cpu_seconds = cpuNow();
        if (onStatus) onStatus(st);
    };
    if (pos_.global_step > 0) emit("resumed", pos_.global_step);
    else if (!initNote_.empty()) {
        st.note = initNote_;
        emit("initialised", 0);
        st.note.clear();
    }
    prepareTeacher(job, [&](std::size_t doneImages, std::size_t totalImages) {
        st.step = doneImages;
        st.steps_per_epoch = totalImages;
        st.event = "teacher-cache";
        st.elapsed_seconds = elapsed();
        if (onStatus) onStatus(st);
    });
    std::size_t done = 0;
    double sessionSeconds = 0;
    std::size_t sessionSteps = 0;
    for (; pos_.phase < static_cast<int>(r_.phases.size()); ++pos_.phase, pos_.epoch = 0) {
        const TrainPhase& p = r_.phases[static_cast<std::size_t>(pos_.phase)];
        const std::size_t stepsPerEpoch = phaseSteps_[static_cast<std::size_t>(pos_.phase)];
        st.steps_per_epoch = stepsPerEpoch;
        for (; pos_.epoch < p.epochs; ++pos_.epoch, pos_.step = 0) {
            int globalEpoch = pos_.epoch;
            for (int q = 0; q < pos_.phase; ++q) globalEpoch += r_.phases[static_cast<std::size_t>(q)].epochs;
            const std::vector<std::size_t> items = epochItems(globalEpoch, phaseImages_[static_cast<std::size_t>(pos_.phase)]);
            for (; pos_.step < stepsPerEpoch; ++pos_.step, ++pos_.global_step) {
                if (maxSteps && done >= maxSteps) {
                    checkpoint(pos_, false, elapsed());
                    emit("checkpoint", pos_.global_step);
                    return false;
                }
                if (job.cancel && job.cancel->load()) {
                    checkpoint(pos_, false, elapsed());   // stop cleanly where we are
                    emit("checkpoint", pos_.global_step);
                    throw CancelledError();
                }
                const auto s0 = Clock::now();
                const double lr = learningRate(pos_);
                std::vector<std::size_t> batch(items.begin() + static_cast<std::ptrdiff_t>(pos_.step * static_cast<std::size_t>(r_.batch)),
                                               items.begin() + static_cast<std::ptrdiff_t>((pos_.step + 1) * static_cast<std::size_t>(r_.batch)));
                st.loss = step(batch, globalEpoch, p, pos_.global_step, lr);
                epochLoss_ += st.loss;
                ++epochSteps_;
                st.lr = lr;
                sessionSeconds += std::chrono::duration<double>(Clock::now() - s0).count();
                ++sessionSteps;
                ++done;
                const double perStep = sessionSeconds / static_cast<double>(sessionSteps);
                st.images_per_second = static_cast<double>(r_.batch) / perStep;
                st.eta_seconds = perStep * static_cast<double>(totalSteps_ - pos_.global_step - 1);
                emit("step", pos_.global_step + 1);
                if ((pos_.step + 1) % static_cast<std::size_t>(r_.checkpoint_every) == 0 && pos_.step + 1 < stepsPerEpoch) {
                    Position next = pos_;
                    ++next.step;
                    ++next.global_step;
                    checkpoint(next, false, elapsed());
                    emit("checkpoint", next.global_step);
                }
            }
            // End of epoch: monitor, then a checkpoint positioned at the next epoch.
            st.monitor = monitor();
            history_.push_back({{"phase", p.name}, {"epoch", pos_.epoch}, {"global_step", pos_.global_step},
                                {"loss", st.loss}, {"mean_loss", epochLoss_ / static_cast<double>(std::max<std::size_t>(1, epochSteps_))},
                                {"elapsed_seconds", elapsed()}, {"holdout_top1", st.monitor}});
            epochLoss_ = 0;
            epochSteps_ = 0;
            Position next = pos_;
            next.step = 0;
            ++next.epoch;
            if (next.epoch >= p.epochs) {
                ++next.phase;
                next.epoch = 0;
            }
            checkpoint(next, next.phase >= static_cast<int>(r_.phases.size()), elapsed());
            emit("epoch", pos_.global_step);
        }
    }
    emit("done", pos_.global_step);
    return true;
}

}  // namespace

SupernetTrainer::SupernetTrainer(const DesignSpace& space, TrainRecipe recipe, std::string outDir)
    : space_(space), recipe_(std::move(recipe)), out_(std::move(outDir))
{
}

bool SupernetTrainer::run(const JobControl& job, const std::function<void(const TrainStatus&)>& onStatus, std::size_t maxSteps)
{
    setTorchThreads(recipe_.threads);
    if (const char* m = std::getenv("TINYSCOPE_MKLDNN")) setMkldnnEnabled(std::string(m) != "0");
    Run r(space_, recipe_, out_, dist_, syncBn_);
    const bool finished = r.run(job, onStatus, maxSteps);
    if (dist_) dist_->barrier();   // rank 0 (the store's server) leaves last
    return finished;
}

}  // namespace tinyscope
