#include "nn/compress/PruningJob.h"

#include "Error.h"
#include "compress/Pruning.h"
#include "io/AtomicFolder.h"
#include "io/Text.h"
#include "nn/accuracy/PreparedSubnet.h"
#include "nn/measure/Evaluator.h"
#include "nn/supernet/Checkpoint.h"
#include "nn/TorchRuntime.h"

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

// Top-1 of the subnet as its raw weights are now (BatchNorm folded again first).
double top1Of(Subnet& sub, const EvaluationRequest& rq, const EvaluationData& ed, const JobControl& job)
{
    sub.setFolded(true);
    return evaluateTop1(sub, *ed.data, ed.items, rq.batch, job, rq.engine, rq.dtype).top1;
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

}  // namespace

Json PruneResult::toJson() const
{
    Json layersJ = Json::array();
    for (const PrunedLayer& l : layers)
        layersJ.push_back({{"name", l.name}, {"shape", l.shape}, {"params", l.params}, {"nonzero", l.nonzero}, {"sparsity", l.sparsity}});
    Json scanJ = Json::array();
    for (const SensitivityCurve& c : sensitivity) scanJ.push_back({{"layer", c.layer}, {"params", c.params}, {"sparsity", c.sparsity}, {"top1", c.top1}});
    return {{"data", data},
            {"images", images},
            {"dense_top1", dense_top1},
            {"pruned_top1", pruned ? Json(pruned_top1) : Json(nullptr)},
            {"dense_bits", dense_bits},
            {"sparse_bits", sparse_bits},
            {"layers", layersJ},
            {"sensitivity", scanJ},
            {"seconds", seconds}};
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

PruneResult runPruning(const PruneRequest& rq, const JobControl& job)
{
    const auto started = std::chrono::steady_clock::now();
    const EvaluationRequest& er = rq.evaluation;
    configureAllocator();
    setTorchThreads(er.threads);
    checkSparsity(rq.uniform, "--uniform");
    for (const auto& [name, s] : rq.sparsity) checkSparsity(s, name);
    for (double s : rq.scan) checkSparsity(s, "the scan");
    if (!rq.out.empty()) requireReplaceableFolder(rq.out, "--out");   // before any work
    const EvaluationData ed = evaluationData(er);
    const std::unique_ptr<ImageDataset> calib = evaluationCalibrationData(er);
    job.report(0, 1, "extracting and re-calibrating the subnet");
    Subnet sub = preparedSubnet(er, calib.get(), job);
    sub.setFolded(false);
    auto tensors = prunableTensors(sub);
    {   // Every layer named must exist.
        std::string names;
        for (const auto& [name, t] : tensors) names += (names.empty() ? "" : ", ") + name;
        for (const auto& [name, s] : rq.sparsity) {
            bool found = false;
            for (const auto& [n, t] : tensors) found |= n == name;
            if (!found) throw InputError("no prunable layer '" + name + "' in the subnet; its layers: " + names);
        }
    }
    PruneResult r;
    r.data = ed.data->source();
    r.images = ed.items.size();
    const std::size_t total = 1 + (rq.sensitivity ? tensors.size() * rq.scan.size() : 0) + 1;
    std::size_t done = 0;
    job.report(done, total, "dense top-1");
    r.dense_top1 = top1Of(sub, er, ed, job);
    ++done;
    sub.setFolded(false);

    if (rq.sensitivity) {
        for (auto& [name, t] : tensors) {
            const at::Tensor original = t.clone();
            SensitivityCurve c{name, t.numel(), {}, {}};
            for (double s : rq.scan) {
                job.check();
                job.report(done, total, name + " at sparsity " + formatFixed(s, 2));
                t.copy_(original);
                pruneByMagnitude(floats(t), static_cast<std::size_t>(t.numel()), s);
                c.sparsity.push_back(s);
                c.top1.push_back(top1Of(sub, er, ed, job));
                sub.setFolded(false);
                ++done;
            }
            t.copy_(original);
            r.sensitivity.push_back(std::move(c));
        }
    }

    for (auto& [name, t] : tensors) {
        const auto it = rq.sparsity.find(name);
        const double s = it != rq.sparsity.end() ? it->second : rq.uniform;
        r.pruned |= s > 0;
        pruneByMagnitude(floats(t), static_cast<std::size_t>(t.numel()), s);
        r.layers.push_back({name, t.sizes().vec(), t.numel(), static_cast<std::int64_t>(countNonZero(floats(t), static_cast<std::size_t>(t.numel()))), s});
    }
    if (r.pruned) {
        job.check();
        job.report(done, total, "pruned top-1");
        r.pruned_top1 = top1Of(sub, er, ed, job);
        sub.setFolded(false);
    }
    modelSize(sub, &r.dense_bits, &r.sparse_bits);
    job.report(total, total, "done");
    if (!rq.out.empty()) {   // all or nothing, other files in the folder kept
        Checkpoint ck;
        ck.state_dict = sub.stateDict();
        ck.wrapped = true;
        replaceFilesInFolder(rq.out, {{"subnet.pth", checkpointBytes(ck)},
                                      {"subnet.json", er.config.toJson().dump(2) + "\n"},
                                      {"pruning.json", r.toJson().dump(2) + "\n"}},
                             job);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
}

}  // namespace tinyscope
