// TFLM's arena predicted from a Network alone (deploy/TflmArena.h) against TensorFlow Lite Micro
// itself: the file buildTflite writes for the network, run by tflm_run (64-bit host, reference
// kernels), reports the same arena_used_bytes and head to the byte — on mcunet-5fps, the min, max
// and random subnets of mcunet-fmnist and mcunet-vww. The arena does not depend on parameter values
// (only on shapes and the op list), so the files are written with seeded synthetic int8 params: no
// supernet, no calibration. Also: the table's known figures (mcunet-5fps 331,888 = 270,464 +
// 61,424), the target differences (32-bit, CMSIS-NN scratch), block-monotonicity (what the search's
// feasibility proof relies on), and `search --runtime tflm|tinyengine` through the CLI.
// Skips with the reason without tflm_run. TINYSCOPE_TFLM_ARENA_RANDOM=N widens the random sweep
// (docs/DEPLOY.md "Predicting TFLM's arena" lists a sweep with N = 10).
#include "TestSupport.h"

#include "deploy/TflmArena.h"
#include "deploy/TfliteExport.h"
#include "deploy/TflmRunner.h"
#include "io/JsonFile.h"
#include "io/Text.h"
#include "search/Constraints.h"
#include "search/TrainingMemoryLimit.h"
#include "space/ArchSampler.h"
#include "space/PyRandom.h"
#include "space/SpacePresets.h"
#include "tinyengine/QuantizedParams.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"

#include <QTemporaryDir>

#include <cstdlib>
#include <cstdio>

using namespace tinyscope;

namespace {

#define REQUIRE_TFLM_RUN()                                                   \
    do {                                                                     \
        if (const std::string why = tflmRunMissing(); !why.empty()) QSKIP(why.c_str()); \
    } while (false)

struct Lcg {
    std::uint32_t s;
    std::uint32_t next() { return s = s * 1664525u + 1013904223u; }
    double uniform() { return (next() >> 8) / 16777216.0; }
    int range(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<std::uint32_t>(hi - lo + 1)); }
};

// Seeded int8 params every op of the writer accepts (one scale and zero point per tensor, ADD / MUL
// scales equal to their inputs'), for any network the writer can express.
QuantizedParams syntheticParams(const Network& net, std::uint32_t seed)
{
    Lcg r{seed};
    QuantizedParams p;
    p.source = "synthetic params";
    std::vector<double> sc(net.layers.size() + 1);
    std::vector<int> zp(net.layers.size() + 1);
    sc[0] = 0.02, zp[0] = r.range(-20, 20);
    auto S = [&](int layer) { return sc[static_cast<std::size_t>(layer + 1)]; };
    auto Z = [&](int layer) { return zp[static_cast<std::size_t>(layer + 1)]; };
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        const int li = static_cast<int>(i);
        const std::string& pre = l.ir_prefix;
        if (l.kind == LayerKind::GlobalAvgPool) {
            sc[i + 1] = S(l.inputs[0]), zp[i + 1] = Z(l.inputs[0]);
            continue;
        }
        sc[i + 1] = static_cast<float>(0.01 + 0.09 * r.uniform());
        zp[i + 1] = -128;
        if (l.isConv()) {
            const int I = l.cin / l.groups;
            std::vector<std::int8_t> w(static_cast<std::size_t>(l.cout) * I * l.kh * l.kw);
            for (auto& x : w) x = static_cast<std::int8_t>(r.range(-127, 127));
            std::vector<std::int32_t> b(static_cast<std::size_t>(l.cout));
            for (auto& x : b) x = r.range(-3000, 3000);
            std::vector<float> eff(static_cast<std::size_t>(l.cout));
            for (auto& x : eff) x = static_cast<float>(S(l.inputs[0]) * (0.0005 + 0.004 * r.uniform()) / S(li));
            p.set(pre + "_weight", int8Array(w, {l.cout, I, l.kh, l.kw}));
            p.set(pre + "_bias", int32Array(b, {l.cout}));
            p.set(pre + "_zero_x", int8Array({static_cast<std::int8_t>(Z(l.inputs[0]))}, {1}));
            p.set(pre + "_zero_y", int8Array({static_cast<std::int8_t>(Z(li))}, {1}));
            p.set(pre + "_scale", float32Array(eff, {l.cout}));
            p.scales[pre + "_x_scale"] = S(l.inputs[0]);
            p.scales[pre + "_y_scale"] = S(li);
        } else {
            p.set(pre + "_zero_x1", int8Array({static_cast<std::int8_t>(Z(l.inputs[0]))}, {1}));
            p.set(pre + "_zero_x2", int8Array({static_cast<std::int8_t>(Z(l.inputs[1]))}, {1}));
            p.set(pre + "_scale_x1", float32Array({static_cast<float>(S(l.inputs[0]))}, {1}));
            p.set(pre + "_scale_x2", float32Array({static_cast<float>(S(l.inputs[1]))}, {1}));
            p.set(pre + "_zero_y", int8Array({static_cast<std::int8_t>(Z(li))}, {1}));
            p.set(pre + "_scale_y", float32Array({static_cast<float>(S(li))}, {1}));
        }
    }
    return p;
}

struct Measured {
    TflmRunReport run;
    TflmArenaPrediction predicted;
    Network network;
};

// The network written as buildTflite writes it, run once by tflm_run, beside the prediction.
// TINYSCOPE_TFLM_ARENA_KEEP=DIR keeps the files in DIR (to run them elsewhere, e.g. on the device).
Measured measure(const Network& net, const QString& dir, const std::string& name, std::uint32_t seed = 1)
{
    const char* keep = std::getenv("TINYSCOPE_TFLM_ARENA_KEEP");
    const QString folder = keep && *keep ? QString::fromLocal8Bit(keep) : dir;
    const std::string path = (folder + QLatin1Char('/') + QString::fromStdString(name) + QStringLiteral(".tflite")).toStdString();
    writeTflite(path, net, syntheticParams(net, seed));
    const std::vector<std::int8_t> input(static_cast<std::size_t>(net.input.elems()), 0);
    return {runTflm(path, input, 1, 4 << 20), predictTflmArena(net, TflmTarget::host()), net};
}

// Exact agreement, naming the model and the figures when not.
void requireEqual(const Measured& m, const std::string& name)
{
    const std::string what = name + ": predicted arena " + std::to_string(m.predicted.arena_used_bytes) + " (head " +
                             std::to_string(m.predicted.head_bytes) + ", tail " + std::to_string(m.predicted.tail_bytes) + "), tflm_run " +
                             std::to_string(m.run.arena_used_bytes) + " (head " + std::to_string(m.run.head_bytes) + ", tail " +
                             std::to_string(m.run.arena_used_bytes - m.run.head_bytes) + ")";
    const TflmArenaPrediction m7 = predictTflmArena(m.network, TflmTarget::cortexM7());
    std::printf("%s; Cortex-M7 CMSIS-NN predicted %lld (head %lld)\n", what.c_str(), static_cast<long long>(m7.arena_used_bytes),
                static_cast<long long>(m7.head_bytes));
    QVERIFY2(m.predicted.ops == m.run.ops, (name + ": the predicted op list differs from the file's").c_str());
    QVERIFY2(m.predicted.head_bytes == m.run.head_bytes, what.c_str());
    QVERIFY2(m.predicted.arena_used_bytes == m.run.arena_used_bytes, what.c_str());
}

int randomCount(int byDefault)
{
    const char* v = std::getenv("TINYSCOPE_TFLM_ARENA_RANDOM");
    return v && std::atoi(v) > 0 ? std::atoi(v) : byDefault;
}

void checkSpace(const std::string& spaceName, int randoms, std::uint64_t seed)
{
    const DesignSpace space = presetSpace(spaceName);
    const ArchSampler sampler(space);
    QTemporaryDir dir;
    const int rMin = *std::min_element(space.resolutions.begin(), space.resolutions.end());
    const int rMax = *std::max_element(space.resolutions.begin(), space.resolutions.end());
    std::vector<std::pair<std::string, SubnetConfig>> configs{{spaceName + "-min", sampler.minConfig(rMin)},
                                                              {spaceName + "-max", sampler.fullMaxConfig(rMax)}};
    PyRandom rng(seed);
    for (int i = 0; i < randoms; ++i) configs.push_back({spaceName + "-random-" + std::to_string(i), sampler.random(rng)});
    for (const auto& [name, config] : configs) {
        requireEqual(measure(networkFromSubnet(space, config, "subnet"), dir.path(), name), name);
        if (QTest::currentTestFailed()) return;
    }
}

}  // namespace

class TestTflmArena : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void mcunet5fpsIsTheTablesFigure()
    {
        // No file needed: docs/DEPLOY.md's table (tflm_run on the export with MIT's params).
        const TflmArenaPrediction p = predictTflmArena(zooModel("mcunet-5fps"));
        QCOMPARE(p.arena_used_bytes, std::int64_t(331888));
        QCOMPARE(p.head_bytes, std::int64_t(270464));
        QCOMPARE(p.tail_bytes, std::int64_t(61424));
        QCOMPARE(p.tail.sum(), p.tail_bytes);
        QCOMPARE(p.tail.eval_tensors, std::int64_t(150 * 24));   // 150 tensors
        QCOMPARE(p.tail.nodes, std::int64_t(57 * 64));           // 57 ops
        QCOMPARE(static_cast<int>(p.ops.size()), 57);
        // Where the head goes: the PAD before blocks.1's strided depthwise conv, 131,072 + 139,392.
        QCOMPARE(p.live_peak_op, 5);
        QCOMPARE(QString::fromStdString(p.live_peak_op_type), QStringLiteral("PAD"));
        QCOMPARE(p.live_peak_bytes, std::int64_t(270464));
        QCOMPARE(p.scratch_bytes, std::int64_t(0));   // the reference kernels ask for no scratch with int8 weights
    }

    void mcunet5fpsEqualsTflmRun()
    {
        REQUIRE_TFLM_RUN();
        QTemporaryDir dir;
        requireEqual(measure(zooModel("mcunet-5fps"), dir.path(), "mcunet-5fps"), "mcunet-5fps");
    }

    void fmnistSubnetsEqualTflmRun() { REQUIRE_TFLM_RUN(); checkSpace("mcunet-fmnist", randomCount(3), 5); }

    void vwwSubnetsEqualTflmRun() { REQUIRE_TFLM_RUN(); checkSpace("mcunet-vww", randomCount(2), 7); }

    void theTargetsDifferAsTheirBuilds()
    {
        // The same network on the Cortex-M7 build: 32-bit records (eval tensor 12 B, node 32 B), and
        // CMSIS-NN's scratch buffers — the im2col buffer of every conv that is not 1×1, the depthwise
        // buffer of kernels other than 3×3, one int32 per channel for the average pool.
        const Network net = zooModel("mcunet-5fps");
        const TflmArenaPrediction host = predictTflmArena(net, TflmTarget::host());
        const TflmArenaPrediction m7 = predictTflmArena(net, TflmTarget::cortexM7());
        QCOMPARE(m7.tail.eval_tensors, std::int64_t(150 * 12));
        QCOMPARE(m7.tail.nodes, std::int64_t(57 * 32));
        QCOMPARE(m7.tail.sum(), m7.tail_bytes);
        QCOMPARE(m7.tail.per_channel, host.tail.per_channel);   // 16-aligned int32 arrays: the same on both
        QVERIFY(m7.tail_bytes < host.tail_bytes);
        std::int64_t scratch = 0;
        int scratchBuffers = 0;
        for (const TflmPlannedBuffer& b : m7.buffers)
            if (b.scratch) scratch += b.bytes, ++scratchBuffers;
        QCOMPARE(scratch, m7.scratch_bytes);
        QVERIFY(scratchBuffers > 0);
        QCOMPARE(m7.tail.scratch_handles, std::int64_t(scratchBuffers * 4));
        // The stem: PAD, then a VALID 3×3 conv on 3 channels: 2 columns of 27 -> 28 int16 = 112 B.
        QCOMPARE(QString::fromStdString(m7.buffers[m7.buffers.size() - static_cast<std::size_t>(scratchBuffers)].name),
                 QStringLiteral("scratch of op 1 CONV_2D"));
        QCOMPARE(m7.buffers[m7.buffers.size() - static_cast<std::size_t>(scratchBuffers)].bytes, std::int64_t(112));
        QCOMPARE(host.scratch_bytes, std::int64_t(0));
        QVERIFY(m7.head_bytes >= host.head_bytes);
        // arena_used_bytes() measured on the emulated Cortex-M7 (TFLM + CMSIS-NN built by
        // resources/device/engines/tflm.sh; docs/DEPLOY.md "Predicting TFLM's arena").
        QCOMPARE(m7.arena_used_bytes, std::int64_t(327412));
        for (const char* name : {"mcunet-fmnist", "mcunet-vww"}) {
            const DesignSpace space = presetSpace(name);
            const SubnetConfig least = ArchSampler(space).minConfig(*std::min_element(space.resolutions.begin(), space.resolutions.end()));
            QCOMPARE(predictTflmArena(networkFromSubnet(space, least), TflmTarget::cortexM7()).arena_used_bytes,
                     std::int64_t(std::string(name) == "mcunet-vww" ? 163684 : 59172));
        }
        {   // A subnet where CMSIS-NN's scratch raises the head: its 7×7 depthwise buffers (host head 62,976).
            const DesignSpace space = presetSpace("mcunet-fmnist");
            PyRandom rng(5);
            const TflmArenaPrediction p = predictTflmArena(networkFromSubnet(space, ArchSampler(space).random(rng)), TflmTarget::cortexM7());
            QCOMPARE(p.arena_used_bytes, std::int64_t(235492));   // measured on the device
            QCOMPARE(p.head_bytes, std::int64_t(115200));
            // TFLM's reference kernels on the same device (run_export.sh --engine tflm-reference): 32-bit
            // records with the reference OpData, no scratch.
            const TflmTarget m7Reference{4, TflmKernels::Reference};
            PyRandom again(5);
            QCOMPARE(predictTflmArena(networkFromSubnet(space, ArchSampler(space).random(again)), m7Reference).arena_used_bytes, std::int64_t(183012));
            QCOMPARE(predictTflmArena(net, m7Reference).arena_used_bytes, std::int64_t(327332));
        }
        std::printf("mcunet-5fps on %s: arena %lld = head %lld + tail %lld (scratch %lld in %d buffers)\n", m7.target.describe().c_str(),
                    static_cast<long long>(m7.arena_used_bytes), static_cast<long long>(m7.head_bytes), static_cast<long long>(m7.tail_bytes),
                    static_cast<long long>(m7.scratch_bytes), scratchBuffers);
    }

    void theArenaIsBlockMonotone()
    {
        // What the search's feasibility proof assumes: with width, resolution and depths fixed, the
        // subnet with the smallest kernel and expand ratio in every block needs no more arena.
        for (const char* name : {"mcunet-fmnist", "mcunet-vww"}) {
            const DesignSpace space = presetSpace(name);
            const ArchSampler sampler(space);
            PyRandom rng(3);
            const int minK = *std::min_element(space.ks_list.begin(), space.ks_list.end());
            const int minE = *std::min_element(space.expand_list.begin(), space.expand_list.end());
            for (int i = 0; i < 150; ++i) {
                const SubnetConfig c = sampler.random(rng);
                SubnetConfig least = c;
                std::fill(least.ks.begin(), least.ks.end(), minK);
                std::fill(least.e.begin(), least.e.end(), minE);
                for (const TflmTarget& t : {TflmTarget::host(), TflmTarget::cortexM7()}) {
                    const std::int64_t a = predictTflmArena(networkFromSubnet(space, c), t).arena_used_bytes;
                    const std::int64_t b = predictTflmArena(networkFromSubnet(space, least), t).arena_used_bytes;
                    QVERIFY2(b <= a, (std::string(name) + " " + c.toJson().dump() + ": " + std::to_string(a) + " < its block-minimal " +
                                      std::to_string(b)).c_str());
                }
            }
        }
    }

    void aNetworkTheWriterRefusesIsRefused()
    {
        Network net = zooModel("mcunet-5fps");
        net.layers[3].act = Activation::GELU;
        const QString msg = test::inputErrorOf([&] { predictTflmArena(net); });
        QVERIFY2(msg.contains(QStringLiteral("cannot be written as TFLite")) && msg.contains(QStringLiteral("GELU")), qPrintable(msg));
    }

    // ---- search --runtime (CLI)

    void searchUnderTflmBoundsTheDeviceArena()
    {
        REQUIRE_TFLM_RUN();
        QTemporaryDir dir;
        const auto r = test::runTinyscope({"search", "--space", "mcunet-fmnist", "--macs", "10", "--sram", "200", "--runtime", "tflm", "--json",
                                           "--no-evaluated"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        QCOMPARE(QString::fromStdString(j["sram_runtime"].get<std::string>()), QStringLiteral("tflm"));
        QCOMPARE(j["constraints"]["KBTflmArena"].get<double>(), 200.0);
        QVERIFY(!j["constraints"].contains("KBPeakMemory"));
        const DesignSpace space = presetSpace("mcunet-fmnist");
        const SubnetConfig winner = SubnetConfig::fromJson(j["best"]["config"], space, "best.config");
        const Network net = networkFromSubnet(space, winner);
        const TflmArenaPrediction device = predictTflmArena(net, TflmTarget::cortexM7());
        const Json& figure = j["best"]["sram_figure"];
        QCOMPARE(figure["bytes"].get<std::int64_t>(), device.arena_used_bytes);
        QCOMPARE(figure["head_bytes"].get<std::int64_t>(), device.head_bytes);
        QVERIFY(device.arena_used_bytes <= 200 * 1024);
        QVERIFY(device.arena_used_bytes > 150 * 1024);   // the limit binds: our peak SRAM alone would allow far more
        QVERIFY(j["best"]["peak_activation_bytes"].get<std::int64_t>() < 40 * 1024);
        {   // A stored result re-opens with the same limit (StoredSearch restores through TrainingMemoryLimit::restore).
            const Constraints c = TrainingMemoryLimit::restore(space, j["constraints"], j["constraint_definitions"], "result");
            QVERIFY(c.find("KBTflmArena") && c.find("KBTflmArena")->max == 200.0);
            QCOMPARE(QString::fromStdString(c.describe()), QStringLiteral("MACs ≤ 10 M, TFLM arena ≤ 200 KB"));
            QCOMPARE(QString::fromStdString(j["constraint_definitions"]["KBTflmArena"]["runtime"].get<std::string>()), QStringLiteral("tflm"));
        }

        // The winner deployed (the checkpoint's BN statistics, 10 calibration images: the arena does not
        // depend on the values) and run by TFLM on the host: its arena is the host prediction's.
        const std::string config = (dir.path() + QStringLiteral("/winner.json")).toStdString();
        const std::string file = (dir.path() + QStringLiteral("/winner.tflite")).toStdString();
        writeJsonFile(config, j["best"]["config"]);
        const auto d = test::runTinyscope({"deploy", "--supernet", test::sourceDir() + QStringLiteral("/models/supernets/mcunet-fmnist.pth"), "--space",
                                           "mcunet-fmnist", "--config", QString::fromStdString(config), "--format", "tflite", "--bn-images", "0",
                                           "--calib-images", "10", "--out", QString::fromStdString(file)});
        QVERIFY2(d.code == 0, d.err.c_str());
        const TflmRunReport run = runTflm(file, std::vector<std::int8_t>(static_cast<std::size_t>(net.input.elems()), 0), 1);
        const TflmArenaPrediction host = predictTflmArena(net, TflmTarget::host());
        std::printf("winner: device prediction %lld B; host prediction %lld B (head %lld), tflm_run %lld B (head %lld)\n",
                    static_cast<long long>(device.arena_used_bytes), static_cast<long long>(host.arena_used_bytes),
                    static_cast<long long>(host.head_bytes), static_cast<long long>(run.arena_used_bytes), static_cast<long long>(run.head_bytes));
        QCOMPARE(run.arena_used_bytes, host.arena_used_bytes);
        QCOMPARE(run.head_bytes, host.head_bytes);
        QVERIFY(host.ops == run.ops);
    }

    void tinyengineRuntimeIsTheDefault()
    {
        const QStringList args{"search", "--space", "mcunet-vww", "--macs", "60", "--sram", "250", "--json", "--no-evaluated"};
        const auto plain = test::runTinyscope(args);
        const auto named = test::runTinyscope(args + QStringList{"--runtime", "tinyengine"});
        QVERIFY2(plain.code == 0 && named.code == 0, (plain.err + named.err).c_str());
        Json a = Json::parse(plain.out), b = Json::parse(named.out);
        QCOMPARE(QString::fromStdString(b["sram_runtime"].get<std::string>()), QStringLiteral("tinyengine"));
        QCOMPARE(b["best"]["sram_figure"]["bytes"].get<std::int64_t>(), b["best"]["peak_activation_bytes"].get<std::int64_t>());
        for (Json* j : {&a, &b}) j->erase("seconds"), (*j)["best"].erase("seconds");
        QCOMPARE(a["best"].dump(), b["best"].dump());
        QCOMPARE(a["constraints"].dump(), b["constraints"].dump());
        QCOMPARE(a["history"].size(), b["history"].size());
        // The winner docs/DEPLOY.md's table has for these limits (vww-winner), found before --runtime existed.
        QCOMPARE(a["best"]["macs"].get<std::int64_t>(), std::int64_t(59672960));
    }

    void infeasibleUnderTflmSaysTheLeastArena()
    {
        const auto r = test::runTinyscope({"search", "--space", "mcunet-fmnist", "--sram", "40", "--runtime", "tflm"});
        QCOMPARE(r.code, 3);
        const DesignSpace space = presetSpace("mcunet-fmnist");
        const TflmArenaPrediction least =
            predictTflmArena(networkFromSubnet(space, ArchSampler(space).minConfig(*std::min_element(space.resolutions.begin(), space.resolutions.end()))), TflmTarget::cortexM7());
        const std::string want = "tinyscope search: TFLM arena ≤ 40 KB is impossible: the smallest subnet in this space needs " +
                                 formatQuantityKB(least.arena_used_bytes) + " (head " + groupThousands(least.head_bytes) + " B + tail " +
                                 groupThousands(least.tail_bytes) + " B on 32-bit Cortex-M7, CMSIS-NN kernels)\n";
        QCOMPARE(r.err, want);
        const auto bad = test::runTinyscope({"search", "--runtime", "tflite"});
        QCOMPARE(bad.code, 2);
        QCOMPARE(bad.err, std::string("tinyscope search: --runtime: expected tinyengine or tflm, got 'tflite'\n"));
    }
};

QTEST_GUILESS_MAIN(TestTflmArena)
#include "test_tflm_arena.moc"
