#include "nn/compress/WeightQuantizationJob.h"

#include "Error.h"
#include "compress/KMeansQuantization.h"
#include "compress/LinearQuantization.h"
#include "io/Text.h"
#include "nn/accuracy/PreparedSubnet.h"
#include "nn/TorchRuntime.h"
#include "workspace/CalibrationData.h"

#include <ATen/ATen.h>

#include <chrono>
#include <set>

namespace tinyscope {

namespace {

// One weight tensor (a raw conv / SE / classifier weight: it shares storage with the subnet) and
// what its method keeps between optimizer steps.
struct Quantized {
    std::string name;
    at::Tensor t;
    Codebook codebook;                 // k-means
    std::vector<float> shadow, last;   // linear: the float weights, and the quantized values last written
};

float* values(at::Tensor& t)
{
    if (!t.is_contiguous() || t.scalar_type() != at::kFloat) throw std::logic_error("quantization: a weight is not a contiguous float32 tensor");
    return t.data_ptr<float>();
}

std::size_t count(const at::Tensor& t) { return static_cast<std::size_t>(t.numel()); }

std::vector<float> linearValues(const float* w, const at::Tensor& t, int bits)
{
    const int outputs = static_cast<int>(t.size(0));
    const std::size_t per = count(t) / static_cast<std::size_t>(outputs);
    return dequantizePerChannel(quantizeWeightPerChannel(w, outputs, per, bits), per);
}

void write(at::Tensor& t, const std::vector<float>& v) { std::copy(v.begin(), v.end(), values(t)); }

QuantizedWeight describe(const Quantized& q)
{
    QuantizedWeight d{q.name, q.t.sizes().vec(), q.t.numel(), 0, 0};
    const float* v = q.t.data_ptr<float>();
    d.distinct_values = static_cast<std::int64_t>(std::set<float>(v, v + count(q.t)).size());
    const std::size_t per = count(q.t) / static_cast<std::size_t>(q.t.size(0));
    for (std::int64_t o = 0; o < q.t.size(0); ++o) {
        const float* c = v + static_cast<std::size_t>(o) * per;
        d.max_channel_values = std::max<std::int64_t>(d.max_channel_values, static_cast<std::int64_t>(std::set<float>(c, c + per).size()));
    }
    return d;
}

}  // namespace

const char* methodName(WeightQuantMethod m) { return m == WeightQuantMethod::KMeans ? "kmeans" : "linear"; }

Json WeightQuantResult::toJson() const
{
    Json runsJ = Json::array();
    for (const WeightQuantRun& r : runs) {
        Json tensorsJ = Json::array();
        for (const QuantizedWeight& t : r.tensors)
            tensorsJ.push_back({{"name", t.name}, {"shape", t.shape}, {"params", t.params}, {"distinct_values", t.distinct_values},
                                {"max_channel_values", t.max_channel_values}});
        Json qatJ = Json::array();
        for (const SubnetFineTuneEpoch& e : r.qat)
            qatJ.push_back({{"epoch", e.epoch}, {"loss", e.loss}, {"lr", e.lr}, {"top1", e.top1}, {"seconds", e.seconds}});
        runsJ.push_back({{"method", methodName(r.method)},
                         {"bits", r.bits},
                         {"top1", r.top1},
                         {"qat", qatJ},
                         {"qat_top1", r.qat.empty() ? Json(nullptr) : Json(r.qat_top1)},
                         {"lab_size_bits", r.lab_size_bits},
                         {"weight_bits", r.weight_bits},
                         {"other_bits", r.other_bits},
                         {"overhead_bits", r.overhead_bits},
                         {"tensors", tensorsJ},
                         {"histogram", {{"lo", r.histogram.lo}, {"hi", r.histogram.hi}, {"counts", r.histogram.counts}}},
                         {"sample", {{"tensor", r.sample_tensor}, {"values", r.sample_values}, {"labels", r.sample_labels}, {"centroids", r.centroids}}}});
    }
    return {{"data", data},        {"images", images},         {"float_top1", float_top1}, {"params", params},
            {"float_bits", float_bits}, {"qat_data", train_data.empty() ? Json(nullptr) : Json(train_data)},
            {"runs", runsJ},       {"seconds", seconds}};
}

WeightQuantResult runWeightQuantization(const WeightQuantRequest& rq, const JobControl& job)
{
    const auto started = std::chrono::steady_clock::now();
    const EvaluationRequest& er = rq.evaluation;
    for (int b : rq.bits) quantizedRange(b);   // InputError outside 1–8
    if (rq.bits.empty() || rq.methods.empty()) throw InputError("give at least one bit width and one method");
    rq.qat.check();
    configureAllocator();
    setTorchThreads(er.threads);
    const EvaluationData ed = evaluationData(er);
    const std::unique_ptr<ImageDataset> train = rq.qat.epochs > 0 ? openTrainingData(er.space, rq.qat_data, "--qat-data DATASET") : nullptr;
    const std::unique_ptr<ImageDataset> calib = evaluationCalibrationData(er);
    job.report(0, 1, "extracting and re-calibrating the subnet");
    Subnet sub = preparedSubnet(er, calib.get(), job);
    sub.setFolded(false);
    auto top1 = [&] { return measuredTop1(sub, er, ed, job); };

    // Everything training may change, to start each run from the same subnet.
    std::vector<std::pair<at::Tensor, at::Tensor>> saved;
    std::vector<Quantized> weights;
    WeightQuantResult r;
    for (auto& [name, t] : sub.stateDict()) {
        saved.emplace_back(t, t.clone());
        if (name.find("running_") == std::string::npos && name.find("num_batches_tracked") == std::string::npos) r.params += t.numel();
        if (t.dim() > 1 && t.is_floating_point()) weights.push_back({name, t, {}, {}, {}});
    }
    std::int64_t quantizedParams = 0, outputs = 0;
    std::size_t largest = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        quantizedParams += weights[i].t.numel(), outputs += weights[i].t.size(0);
        if (weights[i].t.numel() > weights[largest].t.numel()) largest = i;
    }
    if (weights.empty()) throw InputError("the subnet has no weight to quantize");
    auto originalOf = [&](const at::Tensor& t) -> const at::Tensor& {
        for (const auto& [live, copy] : saved)
            if (live.data_ptr() == t.data_ptr()) return copy;
        throw std::logic_error("quantization: a weight without its saved copy");
    };
    r.data = ed.data->source();
    r.images = ed.items.size();
    r.float_bits = r.params * 32;
    if (train) r.train_data = train->source();
    const std::size_t runs = rq.bits.size() * rq.methods.size();
    const std::size_t perRun = 1 + (train ? rq.qat.steps(train->size()) : 0);
    std::size_t done = 0;
    const std::size_t total = 1 + runs * perRun;
    job.report(done++, total, "float top-1");
    r.float_top1 = top1();

    for (WeightQuantMethod method : rq.methods)
        for (int bits : rq.bits) {
            const std::string what = std::string(methodName(method)) + " " + std::to_string(bits) + "-bit";
            job.check();
            job.report(done++, total, what);
            for (auto& [t, copy] : saved) t.copy_(copy);
            WeightQuantRun run;
            run.method = method;
            run.bits = bits;
            for (Quantized& q : weights) {
                float* w = values(q.t);
                if (method == WeightQuantMethod::KMeans) {
                    q.codebook = kmeansQuantize(w, count(q.t), bits, rq.kmeans_seed);
                    write(q.t, reconstruct(q.codebook));
                    run.overhead_bits += codebookBits(q.codebook);
                } else {
                    q.shadow.assign(w, w + count(q.t));
                    q.last = linearValues(w, q.t, bits);
                    write(q.t, q.last);
                }
            }
            if (method == WeightQuantMethod::Linear) run.overhead_bits = outputs * 32;   // a float32 scale per output channel
            {   // The k-means view: the largest tensor's float weights and their clusters (levels).
                const Quantized& q = weights[largest];
                const at::Tensor& original = originalOf(q.t);
                const float* w = original.data_ptr<float>();
                const std::size_t n = count(q.t), stride = (n + 4095) / 4096;
                std::vector<std::int8_t> levels;
                if (method == WeightQuantMethod::Linear)
                    levels = quantizeWeightPerChannel(w, static_cast<int>(q.t.size(0)), n / static_cast<std::size_t>(q.t.size(0)), bits).q;
                else run.centroids = q.codebook.centroids;
                run.sample_tensor = q.name;
                for (std::size_t i = 0; i < n; i += stride) {
                    run.sample_values.push_back(w[i]);
                    run.sample_labels.push_back(method == WeightQuantMethod::KMeans ? q.codebook.labels[i] : levels[i] + (1 << (bits - 1)));
                }
            }
            run.top1 = top1();
            if (train) {
                run.qat = fineTuneSubnet(
                    sub, *train, rq.qat,
                    [&] {
                        for (Quantized& q : weights) {
                            float* w = values(q.t);
                            const std::size_t n = count(q.t);
                            if (method == WeightQuantMethod::KMeans) {   // the lab's apply(update_centroids=True)
                                updateCodebook(q.codebook, w, n);
                                for (std::size_t i = 0; i < n; ++i) w[i] = q.codebook.centroids[q.codebook.labels[i]];   // reconstruct, in place
                            } else {   // the step's change goes to the float weights, which are quantized again
                                for (std::size_t i = 0; i < n; ++i) q.shadow[i] += w[i] - q.last[i];
                                q.last = linearValues(q.shadow.data(), q.t, bits);
                                write(q.t, q.last);
                            }
                        }
                    },
                    top1, job.within(done, total, what + ": "));
                run.qat_top1 = run.qat.back().top1;
                done += perRun - 1;
            }
            run.lab_size_bits = r.params * bits;
            run.weight_bits = quantizedParams * bits;
            run.other_bits = (r.params - quantizedParams) * 32;
            std::vector<float> all;
            for (Quantized& q : weights) {
                run.tensors.push_back(describe(q));
                all.insert(all.end(), values(q.t), values(q.t) + count(q.t));
            }
            run.histogram = weightHistogram(all, 128);
            r.runs.push_back(std::move(run));
        }
    for (auto& [t, copy] : saved) t.copy_(copy);
    job.report(total, total, "done");
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
}

}  // namespace tinyscope
