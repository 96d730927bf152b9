#include "nn/predictor/AccuracyPredictor.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/CpuInfo.h"
#include "io/DataPaths.h"
#include "io/Text.h"
#include "nn/ShardPool.h"
#include "nn/TorchRuntime.h"
#include "predict/AdamUpdate.h"
#include "predict/FixedOrderGemm.h"
#include "space/ArchEncoder.h"
#include "space/PyRandom.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>

namespace tinyscope {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr char kMagic[8] = {'T', 'S', 'A', 'C', 'C', 'P', 'R', '1'};

// Parameters of one MLP in one flat float tensor, with per-layer views. The same layout holds the
// gradients and Adam's two moments.
struct Layout {
    std::vector<int> dims;   // input, hidden..., 1
    std::int64_t count() const
    {
        std::int64_t n = 0;
        for (std::size_t l = 0; l + 1 < dims.size(); ++l) n += static_cast<std::int64_t>(dims[l + 1]) * dims[l] + (isLast(l) ? 0 : dims[l + 1]);
        return n;
    }
    bool isLast(std::size_t l) const { return l + 2 == dims.size(); }
    std::size_t layers() const { return dims.size() - 1; }
};

struct Params {
    at::Tensor flat;
    std::vector<at::Tensor> W, b;   // W[l]: [out, in]; b[l]: [out], undefined for the last layer

    Params() = default;
    Params(const Layout& lay, at::Tensor storage) : flat(std::move(storage))
    {
        std::int64_t off = 0;
        for (std::size_t l = 0; l < lay.layers(); ++l) {
            const std::int64_t out = lay.dims[l + 1], in = lay.dims[l];
            W.push_back(flat.narrow(0, off, out * in).view({out, in}));
            off += out * in;
            if (lay.isLast(l)) {
                b.emplace_back();
            } else {
                b.push_back(flat.narrow(0, off, out));
                off += out;
            }
        }
    }
    static Params zeros(const Layout& lay) { return Params(lay, at::zeros({lay.count()}, at::kFloat)); }
};

// Every matrix product of the MLP, forward and backward, goes through fixedOrderGemm: each sum has
// one order on every CPU, so training and prediction give the same bits everywhere (BLAS kernels
// differ per CPU; see predict/FixedOrderGemm.h).

// out[rows, W.size(0)] = (bias +) in[rows, W.size(1)] · Wᵀ, given Wᵀ ([in, out], contiguous).
void linearForward(const float* in, std::int64_t rows, const at::Tensor& wt, const at::Tensor& bias, float* out)
{
    GemmOperands g;
    g.M = rows;
    g.K = wt.size(0);
    g.N = wt.size(1);
    g.a = in;
    g.aRow = g.K;
    g.aCol = 1;
    g.b = wt.data_ptr<float>();
    g.ldb = g.N;
    g.c = out;
    g.ldc = g.N;
    g.bias = bias.defined() ? bias.data_ptr<float>() : nullptr;
    fixedOrderGemm(g);
}

void reluInPlace(float* v, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i) v[i] = v[i] > 0 ? v[i] : 0.0f;
}

// Wᵀ of every layer, refreshed from the weights (a copy: no rounding).
void transposeInto(const Params& p, std::vector<at::Tensor>& wt)
{
    wt.resize(p.W.size());
    for (std::size_t l = 0; l < p.W.size(); ++l) {
        if (!wt[l].defined()) wt[l] = at::empty({p.W[l].size(1), p.W[l].size(0)}, at::kFloat);
        wt[l].copy_(p.W[l].t());
    }
}

// nn.Linear's default initialisation: weights and biases ~ U(−1/√fan_in, 1/√fan_in).
void initialise(Params& p, PyRandom& rng)
{
    for (std::size_t l = 0; l < p.W.size(); ++l) {
        const double bound = 1.0 / std::sqrt(static_cast<double>(p.W[l].size(1)));
        for (at::Tensor* t : {&p.W[l], &p.b[l]}) {
            if (!t->defined()) continue;
            float* v = t->data_ptr<float>();
            for (std::int64_t i = 0; i < t->numel(); ++i) v[i] = static_cast<float>((rng.random() * 2 - 1) * bound);
        }
    }
}

// LibTorch's errors carry a C++ backtrace in what(); users get the message only.
template <class F>
auto withoutBacktrace(F f) -> decltype(f())
{
    try {
        return f();
    } catch (const c10::Error& e) {
        throw std::runtime_error(std::string("LibTorch: ") + e.what_without_backtrace());
    }
}

std::string stemOf(const std::string& path)
{
    for (const char* ext : {".bin", ".json"}) {
        const std::size_t n = std::strlen(ext);
        if (path.size() > n && path.compare(path.size() - n, n, ext) == 0) return path.substr(0, path.size() - n);
    }
    return path;
}

std::string baseName(const std::string& p)
{
    auto s = p.rfind('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

template <class T>
void putLE(std::string& out, T v)
{
    static_assert(std::is_trivially_copyable_v<T>);
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));   // x86-64 and aarch64 Linux are little-endian
    out.append(b, sizeof(T));
}

}  // namespace

std::pair<std::string, std::string> predictorFilePaths(const std::string& path)
{
    const std::string stem = stemOf(path);
    return {stem + ".bin", stem + ".json"};
}

struct AccuracyPredictor::Impl {
    DesignSpace space;
    ArchEncoder encoder;
    Layout layout;
    std::vector<Params> members;
    PredictorCard card;
    PredictionCache cache;
    bool caching = true;
    int threads = defaultBatchThreads();
    std::string path;
    std::vector<std::vector<at::Tensor>> wt;   // per member and layer: Wᵀ [in, out] (row sums of the first for one-hot inputs)
    mutable std::unique_ptr<ShardPool> pool;
    mutable std::mutex predictMutex;   // predictions may come from several threads (GUI): one at a time

    ShardPool& shardPool() const
    {
        if (!pool || pool->threads() != threads) pool = std::make_unique<ShardPool>(threads);
        return *pool;
    }

    explicit Impl(const DesignSpace& s) : space(s), encoder(space), cache(space)
    {
        layout.dims = {encoder.dims(), 400, 400, 400, 1};
        card.space_name = space.name;
        card.space_fingerprint = spaceFingerprint(space);
        card.encoder_dims = encoder.dims();
        card.hidden = {400, 400, 400};
    }

    void prepareInference()
    {
        wt.assign(members.size(), {});
        for (std::size_t m = 0; m < members.size(); ++m) transposeInto(members[m], wt[m]);
        cache.clear();
    }

    // One-hot positions of each config (the encoder's ones; ~22-42 of 128).
    std::vector<std::vector<int>> oneHot(const std::vector<SubnetConfig>& configs) const
    {
        std::vector<std::vector<int>> ones(configs.size());
        for (std::size_t i = 0; i < configs.size(); ++i) ones[i] = encoder.oneHotIndices(configs[i]);
        return ones;
    }

    // Mean over members of the MLP output plus the base accuracy, as fractions. The rows are split
    // in two shards run on the ShardPool. The first layer sums the weight rows of the one-hot
    // positions instead of multiplying by a mostly-zero input.
    std::vector<double> predictFractions(const std::vector<std::vector<int>>& ones, ShardPool& workers) const
    {
        const std::int64_t n = static_cast<std::int64_t>(ones.size());
        std::vector<double> out(ones.size(), 0.0);
        if (n == 0) return out;
        if (members.empty()) throw InputError("the accuracy predictor is not trained: train or load one first");
        const std::int64_t hidden = layout.dims[1];
        const int shards = n < 16 ? 1 : 2;
        const std::int64_t per = (n + shards - 1) / shards;
        workers.run(shards, [&](int shard) {
            const std::int64_t begin = shard * per, end = std::min(n, begin + per);
            if (begin >= end) return;
            const std::int64_t rows = end - begin;
            at::Tensor h1 = at::empty({rows, hidden}, at::kFloat);
            std::vector<at::Tensor> hs;   // outputs of the later layers
            for (std::size_t l = 1; l < layout.layers(); ++l) hs.push_back(at::empty({rows, layout.dims[l + 1]}, at::kFloat));
            for (std::size_t m = 0; m < members.size(); ++m) {
                const Params& p = members[m];
                const float* w = wt[m][0].data_ptr<float>();
                const float* b = p.b[0].data_ptr<float>();
                float* z = h1.data_ptr<float>();
                for (std::int64_t r = begin; r < end; ++r) {
                    float* row = z + (r - begin) * hidden;
                    std::memcpy(row, b, static_cast<std::size_t>(hidden) * sizeof(float));
                    for (int idx : ones[static_cast<std::size_t>(r)]) {
                        const float* wr = w + static_cast<std::int64_t>(idx) * hidden;
                        for (std::int64_t k = 0; k < hidden; ++k) row[k] += wr[k];
                    }
                    for (std::int64_t k = 0; k < hidden; ++k) row[k] = row[k] > 0 ? row[k] : 0;
                }
                const float* h = z;
                for (std::size_t l = 1; l < p.W.size(); ++l) {
                    float* o = hs[l - 1].data_ptr<float>();
                    linearForward(h, rows, wt[m][l], p.b[l], o);
                    if (p.b[l].defined()) reluInPlace(o, hs[l - 1].numel());
                    h = o;
                }
                const float* y = h;
                for (std::int64_t r = begin; r < end; ++r) out[static_cast<std::size_t>(r)] += y[r - begin];
            }
        });
        for (double& v : out) v = v / static_cast<double>(members.size()) + card.base_accuracy;
        return out;
    }
};

AccuracyPredictor::AccuracyPredictor(const DesignSpace& space) : d_(std::make_unique<Impl>(space)) {}
AccuracyPredictor::~AccuracyPredictor() = default;
AccuracyPredictor::AccuracyPredictor(AccuracyPredictor&&) noexcept = default;
AccuracyPredictor& AccuracyPredictor::operator=(AccuracyPredictor&&) noexcept = default;

bool AccuracyPredictor::trained() const { return !d_->members.empty(); }
const PredictorCard& AccuracyPredictor::card() const { return d_->card; }
const DesignSpace& AccuracyPredictor::space() const { return d_->space; }
std::string AccuracyPredictor::path() const { return d_->path; }
void AccuracyPredictor::setThreads(int threads) { d_->threads = threads < 1 ? 1 : threads; }
int AccuracyPredictor::threads() const { return d_->threads; }
void AccuracyPredictor::setCaching(bool on) { d_->caching = on; }
const PredictionCache& AccuracyPredictor::cache() const { return d_->cache; }
void AccuracyPredictor::clearCache()
{
    std::lock_guard<std::mutex> lock(d_->predictMutex);
    d_->cache.clear();
}

namespace {

at::Tensor toTensor(const std::vector<float>& v, std::int64_t rows, std::int64_t cols)
{
    at::Tensor t = at::empty({rows, cols}, at::kFloat);
    if (!v.empty()) std::memcpy(t.data_ptr<float>(), v.data(), v.size() * sizeof(float));
    return t;
}

std::vector<double> percent(const std::vector<double>& fractions)
{
    std::vector<double> p(fractions.size());
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = fractions[i] * 100.0;
    return p;
}

// Adam as torch.optim.Adam over one flat parameter vector (predict/AdamUpdate.h); the gradient is
// the sum of the shards' gradients, and the two workers update one half each.
void adamStep(at::Tensor& param, const std::vector<Params>& shardGrads, at::Tensor& m1, at::Tensor& m2, double lr,
              std::int64_t step, ShardPool& workers)
{
    const AdamConstants c = AdamConstants::at(lr, step);
    float* p = param.data_ptr<float>();
    const float* g0 = shardGrads[0].flat.data_ptr<float>();
    const float* g1 = shardGrads.size() > 1 ? shardGrads[1].flat.data_ptr<float>() : nullptr;
    float* m = m1.data_ptr<float>();
    float* v = m2.data_ptr<float>();
    const std::int64_t n = param.numel(), half = (n + 1) / 2 / 16 * 16;   // cache-line aligned halves
    workers.run(2, [&](int shard) { adamUpdate(p, g0, g1, m, v, shard == 0 ? 0 : half, shard == 0 ? half : n, c); });
}

// Half of a batch: its rows, activations and gradients. The two shards of a step run in parallel
// with single-threaded kernels and meet once, at the optimizer step.
struct Shard {
    std::vector<at::Tensor> H, dH;   // per layer: output (after ReLU for hidden layers), its gradient
    at::Tensor x, y, index;
    Params grad;
    double loss = 0;                 // sum of |pred − label| over the shard's rows

    Shard(const Layout& lay, std::int64_t rows) : grad(Params::zeros(lay))
    {
        for (std::size_t l = 0; l < lay.layers(); ++l) {
            H.push_back(at::empty({rows, lay.dims[l + 1]}, at::kFloat));
            dH.push_back(at::empty({rows, lay.dims[l + 1]}, at::kFloat));
        }
        x = at::empty({rows, lay.dims[0]}, at::kFloat);
        y = at::empty({rows, 1}, at::kFloat);
        index = at::empty({rows}, at::kLong);
    }

    // Forward and backward over `rows` examples (order[0..rows)), L1 loss averaged over `batch`.
    void run(const Params& p, const std::vector<at::Tensor>& wt, const at::Tensor& X, const at::Tensor& Y,
             const std::int64_t* order, std::int64_t rows, std::int64_t batch, double base)
    {
        loss = 0;
        if (rows == 0) {
            grad.flat.zero_();
            return;
        }
        const std::size_t L = p.W.size();
        at::Tensor idx = index.narrow(0, 0, rows), xs = x.narrow(0, 0, rows), ys = y.narrow(0, 0, rows);
        std::memcpy(idx.data_ptr<std::int64_t>(), order, static_cast<std::size_t>(rows) * sizeof(std::int64_t));
        at::index_select_out(xs, X, 0, idx);
        at::index_select_out(ys, Y, 0, idx);
        std::vector<at::Tensor> h(L), dh(L);
        for (std::size_t l = 0; l < L; ++l) {
            h[l] = H[l].narrow(0, 0, rows);
            dh[l] = dH[l].narrow(0, 0, rows);
            const at::Tensor& prev = l == 0 ? xs : h[l - 1];
            linearForward(prev.data_ptr<float>(), rows, wt[l], p.b[l], h[l].data_ptr<float>());
            if (p.b[l].defined()) reluInPlace(h[l].data_ptr<float>(), h[l].numel());
        }
        // d|pred − label| / d pred = sign(pred − label), averaged over the whole batch.
        const float* out = h[L - 1].data_ptr<float>();
        const float* lab = ys.data_ptr<float>();
        float* gout = dh[L - 1].data_ptr<float>();
        for (std::int64_t i = 0; i < rows; ++i) {
            const double diff = static_cast<double>(out[i]) + base - lab[i];
            loss += std::fabs(diff);
            gout[i] = static_cast<float>((diff > 0) - (diff < 0)) / static_cast<float>(batch);
        }
        static const float one = 1.0f;
        for (std::size_t l = L; l-- > 0;) {
            const at::Tensor& prev = l == 0 ? xs : h[l - 1];
            const std::int64_t out = p.W[l].size(0), in = p.W[l].size(1);
            GemmOperands g;   // dW = dhᵀ · prev: [out, in], summed over the rows in order
            g.M = out;
            g.N = in;
            g.K = rows;
            g.a = dh[l].data_ptr<float>();
            g.aRow = 1;
            g.aCol = out;
            g.b = prev.data_ptr<float>();
            g.ldb = in;
            g.c = grad.W[l].data_ptr<float>();
            g.ldc = in;
            fixedOrderGemm(g);
            if (grad.b[l].defined()) {   // db = column sums of dh: 1 · dh[r][o] is exact
                GemmOperands s = g;
                s.M = 1;
                s.N = out;
                s.a = &one;
                s.aRow = s.aCol = 0;
                s.b = dh[l].data_ptr<float>();
                s.ldb = out;
                s.c = grad.b[l].data_ptr<float>();
                s.ldc = out;
                fixedOrderGemm(s);
            }
            if (l > 0) {   // dprev = dh · W, then ReLU'
                GemmOperands d;
                d.M = rows;
                d.N = in;
                d.K = out;
                d.a = dh[l].data_ptr<float>();
                d.aRow = out;
                d.aCol = 1;
                d.b = p.W[l].data_ptr<float>();
                d.ldb = in;
                d.c = dh[l - 1].data_ptr<float>();
                d.ldc = in;
                fixedOrderGemm(d);
                at::threshold_backward_out(dh[l - 1], dh[l - 1], h[l - 1], 0);
            }
        }
    }
};

}  // namespace

void AccuracyPredictor::train(const AccuracyDataset& data, const PredictorRecipe& recipe, const TrainingCallbacks& cb)
{
    withoutBacktrace([&] { trainImpl(data, recipe, cb); });
}

void AccuracyPredictor::trainImpl(const AccuracyDataset& data, const PredictorRecipe& recipe, const TrainingCallbacks& cb)
{
    recipe.validate();
    Impl& im = *d_;
    const DatasetSplit split = data.split(recipe.validation_fraction, recipe.seed);
    data.requireTrainable(split);
    const std::int64_t in = im.encoder.dims();
    const std::int64_t nTrain = static_cast<std::int64_t>(split.train.size());
    const at::Tensor Xtrain = toTensor(data.features(im.encoder, split.train), nTrain, in);
    const at::Tensor Ytrain = toTensor(data.labels(split.train), nTrain, 1);
    std::vector<SubnetConfig> valConfigs;
    std::vector<double> measuredVal;
    for (std::size_t i : split.validation) {
        valConfigs.push_back(data.samples()[i].config);
        measuredVal.push_back(data.samples()[i].top1);
    }
    const std::vector<std::vector<int>> valOnes = im.oneHot(valConfigs);
    const double base = data.meanLabel();

    ShardPool workers(recipe.threads);   // parallelism comes from the shards; kernels run single-threaded
    c10::InferenceMode inference;        // no autograd: the backward pass is written out in Shard::run
    const Layout& lay = im.layout;
    const std::int64_t B = std::min<std::int64_t>(recipe.batch_size, nTrain);
    const std::int64_t stepsPerEpoch = (nTrain + B - 1) / B;
    const std::int64_t totalSteps = stepsPerEpoch * recipe.epochs * recipe.ensemble;
    const auto start = std::chrono::steady_clock::now();
    auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

    PredictorCard card = im.card;
    card.base_accuracy = base;
    card.recipe = recipe;
    card.data_origin = data.origin();
    card.data_pairs = data.size();
    card.train_pairs = split.train.size();
    card.validation_pairs = split.validation.size();
    card.unseen_features = data.unseenFeatures(im.encoder, split.train);
    card.history.clear();
    card.cpu = hostCpu();
    card.cpu.kernels = {{"predictor_gemm", std::string("fixed-order, ") + gemmIsaName(bestGemmIsa()) + " lanes"}};

    constexpr int kShards = 2;
    const std::int64_t half = (B + 1) / 2;
    std::vector<Shard> shards;
    for (int i = 0; i < kShards; ++i) shards.emplace_back(lay, half);
    std::vector<Params> shardGrads;
    for (const Shard& sh : shards) shardGrads.push_back(sh.grad);

    // Validation metrics of some members, through the same inference path as predict().
    double validationSeconds = 0;
    auto validate = [&](const std::vector<Params>& members) {
        const double t0 = seconds();
        Impl probe(im.space);
        probe.members = members;
        probe.card.base_accuracy = base;
        probe.prepareInference();
        PredictionMetrics m = measurePredictions(percent(probe.predictFractions(valOnes, workers)), measuredVal);
        validationSeconds += seconds() - t0;
        return m;
    };

    std::vector<Params> trainedMembers;
    std::int64_t stepsDone = 0;
    const std::int64_t progressEvery = std::max<std::int64_t>(1, totalSteps / 200);
    for (int member = 0; member < recipe.ensemble; ++member) {
        PyRandom rng(recipe.seed * 7919 + 1 + static_cast<std::uint64_t>(member));
        Params p(lay, at::empty({lay.count()}, at::kFloat));
        initialise(p, rng);
        Params m1 = Params::zeros(lay), m2 = Params::zeros(lay);
        std::vector<at::Tensor> wt;   // Wᵀ of this step's weights
        std::vector<std::int64_t> order(static_cast<std::size_t>(nTrain));
        for (std::int64_t i = 0; i < nTrain; ++i) order[static_cast<std::size_t>(i)] = i;
        std::int64_t step = 0;
        for (int epoch = 1; epoch <= recipe.epochs; ++epoch) {
            for (std::size_t i = order.size(); i-- > 1;) std::swap(order[i], order[rng.randbelow(static_cast<std::uint32_t>(i + 1))]);
            double lossSum = 0;
            for (std::int64_t s = 0; s < stepsPerEpoch; ++s) {
                if (cb.cancel && cb.cancel->load()) throw CancelledError();
                const std::int64_t lo = s * B, nb = std::min(B, nTrain - lo), first = (nb + 1) / 2;
                transposeInto(p, wt);
                workers.run(kShards, [&](int k) {
                    const std::int64_t off = k == 0 ? 0 : first, rows = k == 0 ? first : nb - first;
                    shards[static_cast<std::size_t>(k)].run(p, wt, Xtrain, Ytrain, order.data() + lo + off, rows, nb, base);
                });
                lossSum += (shards[0].loss + shards[1].loss) / static_cast<double>(nb);
                ++step;
                double lr = recipe.learning_rate;
                if (recipe.schedule == "cosine") {
                    const double total = static_cast<double>(stepsPerEpoch) * recipe.epochs;
                    lr *= 0.5 * (1 + std::cos(kPi * static_cast<double>(step - 1) / total));
                }
                adamStep(p.flat, shardGrads, m1.flat, m2.flat, lr, step, workers);
                if (++stepsDone % progressEvery == 0 && cb.onProgress)
                    cb.onProgress(static_cast<double>(stepsDone) / static_cast<double>(totalSteps));
            }
            EpochRecord rec;
            rec.epoch = epoch;
            rec.train_loss = lossSum / static_cast<double>(stepsPerEpoch) * 100.0;
            if (!valOnes.empty()) rec.validation = validate({p});
            rec.seconds = seconds();
            if (member == 0) card.history.push_back(rec);
            if (cb.onEpoch) cb.onEpoch(rec, member);
        }
        trainedMembers.push_back(std::move(p));
    }
    card.training_seconds = seconds();
    card.validation_seconds = validationSeconds;
    if (!valOnes.empty()) card.validation = recipe.ensemble == 1 ? card.history.back().validation : validate(trainedMembers);
    im.members = std::move(trainedMembers);
    im.card = card;
    im.card.weights_file.clear();
    im.card.weights_bytes = 0;
    im.card.weights_crc32 = 0;
    im.path.clear();
    im.prepareInference();
    if (cb.onProgress) cb.onProgress(1.0);
}

std::vector<double> AccuracyPredictor::predictUncached(const std::vector<SubnetConfig>& configs) const
{
    std::lock_guard<std::mutex> lock(d_->predictMutex);
    return withoutBacktrace([&] { return percent(d_->predictFractions(d_->oneHot(configs), d_->shardPool())); });
}

std::vector<double> AccuracyPredictor::predict(const std::vector<SubnetConfig>& configs)
{
    if (!d_->caching) return predictUncached(configs);
    std::lock_guard<std::mutex> lock(d_->predictMutex);
    return withoutBacktrace([&] {
        return d_->cache.resolve(configs, [this](const std::vector<SubnetConfig>& batch) {
            return percent(d_->predictFractions(d_->oneHot(batch), d_->shardPool()));
        });
    });
}

std::string AccuracyPredictor::describe() const
{
    const PredictorCard& c = d_->card;
    std::string s = "MLP predictor";
    if (c.recipe.ensemble > 1) s += " (ensemble of " + std::to_string(c.recipe.ensemble) + ")";
    s += " for " + c.space_name;
    if (c.validation.count > 0) s += ", validation MAE " + formatFixed(c.validation.mae, 3) + " points";
    if (!d_->path.empty()) s += ", " + d_->path;
    return s;
}

std::vector<std::string> AccuracyPredictor::caveats(const SubnetConfig& config) const
{
    std::vector<std::string> out;
    const std::vector<int>& unseen = d_->card.unseen_features;
    for (int pos : d_->encoder.oneHotIndices(config))
        if (std::find(unseen.begin(), unseen.end(), pos) != unseen.end())
            out.push_back(featureName(d_->encoder, pos) + " never occurs in the predictor's training data: its accuracy is an extrapolation");
    return out;
}

PredictionMetrics AccuracyPredictor::evaluate(const AccuracyDataset& data, const std::vector<std::size_t>& rows) const
{
    std::vector<SubnetConfig> configs;
    std::vector<double> measured;
    configs.reserve(rows.size());
    for (std::size_t r : rows) {
        configs.push_back(data.samples()[r].config);
        measured.push_back(data.samples()[r].top1);
    }
    return measurePredictions(predictUncached(configs), measured);
}

DatasetSplit AccuracyPredictor::splitOf(const AccuracyDataset& data) const
{
    return data.split(d_->card.recipe.validation_fraction, d_->card.recipe.seed);
}

void AccuracyPredictor::save(const std::string& path)
{
    if (!trained()) throw InputError(path + ": nothing to save: the predictor is not trained");
    const auto [bin, json] = predictorFilePaths(path);
    const Layout& lay = d_->layout;
    std::string bytes(kMagic, sizeof kMagic);
    putLE<std::uint32_t>(bytes, static_cast<std::uint32_t>(d_->members.size()));
    putLE<std::uint32_t>(bytes, static_cast<std::uint32_t>(lay.dims.size()));
    for (int dim : lay.dims) putLE<std::uint32_t>(bytes, static_cast<std::uint32_t>(dim));
    for (const Params& p : d_->members) {
        at::Tensor flat = p.flat.contiguous();
        bytes.append(reinterpret_cast<const char*>(flat.data_ptr<float>()), static_cast<std::size_t>(flat.numel()) * sizeof(float));
    }
    PredictorCard& c = d_->card;
    c.weights_file = baseName(bin);
    c.weights_bytes = static_cast<std::int64_t>(bytes.size());
    c.weights_crc32 = static_cast<std::uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
    writeFileAtomic(bin, bytes);
    writeJsonFile(json, toJson(c));
    d_->path = bin;
}

AccuracyPredictor AccuracyPredictor::load(const std::string& path, const DesignSpace& space)
{
    const auto [bin, json] = predictorFilePaths(path);
    if (!fileExists(json)) throw InputError(json + ": predictor card not found (a predictor is X.bin + X.json)");
    PredictorCard card = predictorCardFromJson(readJsonFile(json), json);
    requireCardMatchesSpace(card, space, json);
    const std::string weights = bin;
    const std::string bytes = readFileBytes(weights);
    auto fail = [&](const std::string& what) { throw InputError(weights + ": " + what); };
    if (bytes.size() < 16 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        fail("not a Tinyscope predictor weights file (bad magic)");
    const std::uint32_t crc = static_cast<std::uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
    if (static_cast<std::int64_t>(bytes.size()) != card.weights_bytes || crc != card.weights_crc32)
        fail("does not match its card " + json + " (" + std::to_string(bytes.size()) + " bytes, crc32 " +
             std::to_string(crc) + "; the card says " + std::to_string(card.weights_bytes) + " bytes, crc32 " +
             std::to_string(card.weights_crc32) + ")");
    std::size_t pos = sizeof kMagic;
    auto u32 = [&]() {
        if (pos + 4 > bytes.size()) fail("truncated header");
        std::uint32_t v;
        std::memcpy(&v, bytes.data() + pos, 4);
        pos += 4;
        return v;
    };
    const std::uint32_t members = u32(), ndims = u32();
    AccuracyPredictor pred(space);
    Impl& im = *pred.d_;
    std::vector<int> dims;
    for (std::uint32_t i = 0; i < ndims && i < 64; ++i) dims.push_back(static_cast<int>(u32()));
    std::vector<int> expected = {card.encoder_dims};
    expected.insert(expected.end(), card.hidden.begin(), card.hidden.end());
    expected.push_back(1);
    if (dims != expected) fail("layer sizes " + formatList(dims) + " differ from the card's " + formatList(expected));
    if (members < 1 || static_cast<int>(members) != card.recipe.ensemble)
        fail(std::to_string(members) + " ensemble members, the card says " + std::to_string(card.recipe.ensemble));
    im.layout.dims = dims;
    const std::int64_t count = im.layout.count();
    if (bytes.size() - pos != static_cast<std::size_t>(count) * members * sizeof(float))
        fail("expected " + std::to_string(count * members * 4) + " bytes of weights, found " + std::to_string(bytes.size() - pos));
    for (std::uint32_t m = 0; m < members; ++m) {
        at::Tensor flat = at::empty({count}, at::kFloat);
        std::memcpy(flat.data_ptr<float>(), bytes.data() + pos, static_cast<std::size_t>(count) * sizeof(float));
        pos += static_cast<std::size_t>(count) * sizeof(float);
        if (!at::isfinite(flat).all().item<bool>()) fail("member " + std::to_string(m) + " holds non-finite weights");
        im.members.emplace_back(im.layout, flat);
    }
    im.card = card;
    im.path = weights;
    im.prepareInference();
    return pred;
}

}  // namespace tinyscope
