#include "nn/compress/PruningJob.h"

#include "Error.h"
#include "compress/Pruning.h"
#include "compress/SparsityChoice.h"
#include "cost/CostModel.h"
#include "io/AtomicFolder.h"
#include "io/Text.h"
#include "nn/accuracy/PreparedSubnet.h"
#include "nn/compress/ChannelPruning.h"
#include "nn/measure/Evaluator.h"
#include "nn/supernet/SubnetCheckpoint.h"
#include "nn/TorchRuntime.h"
#include "workspace/CalibrationData.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>

namespace tinyscope {

namespace {

// The prunable tensors of a subnet (raw conv weights: they share storage with the subnet).
std::vector<std::pair<std::string, at::Tensor>> prunableTensors(const Subnet& sub)
{
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (auto& [name, t] : sub.stateDict())
        if (t.dim() > 1 && t.is_floating_point()) out.emplace_back(name, t);
    return out;
}

float* floats(at::Tensor& t)
{
    if (!t.is_contiguous() || t.scalar_type() != at::kFloat) throw std::logic_error("pruning: a weight is not a contiguous float32 tensor");
    return t.data_ptr<float>();
}

void checkSparsity(double s, const std::string& what)
{
    if (std::isnan(s) || s < 0 || s > 1) throw InputError(what + ": sparsity " + formatFixed(s, 2) + " is outside [0, 1]");
}

// All parameters (stateDict less the running statistics and counters), and their non-zeros.
void modelSize(const Subnet& sub, std::int64_t* dense, std::int64_t* sparse)
{
    *dense = *sparse = 0;
    for (auto& [name, t] : sub.stateDict()) {
        if (name.find("running_") != std::string::npos || name.find("num_batches_tracked") != std::string::npos) continue;
        *dense += t.numel();
        *sparse += t.ne(0).sum().item<std::int64_t>();
    }
    *dense *= 32;
    *sparse *= 32;
}

// Every prunable weight's value.
std::vector<float> prunableValues(const Subnet& sub)
{
    std::vector<float> v;
    for (auto& [name, t] : prunableTensors(sub)) {
        const at::Tensor c = t.contiguous();
        v.insert(v.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    return v;
}

Json histogramJson(const WeightHistogram& h) { return {{"lo", h.lo}, {"hi", h.hi}, {"counts", h.counts}}; }

// One run's shared state: the request, its data, the progress count.
class Pruning {
public:
    Pruning(const PruneRequest& rq, const JobControl& job) : rq_(rq), er_(rq.evaluation), job_(job) {}

    PruneResult run();

private:
    double top1(Subnet& sub) { return measuredTop1(sub, er_, ed_, job_); }
    void step(const std::string& stage)
    {
        job_.check();
        job_.report(done_++, total_, stage);
    }
    static NetworkCost costOf(const Subnet& sub, Latency latency)
    {
        const CostSummary c = CostModel::summary(sub.weights().layout);
        return {c.macs, c.params, c.peak_activation_bytes, std::move(latency)};
    }
    void fineGrained(Subnet& sub, PruneResult& r);
    void channels(Subnet& sub, PruneResult& r, const ImageDataset* calib);

    const PruneRequest& rq_;
    const EvaluationRequest& er_;
    const JobControl& job_;
    EvaluationData ed_;
    std::vector<std::pair<at::Tensor, std::vector<std::uint8_t>>> masks_;   // the pruned layers'
    std::size_t done_ = 0, total_ = 1;
};

void Pruning::fineGrained(Subnet& sub, PruneResult& r)
{
    auto tensors = prunableTensors(sub);
    if (rq_.sensitivity) {
        r.scan_layers = tensors.size();
        const auto scanStarted = std::chrono::steady_clock::now();
        const auto scanEnded = [&] { r.scan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - scanStarted).count(); };
        for (auto& [name, t] : tensors) {
            const at::Tensor original = t.clone();
            SensitivityCurve c{name, t.numel(), {}, {}};
            try {
                for (double s : rq_.scan) {
                    step(name + " at sparsity " + formatFixed(s, 2));
                    t.copy_(original);
                    pruneByMagnitude(floats(t), static_cast<std::size_t>(t.numel()), s);
                    c.sparsity.push_back(s);
                    c.top1.push_back(top1(sub));
                }
            } catch (const CancelledError&) {   // keep the finished layers' curves, prune nothing
                t.copy_(original);
                sub.setFolded(false);
                r.scan_cancelled = true;
                scanEnded();
                return;
            }
            t.copy_(original);
            r.sensitivity.push_back(std::move(c));
        }
        scanEnded();
    }
    std::map<std::string, double> chosen;
    if (rq_.target_size > 0) {
        std::vector<LayerScan> scan;
        std::int64_t prunable = 0;
        for (const SensitivityCurve& c : r.sensitivity) {
            scan.push_back({c.layer, c.params, c.sparsity, c.top1});
            prunable += c.params;
        }
        const std::int64_t all = sub.parameterCount();
        const auto target = static_cast<std::int64_t>(std::floor(rq_.target_size * static_cast<double>(all)));
        const SparsityChoice choice = chooseSparsities(scan, r.dense_top1, all - prunable, target);
        if (!choice.reached)
            throw InfeasibleError("--target-size " + formatFixed(rq_.target_size, 3) + ": the scan's sparsities reach at least " +
                                  formatFixed(100.0 * static_cast<double>(choice.smallest) / static_cast<double>(all), 1) +
                                  " % of the dense size (every layer at its largest scanned sparsity); scan higher sparsities (--scan …,0.95,0.98) or aim higher");
        for (std::size_t i = 0; i < scan.size(); ++i) chosen[scan[i].layer] = choice.sparsity[i];
        r.target_size = rq_.target_size;
        r.choice_drop = choice.drop;
    }
    for (auto& [name, t] : tensors) {
        const auto it = rq_.sparsity.find(name);
        const auto choice = chosen.find(name);
        const double s = choice != chosen.end() ? choice->second : it != rq_.sparsity.end() ? it->second : rq_.uniform;
        r.pruned |= s > 0;
        std::vector<std::uint8_t> mask = pruneByMagnitude(floats(t), static_cast<std::size_t>(t.numel()), s);
        if (s > 0) masks_.emplace_back(t, std::move(mask));
        r.layers.push_back({name, t.sizes().vec(), t.numel(), static_cast<std::int64_t>(countNonZero(floats(t), static_cast<std::size_t>(t.numel()))), s});
    }
    step("pruned top-1");
    if (r.pruned) r.pruned_top1 = top1(sub);
}

void Pruning::channels(Subnet& sub, PruneResult& r, const ImageDataset* calib)
{
    const NetWeights original = sub.weights();   // pruning and sorting make new tensors: these stay
    step("pruned without sorting");
    r.channel_groups = pruneChannels(sub, std::max(rq_.channels, 0.0), rq_.channel_ratios);
    r.unsorted_top1 = top1(sub);
    NetWeights unsorted = sub.weights();
    step("pruned after sorting");
    sub.replaceWeights(original);
    sortChannels(sub);
    pruneChannels(sub, std::max(rq_.channels, 0.0), rq_.channel_ratios);
    r.sorted_top1 = top1(sub);
    r.sorted = rq_.sort;
    if (!rq_.sort) sub.replaceWeights(std::move(unsorted));
    r.pruned_top1 = rq_.sort ? r.sorted_top1 : r.unsorted_top1;
    for (const ChannelGroup& g : r.channel_groups) r.pruned |= g.kept < g.channels;
    if (calib) {   // the kept network with its BatchNorm re-calibrated, measured, then its statistics back
        step("re-calibrating the pruned network's BatchNorm");
        std::vector<at::Tensor> kept;
        forEachConvBn(sub.weights(), [&](ConvBn& c) {
            kept.push_back(c.bn.running_mean.clone());
            kept.push_back(c.bn.running_var.clone());
        });
        CalibrationOptions co = er_.calibration;
        co.engine = er_.engine;
        calibrateBn(sub, *calib, co, job_);
        r.recalibrated_top1 = top1(sub);
        std::size_t i = 0;
        at::NoGradGuard guard;
        forEachConvBn(sub.weights(), [&](ConvBn& c) {
            c.bn.running_mean.copy_(kept[i++]);
            c.bn.running_var.copy_(kept[i++]);
        });
    }
    step("the latencies, the two networks taking turns");
    Subnet before(std::make_shared<const DesignSpace>(sub.space()), sub.config(), original);
    auto [a, b] = subnetLatencies(before, sub, rq_.latency_runs);
    sub.setFolded(false);
    r.original = costOf(before, std::move(a));
    r.narrowed = costOf(sub, std::move(b));
}

PruneResult Pruning::run()
{
    const auto started = std::chrono::steady_clock::now();
    configureAllocator();
    setTorchThreads(er_.threads);
    checkSparsity(rq_.uniform, "--uniform");
    for (const auto& [name, s] : rq_.sparsity) checkSparsity(s, name);
    for (double s : rq_.scan) checkSparsity(s, "the scan");
    if (rq_.target_size < 0 || rq_.target_size > 1 || std::isnan(rq_.target_size))
        throw InputError("--target-size " + formatFixed(rq_.target_size, 3) + " is outside (0, 1]");
    if (rq_.target_size > 0 && !rq_.sensitivity) throw InputError("--target-size chooses from the sensitivity scan: give --sensitivity");
    rq_.finetune.check();
    if (!rq_.out.empty()) requireReplaceableFolder(rq_.out, "--out");   // before any work
    ed_ = evaluationData(er_);
    const std::unique_ptr<ImageDataset> train =
        rq_.finetune.epochs > 0 ? openTrainingData(er_.space, rq_.finetune_data, "--finetune-data DATASET") : nullptr;
    const std::unique_ptr<ImageDataset> calib = evaluationCalibrationData(er_);
    job_.report(0, 1, "extracting and re-calibrating the subnet");
    Subnet sub = preparedSubnet(er_, calib.get(), job_);
    sub.setFolded(false);
    if (rq_.channelPruning()) {
        plannedChannels(sub, std::max(rq_.channels, 0.0), rq_.channel_ratios);   // refused before any measurement
    } else {
        std::string names;
        const auto tensors = prunableTensors(sub);
        for (const auto& [name, t] : tensors) names += (names.empty() ? "" : ", ") + name;
        for (const auto& [name, s] : rq_.sparsity) {
            bool found = false;
            for (const auto& [n, t] : tensors) found |= n == name;
            if (!found) throw InputError("no prunable layer '" + name + "' in the subnet; its layers: " + names);
        }
        total_ += rq_.sensitivity ? tensors.size() * rq_.scan.size() : 0;
    }
    total_ += (rq_.channelPruning() ? (er_.calibrate ? 4 : 3) : 1) + (train ? rq_.finetune.steps(train->size()) : 0);
    PruneResult r;
    r.data = ed_.data->source();
    r.images = ed_.items.size();
    step("dense top-1");
    r.dense_top1 = top1(sub);
    r.weights_before = weightHistogram(prunableValues(sub), 64);
    if (rq_.channelPruning()) channels(sub, r, er_.calibrate ? calib.get() : nullptr);
    else fineGrained(sub, r);
    if (r.scan_cancelled) {
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return r;
    }
    if (train) {
        r.finetune_data = train->source();
        r.finetune = fineTuneSubnet(
            sub, *train, rq_.finetune,
            [&] {
                for (auto& [t, mask] : masks_) applyMask(floats(t), mask);
            },
            [&] { return top1(sub); }, job_.within(done_, total_));
        r.finetuned_top1 = r.finetune.back().top1;
    }
    modelSize(sub, &r.dense_bits, &r.sparse_bits);
    r.weights_after = weightHistogram(prunableValues(sub), 64, true);
    if (rq_.channelPruning()) r.dense_bits = r.original.params * 32;   // the unpruned network's
    job_.report(total_, total_, "done");
    if (!rq_.out.empty()) writeSubnetFolder(rq_.out, sub, {{"pruning.json", r.toJson().dump(2) + "\n"}}, job_);   // all or nothing
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
}

}  // namespace

Json NetworkCost::toJson() const
{
    return {{"macs", macs}, {"params", params}, {"peak_bytes", peak_bytes}, {"latency_ms", latency.ms}, {"latency_engine", latency.engine},
            {"latency_runs", latency.runs}};
}

Json PruneResult::toJson() const
{
    Json layersJ = Json::array();
    for (const PrunedLayer& l : layers)
        layersJ.push_back({{"name", l.name}, {"shape", l.shape}, {"params", l.params}, {"nonzero", l.nonzero}, {"sparsity", l.sparsity}});
    Json scanJ = Json::array();
    for (const SensitivityCurve& c : sensitivity) scanJ.push_back({{"layer", c.layer}, {"params", c.params}, {"sparsity", c.sparsity}, {"top1", c.top1}});
    Json tuneJ = Json::array();
    for (const SubnetFineTuneEpoch& e : finetune)
        tuneJ.push_back({{"epoch", e.epoch}, {"loss", e.loss}, {"lr", e.lr}, {"top1", e.top1}, {"seconds", e.seconds}});
    Json j = {{"data", data},
              {"images", images},
              {"dense_top1", dense_top1},
              {"pruned_top1", pruned ? Json(pruned_top1) : Json(nullptr)},
              {"dense_bits", dense_bits},
              {"sparse_bits", sparse_bits},
              {"layers", layersJ},
              {"sensitivity", scanJ},
              {"scan_cancelled", scan_cancelled},
              {"scan_seconds", scan_seconds},
              {"target_size", target_size > 0 ? Json(target_size) : Json(nullptr)},
              {"choice_drop", target_size > 0 ? Json(choice_drop) : Json(nullptr)},
              {"weights_before", histogramJson(weights_before)},
              {"weights_after", histogramJson(weights_after)},
              {"finetune_data", finetune.empty() ? Json(nullptr) : Json(finetune_data)},
              {"finetune", tuneJ},
              {"finetuned_top1", finetune.empty() ? Json(nullptr) : Json(finetuned_top1)},
              {"seconds", seconds}};
    if (!channel_groups.empty()) {
        Json groups = Json::array();
        for (const ChannelGroup& g : channel_groups) groups.push_back({{"name", g.name}, {"channels", g.channels}, {"kept", g.kept}, {"ratio", g.ratio}});
        j["channels"] = {{"groups", groups},           {"sorted", sorted},
                         {"unsorted_top1", unsorted_top1}, {"sorted_top1", sorted_top1},
                         {"recalibrated_top1", recalibrated_top1 >= 0 ? Json(recalibrated_top1) : Json(nullptr)},
                         {"original", original.toJson()}, {"pruned", narrowed.toJson()}};
    }
    return j;
}

std::vector<PrunedLayer> prunableLayers(const EvaluationRequest& rq)
{
    EvaluationRequest plain = rq;
    plain.calibrate = false;
    const Subnet sub = preparedSubnet(plain, nullptr);
    std::vector<PrunedLayer> out;
    for (auto& [name, t] : prunableTensors(sub)) out.push_back({name, t.sizes().vec(), t.numel(), t.numel(), 0});
    return out;
}

std::vector<ChannelGroup> prunableChannelGroups(const EvaluationRequest& rq)
{
    EvaluationRequest plain = rq;
    plain.calibrate = false;
    return channelGroups(preparedSubnet(plain, nullptr));
}

PruneResult runPruning(const PruneRequest& rq, const JobControl& job)
{
    return Pruning(rq, job).run();
}

}  // namespace tinyscope
