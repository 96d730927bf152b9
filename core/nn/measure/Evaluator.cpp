#include "nn/measure/Evaluator.h"

#include "Error.h"
#include "nn/onednn/OneDnnInfo.h"
#include "nn/onednn/OneDnnSubnet.h"
#include "nn/TorchRuntime.h"
#include "space/PyRandom.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <future>

namespace tinyscope {

at::Tensor batchImages(const Batch& b)
{
    const std::int64_t r = b.resolution;
    return at::from_blob(const_cast<float*>(b.pixels.data()), {static_cast<std::int64_t>(b.size()), 3, r, r}, at::kFloat);
}

std::size_t calibrateBn(Subnet& subnet, const ImageDataset& data, const CalibrationOptions& opt, const JobControl& job)
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
    return static_cast<std::size_t>(cal.count);
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
