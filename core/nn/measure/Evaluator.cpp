#include "nn/measure/Evaluator.h"

#include "Error.h"
#include "nn/onednn/OneDnnCalibration.h"
#include "nn/OneDnnInfo.h"
#include "nn/onednn/OneDnnSubnet.h"
#include "nn/ShardPool.h"
#include "nn/TorchRuntime.h"
#include "space/PyRandom.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <map>

namespace tinyscope {

at::Tensor batchImages(const Batch& b)
{
    const std::int64_t r = b.resolution;
    return at::from_blob(const_cast<float*>(b.pixels.data()), {static_cast<std::int64_t>(b.size()), 3, r, r}, at::kFloat);
}

namespace {

// BN re-calibration on oneDNN (OneDnnCalibration): the batch statistics of `items` in batches of
// `bs`, then their averages into the running statistics, as applyCalibration does for LibTorch's.
// Batches are independent (each normalises with its own statistics), so T = torchThreads() of them
// run side by side, each on a single-threaded plan of its worker (plans per batch size and worker),
// the next T decoded meanwhile; each batch's sums are added to the total in batch order, so the
// result is the same bit for bit on any number of threads. Throws OneDnnRefused.
std::size_t calibrateOnOneDnn(Subnet& subnet, const ImageDataset& data, const std::vector<std::size_t>& items, int res, int bs, const JobControl& job)
{
    const UnfoldedSubnet net = unfoldedSubnet(subnet.weights());
    const std::size_t n = items.size(), step = static_cast<std::size_t>(bs);
    const int threads = std::max(1, torchThreads());
    const std::size_t groupStep = step * static_cast<std::size_t>(threads);
    std::map<std::pair<int, int>, std::unique_ptr<OneDnnCalibration>> plans;   // (images, worker)
    std::unique_ptr<ShardPool> pool;
    if (threads > 1 && n > step) pool = std::make_unique<ShardPool>(threads);
    // The batches of items [start, start + groupStep), decoded.
    auto group = [&](std::size_t start) {
        std::vector<Batch> batches;
        for (std::size_t b = start; b < std::min(n, start + groupStep); b += step)
            batches.push_back(loadBatch(data, std::vector<std::size_t>(items.begin() + static_cast<std::ptrdiff_t>(b),
                                                                       items.begin() + static_cast<std::ptrdiff_t>(std::min(n, b + step))),
                                        res));
        return batches;
    };
    BnStatisticSums sums;
    std::future<std::vector<Batch>> next = std::async(std::launch::async, group, std::size_t{0});
    for (std::size_t start = 0; start < n; start += groupStep) {
        job.check();
        std::vector<Batch> batches = next.get();
        if (start + groupStep < n) next = std::async(std::launch::async, group, start + groupStep);
        const int count = static_cast<int>(batches.size());
        std::vector<BnStatisticSums> parts(batches.size());
        for (int k = 0; k < count; ++k) {
            const int images = static_cast<int>(batches[static_cast<std::size_t>(k)].size());
            std::unique_ptr<OneDnnCalibration>& plan = plans[{images, k}];
            if (images > 0 && !plan) plan = std::make_unique<OneDnnCalibration>(net, images);
        }
        auto task = [&](int k) {
            const Batch& b = batches[static_cast<std::size_t>(k)];
            if (b.size() > 0) plans.at({static_cast<int>(b.size()), k})->run(b.pixels.data(), parts[static_cast<std::size_t>(k)]);
        };
        if (pool && count > 1)
            pool->run(count, task);
        else
            for (int k = 0; k < count; ++k) task(k);
        for (const BnStatisticSums& part : parts) addBnStatistics(sums, part);
        job.report(std::min(n, start + groupStep), n, "calibrating BN");
    }
    BnCalibration cal;
    cal.count = sums.images;
    for (std::size_t i = 0; i < sums.mean.size(); ++i) {
        const auto c = static_cast<std::int64_t>(sums.mean[i].size());
        cal.mean_sum.push_back(at::from_blob(sums.mean[i].data(), {c}, at::kDouble).clone());
        cal.var_sum.push_back(at::from_blob(sums.var[i].data(), {c}, at::kDouble).clone());
    }
    applyCalibration(subnet.weights(), cal);
    return static_cast<std::size_t>(cal.count);
}

}  // namespace

std::size_t calibrateBn(Subnet& subnet, const ImageDataset& data, const CalibrationOptions& opt, const JobControl& job, CalibrationReport* report)
{
    if (opt.batch < 1) throw InputError("BN re-calibration: batch size must be at least 1, got " + std::to_string(opt.batch));
    if (opt.images < 1 || data.size() < 1)
        throw InputError("BN re-calibration: needs at least one image (" + std::to_string(opt.images) + " asked, " + data.source() + " holds " +
                         std::to_string(data.size()) + ")");
    // A seeded subset without replacement (a partial Fisher-Yates shuffle).
    std::vector<std::size_t> all(data.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    const std::size_t n = std::min(opt.images, all.size());
    PyRandom rng(opt.seed);
    for (std::size_t i = 0; i < n; ++i) std::swap(all[i], all[i + rng.randbelow(static_cast<std::uint32_t>(all.size() - i))]);
    all.resize(n);
    const int res = opt.resolution > 0 ? opt.resolution : subnet.config().image_size;
    const int bs = opt.batch;

    subnet.setFolded(false);
    CalibrationReport done;
    if (opt.engine == EvalEngine::OneDnn) {
        if (res != subnet.config().image_size) {
            done.note = "BN re-calibration at " + std::to_string(res) + " px, not the subnet's " + std::to_string(subnet.config().image_size) +
                        " px: run with LibTorch";
        } else {
            try {
                done.images = calibrateOnOneDnn(subnet, data, all, res, bs, job);
                done.engine = "onednn";
                if (report) *report = done;
                return done.images;
            } catch (const OneDnnRefused& e) {
                done.note = std::string(e.what()) + " — BN re-calibrated with LibTorch";
            }
        }
    }
    BnCalibration cal;
    ForwardOptions fo;
    fo.bn = BnMode::Calibrate;
    fo.calibration = &cal;
    at::NoGradGuard guard;
    for (std::size_t start = 0; start < n; start += static_cast<std::size_t>(bs)) {
        job.check();
        std::vector<std::size_t> items(all.begin() + static_cast<std::ptrdiff_t>(start),
                                       all.begin() + static_cast<std::ptrdiff_t>(std::min(n, start + static_cast<std::size_t>(bs))));
        Batch b = loadBatch(data, items, res);
        if (b.size() == 0) continue;
        subnet.forward(batchImages(b), fo);
        cal.count += static_cast<std::int64_t>(b.size());
        job.report(start + items.size(), n, "calibrating BN");
    }
    applyCalibration(subnet.weights(), cal);
    done.images = static_cast<std::size_t>(cal.count);
    done.engine = "libtorch";
    if (report) *report = done;
    return done.images;
}

void requireEvalDtype(EvalEngine engine, EvalDtype dtype)
{
    if (dtype != EvalDtype::Bf16) return;
    if (engine != EvalEngine::OneDnn) throw InputError("--dtype bf16 needs the oneDNN engine (--engine onednn)");
    if (!oneDnnHasBf16())
        throw InputError("--dtype bf16 needs AVX-512 BF16 (oneDNN ISA avx512_core_bf16) or AMX; oneDNN runs " + oneDnnIsa() + " on this CPU");
}

EvalResult evaluateTop1(const Subnet& subnet, const ImageDataset& data, const std::vector<std::size_t>& items, int batch,
                        const JobControl& job, EvalEngine engine, EvalDtype dtype)
{
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    EvalResult r;
    const int res = subnet.config().image_size;
    if (batch < 1) throw InputError("evaluation: batch size must be at least 1, got " + std::to_string(batch));
    if (items.empty()) throw InputError("evaluation: no images selected from " + data.source());
    const std::size_t bs = static_cast<std::size_t>(batch);
    auto slice = [&](std::size_t start) {
        return std::vector<std::size_t>(items.begin() + static_cast<std::ptrdiff_t>(start),
                                        items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), start + bs)));
    };
    r.isa = oneDnnIsa();
    requireEvalDtype(engine, dtype);
    // oneDNN: the plans for the full batch and the remainder are built before the first image, so a
    // subnet oneDNN refuses is measured by LibTorch from the start.
    std::unique_ptr<OneDnnSubnet> dnn;
    if (engine == EvalEngine::OneDnn) {
        try {
            dnn = std::make_unique<OneDnnSubnet>(subnet, dtype == EvalDtype::Bf16 ? OneDnnDtype::Bf16 : OneDnnDtype::Fp32);
            dnn->prepareFor(static_cast<int>(std::min(bs, items.size())), torchThreads());
            if (items.size() > bs && items.size() % bs) dnn->prepareFor(static_cast<int>(items.size() % bs), torchThreads());
            r.engine = "onednn";
            r.dtype = evalDtypeName(dtype);
        } catch (const OneDnnRefused& e) {
            dnn.reset();
            r.engine_note = std::string(e.what()) + " — measured with LibTorch";
        }
    }
    at::NoGradGuard guard;
    std::vector<float> dnnLogits;
    // The logits of one batch (n × classes, row-major) from the engine in use.
    auto logitsOf = [&](const Batch& b, at::Tensor& keep) -> const float* {
        const int n = static_cast<int>(b.size());
        if (dnn) {
            try {
                dnnLogits.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(dnn->classes()));
                dnn->forward(b.pixels.data(), n, dnnLogits.data());
                if (r.classes == 0) r.classes = dnn->classes();
                return dnnLogits.data();
            } catch (const OneDnnRefused& e) {   // a batch shortened by skipped images, refused
                dnn.reset();
                r.engine = "onednn+libtorch";
                if (dtype != EvalDtype::Fp32) r.dtype += "+fp32";
                r.engine_note = std::string(e.what()) + " — this and later batches measured with LibTorch";
            }
        }
        keep = subnet.forward(batchImages(b)).contiguous();
        if (r.classes == 0) r.classes = static_cast<int>(keep.size(1));
        return keep.data_ptr<float>();
    };
    // Decode the next batch while the current one runs.
    std::future<Batch> next;
    if (!items.empty()) next = std::async(std::launch::async, [&, s = slice(0)] { return loadBatch(data, s, res); });
    for (std::size_t start = 0; start < items.size(); start += bs) {
        job.check();
        Batch b = next.get();
        if (start + bs < items.size())
            next = std::async(std::launch::async, [&, s = slice(start + bs)] { return loadBatch(data, s, res); });
        r.skipped += b.skipped.size();
        for (auto& s : b.skipped)
            if (r.skipped_examples.size() < 5) r.skipped_examples.push_back(s);
        if (b.size() > 0) {
            at::Tensor keep;
            const float* logits = logitsOf(b, keep);
            const std::size_t k = static_cast<std::size_t>(r.classes);
            if (r.class_images.empty()) {
                r.class_images.assign(k, 0);
                r.class_correct.assign(k, 0);
                r.confusion.assign(k * k, 0);
            }
            for (std::size_t i = 0; i < b.size(); ++i) {
                // The first largest logit, as at::argmax picks it.
                const float* row = logits + i * k;
                const std::size_t p = static_cast<std::size_t>(std::max_element(row, row + k) - row);
                const bool hit = static_cast<std::int64_t>(p) == b.labels[i];
                r.correct += hit;
                const auto truth = static_cast<std::size_t>(b.labels[i]);
                if (truth < k) {   // a label beyond the logits (checked by the callers) counts only as wrong
                    ++r.class_images[truth];
                    r.class_correct[truth] += hit;
                    ++r.confusion[truth * k + p];
                }
            }
            r.images += b.size();
        }
        job.report(std::min(items.size(), start + bs), items.size(), "evaluating");
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.top1 = r.images ? 100.0 * static_cast<double>(r.correct) / static_cast<double>(r.images) : 0.0;
    r.images_per_second = r.seconds > 0 ? static_cast<double>(r.images) / r.seconds : 0.0;
    return r;
}

std::vector<ClassScore> classifyImage(const Subnet& subnet, const Image& image, const std::vector<std::string>& names)
{
    const int r = subnet.config().image_size;
    std::vector<float> px(static_cast<std::size_t>(3 * r * r));
    imageToTensor(image, r, px.data());
    at::Tensor x = at::from_blob(px.data(), {1, 3, r, r}, at::kFloat);
    at::Tensor prob = at::softmax(subnet.forward(x), 1)[0].contiguous();
    std::vector<ClassScore> out;
    const float* p = prob.data_ptr<float>();
    for (int i = 0; i < static_cast<int>(prob.numel()); ++i) out.push_back({i, className(names, i), static_cast<double>(p[i])});
    std::sort(out.begin(), out.end(), [](const ClassScore& a, const ClassScore& b) { return a.probability > b.probability; });
    return out;
}

}  // namespace tinyscope
