// The accuracy predictor: metrics against brute force, the cache, training on part of the lab's
// data (reaching the targets on all of it is the slow tier: slow_predictor_targets), the shipped
// predictor, save / load, refusing another space's predictor or a corrupt file, determinism and
// cancellation.
#include "TestSupport.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/CpuInfo.h"
#include "nn/predictor/AccuracyPredictor.h"
#include "predict/AdamUpdate.h"
#include "predict/FixedOrderGemm.h"
#include "predict/PredictionMetrics.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <QProcessEnvironment>
#include <QTemporaryDir>

#include <cmath>
#include <cstring>

using namespace tinyscope;

namespace {

// Kendall's tau-b by its definition, O(n^2).
double bruteForceTau(const std::vector<double>& x, const std::vector<double>& y)
{
    double s = 0, n1 = 0, n2 = 0;
    const std::size_t n = x.size();
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            const int dx = (x[j] > x[i]) - (x[j] < x[i]), dy = (y[j] > y[i]) - (y[j] < y[i]);
            s += dx * dy;
            n1 += dx == 0;
            n2 += dy == 0;
        }
    const double n0 = static_cast<double>(n) * static_cast<double>(n - 1) / 2;
    return s / std::sqrt((n0 - n1) * (n0 - n2));
}

using test::errorOf;

// A small dataset from the lab's data: the first `n` pairs.
AccuracyDataset smallDataset(const DesignSpace& space, std::size_t n)
{
    Json doc = Json::array();
    Json all = readJsonFile(test::sharedPath("reference/mcunet-vww/acc_datasets/src/OFAMCUNets_r128_gpu0_acc_table.json"));
    for (std::size_t i = 0; i < n && i < all.size(); ++i) doc.push_back(all[i]);
    return AccuracyDataset::fromJson(doc, space, "r128_gpu0 subset");
}

PredictorRecipe quickRecipe()
{
    PredictorRecipe r = PredictorRecipe::standard();
    r.epochs = 2;
    return r;
}

}  // namespace

class TestPredictor : public QObject {
    Q_OBJECT
    DesignSpace space = presetSpace("mcunet-vww");
    QTemporaryDir tmp;

    std::vector<SubnetConfig> randomConfigs(int n, std::uint64_t seed)
    {
        ArchSampler s(space);
        PyRandom rng(seed);
        std::vector<SubnetConfig> out;
        for (int i = 0; i < n; ++i) {
            SubnetConfig c = s.random(rng);
            c.wid = c.wid % 2;   // the widths the lab's data covers
            out.push_back(c);
        }
        return out;
    }

    // An accuracy table in the lab's format made by the test: `n` random subnets with a top-1 that
    // depends on the architecture (resolution, kernels, expansions) plus noise. Returns its folder.
    QString writeSyntheticDataset(int n, const QString& name)
    {
        ArchSampler s(space);
        PyRandom rng(5);
        Json doc = Json::array();
        for (int i = 0; i < n; ++i) {
            SubnetConfig c = s.random(rng);
            c.wid = c.wid % 2;
            double top1 = 80 + 0.02 * c.image_size + rng.random();
            for (std::size_t b = 0; b < c.ks.size(); ++b) top1 += 0.04 * c.ks[b] + 0.03 * c.e[b];
            doc.push_back(Json::array({c.toJson(), top1}));
        }
        const QString dir = tmp.path() + QLatin1Char('/') + name;
        QDir().mkpath(dir + QStringLiteral("/src"));
        writeJsonFile((dir + QStringLiteral("/src/synthetic_acc_table.json")).toStdString(), doc);
        return dir;
    }

private Q_SLOTS:
    void metricsOnKnownNumbers()
    {
        PredictionMetrics m = measurePredictions({90, 91, 92, 94}, {90.5, 91, 91, 95});
        QCOMPARE(m.count, std::size_t(4));
        QCOMPARE(m.mae, 0.625);                        // (0.5 + 0 + 1 + 1) / 4
        QCOMPARE(m.rmse, std::sqrt(2.25 / 4));
        QVERIFY(std::fabs(m.pearson - 0.91928853005436) < 1e-12);   // numpy.corrcoef
        QVERIFY(std::fabs(m.kendall_tau - bruteForceTau({90, 91, 92, 94}, {90.5, 91, 91, 95})) < 1e-15);
        QVERIFY(errorOf([] { measurePredictions({1, 2}, {1}); }).find("differ in length") != std::string::npos);
    }

    void adamUpdateEqualsTheScalarFormulaBitForBit()
    {
        // torch.optim.Adam's element-wise formula, one float operation at a time; the vectorised
        // kernel must give the same bits, with and without the second shard's gradient, on a
        // range that starts and ends off the vector width.
        PyRandom rng(11);
        const std::int64_t n = 1003, lo = 3, hi = 998;
        std::vector<float> p(n), m(n, 0), v(n, 0), g0(n), g1(n);
        for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(rng.random() - 0.5);
        const std::vector<float> p0 = p;
        std::vector<float> rp = p, rm = m, rv = v;
        for (int step = 1; step <= 30; ++step) {
            for (std::int64_t i = 0; i < n; ++i) {
                g0[i] = static_cast<float>((rng.random() - 0.5) * 1e-2);
                g1[i] = static_cast<float>((rng.random() - 0.5) * 1e-2);
            }
            const bool two = step % 2 == 0;
            const AdamConstants c = AdamConstants::at(1e-3, step);
            adamUpdate(p.data(), g0.data(), two ? g1.data() : nullptr, m.data(), v.data(), lo, hi, c);
            for (std::int64_t i = lo; i < hi; ++i) {
                volatile float g = two ? g0[i] + g1[i] : g0[i];
                volatile float a = c.beta1 * rm[i];
                volatile float b = (1 - c.beta1) * g;
                rm[i] = a + b;
                volatile float gg = (1 - c.beta2) * g;
                volatile float d = c.beta2 * rv[i];
                volatile float e = gg * g;
                rv[i] = d + e;
                volatile float denom = std::sqrt(rv[i]) / c.bc2_sqrt + c.eps;
                volatile float num = c.step_size * rm[i];
                rp[i] -= num / denom;
            }
        }
        int moved = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            QVERIFY2(p[i] == rp[i] && m[i] == rm[i] && v[i] == rv[i], qPrintable(QString::number(i)));
            moved += p[i] != p0[i];
        }
        QCOMPARE(moved, static_cast<int>(hi - lo));   // the range was updated, the rest untouched
    }

    void fixedOrderGemmEqualsTheScalarDefinitionOnEveryKernel()
    {
        // Every kernel this CPU can run (4, 8, 16 lanes) gives the bits of the definition — init,
        // then one rounded multiply and one rounded add per term, k ascending — for sizes off every
        // tile and vector width, a transposed (strided) A, with and without bias, and a one-hot A.
        PyRandom rng(3);
        auto randomVector = [&](std::size_t n, double scale) {
            std::vector<float> v(n);
            for (float& x : v) x = static_cast<float>((rng.random() - 0.5) * scale);
            return v;
        };
        struct Case { std::int64_t M, N, K; bool transposed, bias, oneHot; };
        for (const Case& t : {Case{7, 37, 13, false, true, false}, Case{128, 400, 400, false, true, false},
                              Case{37, 403, 65, true, false, false}, Case{9, 1, 400, false, false, false},
                              Case{1, 400, 131, false, false, false}, Case{5, 400, 128, false, true, true}}) {
            std::vector<float> a = randomVector(static_cast<std::size_t>(t.M * t.K), 2.0), b = randomVector(static_cast<std::size_t>(t.K * t.N), 0.2),
                               bias = randomVector(static_cast<std::size_t>(t.N), 0.1);
            if (t.oneHot)
                for (std::size_t i = 0; i < a.size(); ++i) a[i] = rng.random() < 0.25 ? 1.0f : 0.0f;
            GemmOperands g;
            g.M = t.M;
            g.N = t.N;
            g.K = t.K;
            g.a = a.data();
            g.aRow = t.transposed ? 1 : t.K;
            g.aCol = t.transposed ? t.M : 1;
            g.b = b.data();
            g.ldb = t.N;
            g.ldc = t.N;
            g.bias = t.bias ? bias.data() : nullptr;
            std::vector<float> expected(static_cast<std::size_t>(t.M * t.N));
            for (std::int64_t i = 0; i < t.M; ++i)
                for (std::int64_t j = 0; j < t.N; ++j) {
                    volatile float c = t.bias ? bias[static_cast<std::size_t>(j)] : 0.0f;
                    for (std::int64_t k = 0; k < t.K; ++k) {
                        volatile float product = a[static_cast<std::size_t>(i * g.aRow + k * g.aCol)] * b[static_cast<std::size_t>(k * t.N + j)];
                        c = c + product;
                    }
                    expected[static_cast<std::size_t>(i * t.N + j)] = c;
                }
            QVERIFY(!supportedGemmIsas().empty() && supportedGemmIsas().front() == GemmIsa::Baseline);
            for (GemmIsa isa : supportedGemmIsas()) {
                std::vector<float> c(expected.size(), -1.0f);
                g.c = c.data();
                fixedOrderGemm(g, isa);
                QVERIFY2(std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)) == 0,
                         qPrintable(QStringLiteral("%1 on %2x%3x%4").arg(QLatin1String(gemmIsaName(isa))).arg(t.M).arg(t.N).arg(t.K)));
            }
        }
    }

    void trainingGivesTheSameBitsWithEveryKernelSet()
    {
        // The same training command with other CPUs' kernels — OpenBLAS's core types (which the
        // predictor used to multiply with, and which round differently) and our own narrower GEMM
        // lanes — writes the same weights, byte for byte, and the same card metrics.
        const QString data = writeSyntheticDataset(400, QStringLiteral("kernels"));
        const CpuInfo& cpu = hostCpu();
        auto has = [&](const char* f) { return std::find(cpu.isa.begin(), cpu.isa.end(), f) != cpu.isa.end(); };
        std::vector<std::pair<QString, QString>> kernelSets = {{QString(), QString()}, {QStringLiteral("Prescott"), QStringLiteral("sse2")}};
        if (has("avx2") && has("fma")) kernelSets.push_back({QStringLiteral("Haswell"), QStringLiteral("avx2")});
        if (has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq"))
            kernelSets.push_back({QStringLiteral("SkylakeX"), QStringLiteral("avx512f")});
        QByteArray first;
        double firstMae = 0;
        for (const auto& [core, lanes] : kernelSets) {
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.remove(QStringLiteral("OPENBLAS_CORETYPE"));
            env.remove(QStringLiteral("TINYSCOPE_GEMM_ISA"));
            if (!core.isEmpty()) env.insert(QStringLiteral("OPENBLAS_CORETYPE"), core);
            if (!lanes.isEmpty()) env.insert(QStringLiteral("TINYSCOPE_GEMM_ISA"), lanes);
            const QString out = tmp.path() + QStringLiteral("/kernels-") + (core.isEmpty() ? QStringLiteral("native") : core) + QStringLiteral(".bin");
            QProcess p;
            p.setProcessEnvironment(env);
            p.start(test::tinyscopeBinary(), {QStringLiteral("train-predictor"), QStringLiteral("--data"), data, QStringLiteral("--out"), out,
                                              QStringLiteral("--recipe"), QStringLiteral("lab"), QStringLiteral("--batch-size"), QStringLiteral("64"),
                                              QStringLiteral("--epochs"), QStringLiteral("2"), QStringLiteral("--quiet"),
                                              QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
            QVERIFY(p.waitForFinished(120000));
            QVERIFY2(p.exitCode() == 0, qPrintable(QString::fromUtf8(p.readAllStandardError())));
            QFile f(out);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray bytes = f.readAll();
            const Json card = readJsonFile((tmp.path() + QStringLiteral("/kernels-") + (core.isEmpty() ? QStringLiteral("native") : core) + QStringLiteral(".json")).toStdString());
            if (first.isEmpty()) {
                first = bytes;
                firstMae = card["validation"]["mae"].get<double>();
                QVERIFY(firstMae > 0);
                continue;
            }
            QVERIFY2(bytes == first, qPrintable(QStringLiteral("OPENBLAS_CORETYPE=%1 TINYSCOPE_GEMM_ISA=%2 trained other weights").arg(core, lanes)));
            QCOMPARE(card["validation"]["mae"].get<double>(), firstMae);
            QCOMPARE(card["cpu"]["kernels"]["predictor_gemm"].get<std::string>(), "fixed-order, " + lanes.toStdString() + " lanes");
        }
    }

    void cardRecordsTheCpuItWasTrainedOn()
    {
        AccuracyDataset data = AccuracyDataset::load(writeSyntheticDataset(200, QStringLiteral("cpu")).toStdString(), space);
        AccuracyPredictor p(space);
        PredictorRecipe r = quickRecipe();
        r.epochs = 1;
        p.train(data, r);
        const std::string path = (tmp.path() + QStringLiteral("/cpu.bin")).toStdString();
        p.save(path);
        const std::string cardPath = (tmp.path() + QStringLiteral("/cpu.json")).toStdString();
        Json card = readJsonFile(cardPath);
        QVERIFY(card.contains("cpu"));
        QCOMPARE(card["cpu"]["model"].get<std::string>(), hostCpu().model);
        QCOMPARE(card["cpu"]["isa"].get<std::vector<std::string>>(), hostCpu().isa);
        QVERIFY(!hostCpu().isa.empty());
        QCOMPARE(card["cpu"]["kernels"]["predictor_gemm"].get<std::string>(), std::string("fixed-order, ") + gemmIsaName(bestGemmIsa()) + " lanes");
        QCOMPARE(AccuracyPredictor::load(path, space).card().cpu.isa, hostCpu().isa);
        // Cards written before the field existed still load.
        card.erase("cpu");
        writeJsonFile(cardPath, card);
        QVERIFY(AccuracyPredictor::load(path, space).card().cpu.model.empty());
    }

    void cpuInfoKeepsTheExtensionsThatChooseKernels()
    {
        const CpuInfo spr = parseCpuInfo("processor\t: 0\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nstepping\t: 8\n"
                                         "flags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 avx512f avx512dq avx512bw "
                                         "avx512vl avx512_bf16 amx_bf16 amx_tile amx_int8 avx512_vnni avx_vnni\n\n"
                                         "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu sse2\n");
        QCOMPARE(spr.model, std::string("Intel(R) Xeon(R) Platinum 8480+"));
        QCOMPARE(spr.logical_cpus, 2);
        QCOMPARE(spr.signature, std::string("family 6 model 143 stepping 8"));
        QCOMPARE(spr.isa, (std::vector<std::string>{"sse2", "ssse3", "sse4_1", "sse4_2", "avx", "f16c", "fma", "avx2", "avx_vnni", "avx512f",
                                                     "avx512dq", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16",
                                                     "amx_int8"}));
        const CpuInfo arm = parseCpuInfo("processor\t: 0\nFeatures\t: fp asimd evtstrm crc32 sve\nCPU part\t: 0xd0c\n");
        QCOMPARE(arm.model, std::string("unknown"));
        QVERIFY(arm.signature.empty());
        QCOMPARE(arm.isa, (std::vector<std::string>{"fp", "asimd", "evtstrm", "crc32", "sve"}));
        QVERIFY(describe(spr).find("amx_tile") != std::string::npos);
    }

    void kendallTauEqualsItsDefinitionWithTies()
    {
        // 10,000 points with many ties in both variables, as real accuracies have.
        PyRandom rng(5);
        std::vector<double> x(10000), y(10000);
        for (std::size_t i = 0; i < x.size(); ++i) {
            x[i] = static_cast<double>(rng.randbelow(300));
            y[i] = x[i] * 0.5 + static_cast<double>(rng.randbelow(200));
        }
        const double fast = kendallTau(x, y), slow = bruteForceTau(x, y);
        QVERIFY2(std::fabs(fast - slow) < 1e-12, qPrintable(QStringLiteral("%1 vs %2").arg(fast, 0, 'g', 17).arg(slow, 0, 'g', 17)));
        QVERIFY(fast > 0.3 && fast < 0.9);
        std::vector<double> neg(y);
        for (double& v : neg) v = -v;
        QCOMPARE(kendallTau(y, y), 1.0);
        QCOMPARE(kendallTau(y, neg), -1.0);
    }

    void cacheServesTheSameNetworkOnce()
    {
        PredictionCache cache(space);
        SubnetConfig a = ArchSampler(space).minConfig(96), b = a;
        b.ks[2] = 7;   // block 3 of stage 1 is inactive at d = 0: the same network
        SubnetConfig c = a;
        c.ks[0] = 7;   // active: a different network
        QCOMPARE(cache.key(a), cache.key(b));
        QVERIFY(cache.key(a) != cache.key(c));
        int calls = 0;
        std::size_t asked = 0;
        auto compute = [&](const std::vector<SubnetConfig>& batch) {
            ++calls;
            asked += batch.size();
            std::vector<double> v;
            for (const SubnetConfig& x : batch) v.push_back(x.ks[0]);
            return v;
        };
        std::vector<double> r = cache.resolve({a, b, c, a}, compute);
        QCOMPARE(r, (std::vector<double>{3, 3, 7, 3}));
        QCOMPARE(calls, 1);
        QCOMPARE(asked, std::size_t(2));
        r = cache.resolve({b, c}, compute);
        QCOMPARE(r, (std::vector<double>{3, 7}));
        QCOMPARE(calls, 1);
        QCOMPARE(cache.hits(), std::size_t(4));
        QCOMPARE(cache.misses(), std::size_t(2));
    }

    void bothRecipesTrainEveryEpochAndLearn()
    {
        // The path of training on the lab's 40,000 pairs (its targets are checked in the slow
        // tier: slow_predictor_targets) on 4,000 pairs: every epoch is reported, the training loss
        // falls, the card's metrics are what the predictor gives on its held-out split, the base
        // accuracy is the mean label, and both recipes beat predicting the mean.
        REQUIRE_SHARED();
        // 800 pairs of each of the five resolutions.
        Json doc = Json::array();
        for (const char* r : {"96", "112", "128", "144", "160"}) {
            const Json table = readJsonFile(test::sharedPath(
                (std::string("reference/mcunet-vww/acc_datasets/src/OFAMCUNets_r") + r + "_gpu0_acc_table.json").c_str()));
            for (std::size_t i = 0; i < 800; ++i) doc.push_back(table[i]);
        }
        const AccuracyDataset data = AccuracyDataset::fromJson(doc, space, "4,000 pairs of the lab's data");
        double mean = 0;
        for (const auto& s : data.samples()) mean += s.top1;
        mean /= static_cast<double>(data.size());
        for (const PredictorRecipe& recipe : {PredictorRecipe::standard(), PredictorRecipe::lab()}) {
            AccuracyPredictor p(space);
            std::vector<int> epochs;
            TrainingCallbacks cb;
            cb.onEpoch = [&](const EpochRecord& e, int) { epochs.push_back(e.epoch); };
            p.train(data, recipe, cb);
            QCOMPARE(epochs, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
            const PredictorCard& card = p.card();
            QCOMPARE(card.history.size(), std::size_t(10));
            QVERIFY2(card.history.back().train_loss < 0.5 * card.history.front().train_loss,
                     qPrintable(QStringLiteral("%1: training loss %2 -> %3").arg(QString::fromStdString(recipe.name))
                                    .arg(card.history.front().train_loss).arg(card.history.back().train_loss)));
            const PredictionMetrics m = card.validation;
            QCOMPARE(m.count, std::size_t(800));
            const PredictionMetrics again = p.evaluate(data, p.splitOf(data).validation);
            QVERIFY(std::fabs(again.mae - m.mae) < 1e-9 && std::fabs(again.kendall_tau - m.kendall_tau) < 1e-12);
            QVERIFY2(std::fabs(card.base_accuracy * 100 - mean) < 1e-9, qPrintable(QStringLiteral("%1 vs %2").arg(card.base_accuracy).arg(mean)));
            double meanMae = 0;
            for (std::size_t i : p.splitOf(data).validation) meanMae += std::fabs(data.samples()[i].top1 - mean);
            meanMae /= static_cast<double>(m.count);
            qInfo("%s recipe on 4,000 pairs: MAE %.4f (predicting the mean: %.4f), tau %.4f", recipe.name.c_str(), m.mae, meanMae,
                  m.kendall_tau);
            QVERIFY2(m.mae < 0.3 * meanMae && m.kendall_tau > 0.7, qPrintable(QStringLiteral("MAE %1 vs %2, tau %3").arg(m.mae).arg(meanMae).arg(m.kendall_tau)));
        }
    }

    void shippedPredictorMeetsTheTargetsOnItsHeldOutSplit()
    {
        REQUIRE_SHARED();
        const std::string path = shippedPredictorPath("mcunet-vww");
        QVERIFY2(!path.empty(), "models/predictors/mcunet-vww.bin is missing");
        AccuracyPredictor p = AccuracyPredictor::load(path, space);
        AccuracyDataset data = AccuracyDataset::load(test::sharedPath("reference/mcunet-vww/acc_datasets"), space);
        const PredictionMetrics m = p.evaluate(data, p.splitOf(data).validation);
        QCOMPARE(m.count, std::size_t(10000));
        QVERIFY2(m.mae <= 0.165 && m.kendall_tau >= 0.928, qPrintable(QStringLiteral("%1 %2").arg(m.mae).arg(m.kendall_tau)));
        QVERIFY(std::fabs(m.mae - p.card().validation.mae) < 1e-9);
        QCOMPARE(p.card().data_pairs, std::size_t(50000));
        QCOMPARE(p.card().space_name, std::string("mcunet-vww"));
    }

    void shippedFashionMnistPredictorMatchesItsCardOnTheShippedDataset()
    {
        // Both are the project's own artefacts: the accuracy dataset measured on the shipped
        // supernet and the predictor trained on it. The card's held-out metrics are re-measured,
        // and the predictor beats predicting the mean (whose MAE is about 0.9 points here).
        const DesignSpace fmnist = presetSpace("mcunet-fmnist");
        const std::string path = shippedPredictorPath("mcunet-fmnist");
        QVERIFY2(!path.empty(), "models/predictors/mcunet-fmnist.bin is missing");
        AccuracyPredictor p = AccuracyPredictor::load(path, fmnist);
        AccuracyDataset data = AccuracyDataset::load((test::sourceDir() + QStringLiteral("/datasets/mcunet-fmnist-accdata")).toStdString(), fmnist);
        QCOMPARE(data.size(), std::size_t(6000));
        const DatasetSplit split = p.splitOf(data);
        const PredictionMetrics m = p.evaluate(data, split.validation);
        QCOMPARE(m.count, std::size_t(1200));
        QVERIFY(std::fabs(m.mae - p.card().validation.mae) < 1e-9);
        QVERIFY(std::fabs(m.kendall_tau - p.card().validation.kendall_tau) < 1e-9);
        double mean = 0;
        for (std::size_t i : split.train) mean += data.samples()[i].top1;
        mean /= static_cast<double>(split.train.size());
        double meanMae = 0;
        for (std::size_t i : split.validation) meanMae += std::fabs(data.samples()[i].top1 - mean);
        meanMae /= static_cast<double>(split.validation.size());
        QVERIFY2(m.mae < 0.9 * meanMae && m.kendall_tau > 0.3, qPrintable(QStringLiteral("%1 vs %2, tau %3").arg(m.mae).arg(meanMae).arg(m.kendall_tau)));
    }

    void saveLoadRoundTripKeepsEveryPrediction()
    {
        REQUIRE_SHARED();
        AccuracyPredictor p(space);
        p.train(smallDataset(space, 1000), quickRecipe());
        const std::string path = (tmp.path() + QStringLiteral("/small.bin")).toStdString();
        p.save(path);
        QVERIFY(QFileInfo::exists(tmp.path() + QStringLiteral("/small.json")));
        AccuracyPredictor q = AccuracyPredictor::load((tmp.path() + QStringLiteral("/small.json")).toStdString(), space);
        const auto configs = randomConfigs(300, 11);
        QCOMPARE(q.predict(configs), p.predictUncached(configs));
        QCOMPARE(q.card().base_accuracy, p.card().base_accuracy);
        QCOMPARE(q.card().history.size(), std::size_t(2));
        QCOMPARE(q.card().validation.mae, p.card().validation.mae);
        QCOMPARE(q.card().recipe.batch_size, 128);
        QCOMPARE(q.path(), path);
    }

    void batchedPredictionEqualsOneAtATime()
    {
        REQUIRE_SHARED();
        AccuracyPredictor p = AccuracyPredictor::load(shippedPredictorPath("mcunet-vww"), space);
        p.setCaching(false);
        const auto configs = randomConfigs(100, 3);
        const std::vector<double> batch = p.predict(configs);
        for (std::size_t i = 0; i < configs.size(); i += 9) {
            const double one = p.predict({configs[i]})[0];
            QVERIFY2(std::fabs(one - batch[i]) < 1e-4, qPrintable(QStringLiteral("%1 vs %2").arg(one).arg(batch[i])));
            QVERIFY(batch[i] > 80 && batch[i] < 96);
        }
    }

    void predictorOfAnotherSpaceIsRefused()
    {
        REQUIRE_SHARED();
        Json other = space.toJson();
        other["name"] = "vww-wide";
        other["resolutions"] = Json::array({128, 160, 192, 224});
        DesignSpace wide = DesignSpace::fromJson(other, "vww-wide.json");
        const std::string msg = errorOf([&] { AccuracyPredictor::load(shippedPredictorPath("mcunet-vww"), wide); });
        QVERIFY2(msg.find("made for space 'mcunet-vww'") != std::string::npos && msg.find("not for space 'vww-wide'") != std::string::npos,
                 msg.c_str());
        // Renaming a space does not change what a predictor is for: the fingerprint is structural.
        Json renamed = space.toJson();
        renamed["name"] = "my-vww";
        QVERIFY(AccuracyPredictor::load(shippedPredictorPath("mcunet-vww"), DesignSpace::fromJson(renamed, "x")).trained());
    }

    void corruptFilesAreRefusedWithTheirName()
    {
        REQUIRE_SHARED();
        const auto [bin, json] = predictorFilePaths(shippedPredictorPath("mcunet-vww"));
        std::string bytes = readFileBytes(bin);
        const std::string dir = tmp.path().toStdString();
        writeFileAtomic(dir + "/cut.bin", bytes.substr(0, bytes.size() / 2));
        writeFileAtomic(dir + "/cut.json", readFileBytes(json));
        std::string msg = errorOf([&] { AccuracyPredictor::load(dir + "/cut.bin", space); });
        QVERIFY2(msg.find("cut.bin: does not match its card") != std::string::npos, msg.c_str());
        bytes[1000] = static_cast<char>(bytes[1000] ^ 0x40);
        writeFileAtomic(dir + "/flip.bin", bytes);
        writeFileAtomic(dir + "/flip.json", readFileBytes(json));
        msg = errorOf([&] { AccuracyPredictor::load(dir + "/flip.bin", space); });
        QVERIFY2(msg.find("crc32") != std::string::npos, msg.c_str());
        msg = errorOf([&] { AccuracyPredictor::load(dir + "/none.bin", space); });
        QVERIFY2(msg.find("none.json: predictor card not found") != std::string::npos, msg.c_str());
        writeFileAtomic(dir + "/notcard.json", "{\"format\": \"something else\"}");
        msg = errorOf([&] { AccuracyPredictor::load(dir + "/notcard.json", space); });
        QVERIFY2(msg.find("not a Tinyscope predictor card") != std::string::npos, msg.c_str());
    }

    void trainingIsDeterministicForASeedAndThreadCount()
    {
        REQUIRE_SHARED();
        AccuracyDataset data = smallDataset(space, 800);
        const auto configs = randomConfigs(50, 2);
        PredictorRecipe r = quickRecipe();
        AccuracyPredictor a(space), b(space), c(space), d(space);
        a.train(data, r);
        r.threads = 1;   // the batch is always cut in the same two shards: threads do not change the numbers
        b.train(data, r);
        QCOMPARE(a.predictUncached(configs), b.predictUncached(configs));
        r.seed = 1;
        c.train(data, r);
        QVERIFY(a.predictUncached(configs) != c.predictUncached(configs));
        r.ensemble = 2;
        d.train(data, r);
        QCOMPARE(d.card().recipe.ensemble, 2);
        QVERIFY(d.describe().find("ensemble of 2") != std::string::npos);
    }

    void cancelStopsTrainingAndKeepsThePredictor()
    {
        REQUIRE_SHARED();
        AccuracyPredictor p(space);
        std::atomic<bool> cancel{false};
        TrainingCallbacks cb;
        cb.cancel = &cancel;
        cb.onProgress = [&](double f) {
            if (f > 0.2) cancel = true;
        };
        bool cancelled = false;
        try {
            p.train(smallDataset(space, 1000), quickRecipe(), cb);
        } catch (const CancelledError&) {
            cancelled = true;
        }
        QVERIFY(cancelled);
        QVERIFY(!p.trained());
        QVERIFY(errorOf([&] { p.predict(randomConfigs(3, 1)); }).find("not trained") != std::string::npos);
    }

    void caveatsNameFeaturesTheDataNeverHad()
    {
        REQUIRE_SHARED();
        AccuracyPredictor p = AccuracyPredictor::load(shippedPredictorPath("mcunet-vww"), space);
        SubnetConfig c = ArchSampler(space).fullMaxConfig(160);   // wid = 2
        std::vector<std::string> cv = p.caveats(c);
        QCOMPARE(cv.size(), std::size_t(1));
        QVERIFY2(cv[0].find("wid=2 never occurs") != std::string::npos, cv[0].c_str());
        QVERIFY(p.caveats(ArchSampler(space).labMaxConfig(160)).empty());
    }

    void badRecipesAreRefused()
    {
        PredictorRecipe r = PredictorRecipe::lab();
        r.schedule = "linear";
        QVERIFY(errorOf([&] { r.validate(); }).find("schedule must be constant or cosine") != std::string::npos);
        QVERIFY(errorOf([] { PredictorRecipe::named("best"); }).find("unknown predictor recipe 'best'") != std::string::npos);
        r = PredictorRecipe::lab();
        r.validation_fraction = 1;
        QVERIFY(errorOf([&] { r.validate(); }).find("validation fraction") != std::string::npos);
    }
};

QTEST_MAIN(TestPredictor)
#include "test_predictor.moc"
