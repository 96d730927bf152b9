// Reading a Tinyscope int8 .tflite back (deploy/TfliteRead.h): for mcunet-5fps with MIT's int8
// params, the shipped demo supernet's min and max subnets (squeeze-and-excite: MUL) quantized as
// deploy does, its max subnet channel-pruned and saved as prune --out saves it, and a small hand-made network with scale.json doubles that are not float32 values,
// buildTflite -> parseTflite -> buildTflite gives the same bytes, the read network has the
// original's layers and figures, and tfliteReferenceOutputs on random NHWC inputs equals
// Int8Forward (TFLite arithmetic) on the original values exactly — and TFLM's outputs when tflm_run
// was built. Refusals: a missing file, a folder, an empty / truncated / bit-flipped file, another
// identifier, schema version, two subgraphs' worth of inputs, a foreign model (SOFTMAX), a fused
// activation TFLite would clamp differently, a buffer index out of range — one line naming the file.
#include "PrunedSubnet.h"
#include "QuantizedSubnet.h"
#include "TestSupport.h"

#include "Error.h"
#include "data/ImageDataset.h"
#include "deploy/TfliteRead.h"
#include "deploy/TflmRunner.h"
#include "graph/ForwardLowering.h"
#include "io/DataPaths.h"
#include "nn/TorchRuntime.h"
#include "tflite_subset_generated.h"
#include "zoo/NetworkBuilder.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"

#include <QFile>
#include <QTemporaryDir>

#include <cmath>
#include <random>

using namespace tinyscope;

namespace {


// A small network with every op the writer emits: a stride-2 conv on an even size (PAD), a
// depthwise conv, a residual ADD, a squeeze-excite MUL (h-sigmoid gate), pooling, the classifier.
Network smallNetwork()
{
    NetworkBuilder b("small-read", Shape3{3, 12, 12});
    auto conv = [&](int from, const char* name, const char* role, const char* prefix, int block, int cout, int k, int stride, int groups, Activation act) {
        return b.conv(from, ConvSpec::of(name, role, prefix, block, cout, k, stride, groups, act).withBn());
    };
    const int stem = conv(-1, "stem", "stem", "v0", -1, 8, 3, 2, 1, Activation::ReLU6);   // 12 -> 6: PyTorch pads (1,1), SAME (0,1)
    int y = conv(stem, "b1.pw1", "pw1", "v1_conv_0", 0, 16, 1, 1, 1, Activation::ReLU6);
    y = conv(y, "b1.dw", "dw", "v1_conv_1", 0, 16, 3, 1, 16, Activation::ReLU6);
    const int pool = b.globalAvgPool(y, "b1.se.pool");
    int g = b.conv(pool, ConvSpec::of("b1.se.reduce", "se_reduce", "v1_se_0", 0, 4, 1, 1, 1, Activation::ReLU).withBias());
    g = b.conv(g, ConvSpec::of("b1.se.expand", "se_expand", "v1_se_1", 0, 16, 1, 1, 1, Activation::HSigmoid).withBias());
    y = b.channelScale(g, y, "b1.se.scale", "v1_qmul", 0);
    y = conv(y, "b1.pw2", "pw2", "v1_conv_2", 0, 8, 1, 1, 1, Activation::None);
    const int x = b.add(stem, y, "b1.add", "v1_qadd", 0);
    const int gap = b.globalAvgPool(x, "pool");
    b.conv(gap, ConvSpec::of("classifier", "classifier", "v2", -1, 5).asLinear());
    return b.finish(5, LossKind::CrossEntropy, "test network", "tests");
}

// Random but consistent int8 params: one (scale, zero point) per tensor, scale.json doubles that
// are no float32 values (as the post-training quantizer's), ReLU outputs at zero point -128.
QuantizedParams syntheticParams(const Network& net, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const int L = static_cast<int>(net.layers.size());
    std::vector<double> scale(static_cast<std::size_t>(L + 1));
    std::vector<int> zero(static_cast<std::size_t>(L + 1));
    auto slot = [](int layer) { return static_cast<std::size_t>(layer + 1); };
    scale[0] = 0.0171234567891;
    zero[0] = -3;
    for (int i = 0; i < L; ++i) {
        const Layer& l = net.layer(i);
        if (l.kind == LayerKind::GlobalAvgPool) {
            scale[slot(i)] = scale[slot(l.inputs[0])], zero[slot(i)] = zero[slot(l.inputs[0])];
            continue;
        }
        scale[slot(i)] = 0.01 + 0.05 * unit(rng) + 1e-12 * unit(rng);
        zero[slot(i)] = l.act == Activation::ReLU || l.act == Activation::ReLU6 ? -128 : static_cast<int>(std::lround(20 * unit(rng))) - 10;
    }
    QuantizedParams p;
    p.source = "synthetic";
    auto put8 = [&](const std::string& k, int v) { p.set(k, int8Array({static_cast<std::int8_t>(v)}, {1})); };
    auto putF = [&](const std::string& k, double v) { p.set(k, float32Array({static_cast<float>(v)}, {1})); };
    for (int i = 0; i < L; ++i) {
        const Layer& l = net.layer(i);
        const std::string& pre = l.ir_prefix;
        if (l.isConv()) {
            const int I = l.cin / l.groups;
            std::vector<std::int8_t> w(static_cast<std::size_t>(l.cout) * I * l.kh * l.kw);
            for (auto& v : w) v = static_cast<std::int8_t>(static_cast<int>(rng() % 255) - 127);
            std::vector<std::int32_t> bias(static_cast<std::size_t>(l.cout));
            for (auto& v : bias) v = static_cast<std::int32_t>(rng() % 20001) - 10000;
            std::vector<float> seff(static_cast<std::size_t>(l.cout));
            for (auto& v : seff) v = static_cast<float>(2e-4 + 3e-3 * unit(rng));
            p.set(pre + "_weight", int8Array(w, {l.cout, I, l.kh, l.kw}));
            p.set(pre + "_bias", int32Array(bias, {l.cout}));
            put8(pre + "_zero_x", zero[slot(l.inputs[0])]);
            put8(pre + "_zero_y", zero[slot(i)]);
            p.set(pre + "_scale", float32Array(seff, {l.cout}));
            p.scales[pre + "_x_scale"] = scale[slot(l.inputs[0])];
            p.scales[pre + "_y_scale"] = scale[slot(i)];
        } else if (l.kind == LayerKind::Add || l.kind == LayerKind::ChannelScale) {
            put8(pre + "_zero_x1", zero[slot(l.inputs[0])]);
            put8(pre + "_zero_x2", zero[slot(l.inputs[1])]);
            putF(pre + "_scale_x1", scale[slot(l.inputs[0])]);
            putF(pre + "_scale_x2", scale[slot(l.inputs[1])]);
            put8(pre + "_zero_y", zero[slot(i)]);
            putF(pre + "_scale_y", scale[slot(i)]);
        }
    }
    return p;
}

std::vector<std::int8_t> randomNhwc(const Shape3& in, int images, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<std::int8_t> v(static_cast<std::size_t>(in.elems()) * static_cast<std::size_t>(images));
    for (auto& b : v) b = static_cast<std::int8_t>(rng() & 0xff);
    return v;
}

std::string writeBytes(const QTemporaryDir& dir, const QString& name, const std::string& bytes)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes.data(), static_cast<qint64>(bytes.size())) != static_cast<qint64>(bytes.size()))
        throw std::runtime_error("cannot write " + path.toStdString());
    return path.toStdString();
}

// The whole round trip of one quantized network; fails the calling test on the first difference.
void checkRoundTrip(const Network& net, const QuantizedParams& params, const TfliteMetadata& meta, const char* what)
{
    const TfliteModel built = buildTflite(net, params, meta);
    const TfliteFile f = parseTflite(built.bytes, std::string(what) + ".tflite");

    // (1) The strong round trip: what was read writes the same bytes.
    QVERIFY2(f.rebuilds_exactly, what);
    const TfliteModel again = buildTflite(f.net, f.params, f.meta);
    QVERIFY2(again.bytes == built.bytes, what);
    QCOMPARE(f.bytes, static_cast<std::int64_t>(built.bytes.size()));
    QCOMPARE(f.ops, built.ops);
    QCOMPARE(f.metadata, built.metadata);
    QCOMPARE(f.input.toJson(), built.input.toJson());
    QCOMPARE(f.output.toJson(), built.output.toJson());
    // The network: the original's layers, wiring, shapes, activations where the file states them,
    // and its figures (MCUNet's peak needs the roles and residual blocks inferred right).
    QCOMPARE(f.net.name, net.name);
    QCOMPARE(f.net.layers.size(), net.layers.size());
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& a = net.layers[i];
        const Layer& b = f.net.layers[i];
        QCOMPARE(b.name, a.name);
        QVERIFY(b.kind == a.kind);
        QCOMPARE(b.inputs, a.inputs);
        QVERIFY(b.in == a.in && b.out == a.out);
        if (a.isConv()) {
            QCOMPARE(b.groups, a.groups);
            QCOMPARE((std::vector<int>{b.kh, b.kw, b.stride_h, b.stride_w, b.pad_t, b.pad_l, b.pad_b, b.pad_r}),
                     (std::vector<int>{a.kh, a.kw, a.stride_h, a.stride_w, a.pad_t, a.pad_l, a.pad_b, a.pad_r}));
            QCOMPARE(b.role == "se_reduce" || b.role == "se_expand", a.role == "se_reduce" || a.role == "se_expand");
        }
    }
    QCOMPARE(f.net.macs(), net.macs());
    QCOMPARE(f.net.params(), net.params());
    QCOMPARE(f.net.peakActivationBytes(), net.peakActivationBytes());
    QVERIFY2(f.meta.extra.empty() == meta.extra.empty(), f.meta.extra.dump().c_str());
    // The effective scales are the writer's, conv by conv.
    QCOMPARE(f.effective_scales.size(), built.effective_scales.size());
    for (int c = 0; c < net.numConvs(); ++c)
        QCOMPARE(f.effective_scales.at(f.net.conv(c).ir_prefix + "_scale"), built.effective_scales.at(net.conv(c).ir_prefix + "_scale"));

    // (2) The int8 outputs: Int8Forward in TFLite arithmetic on the original values.
    const int images = 3;
    const std::vector<std::int8_t> nhwc = randomNhwc(net.input, images, 17);
    const std::vector<std::vector<std::int8_t>> ours = tfliteReferenceOutputs(f, nhwc, images);
    QCOMPARE(static_cast<int>(ours.size()), images);
    const TrainingGraph g = lowerForward(net);
    const Int8Forward original(g, params, Int8Arithmetic::Tflite, &built.effective_scales);
    const Shape3 in = net.input;
    for (int i = 0; i < images; ++i) {
        std::vector<std::int8_t> chw(static_cast<std::size_t>(in.elems()));
        for (int c = 0; c < in.c; ++c)
            for (int y = 0; y < in.h; ++y)
                for (int x = 0; x < in.w; ++x)
                    chw[(static_cast<std::size_t>(c) * in.h + y) * in.w + x] =
                        nhwc[static_cast<std::size_t>(i) * static_cast<std::size_t>(in.elems()) + (static_cast<std::size_t>(y) * in.w + x) * in.c + c];
        QCOMPARE(ours[static_cast<std::size_t>(i)], original.run(chw));
    }
    // TinyEngine's arithmetic runs on the same file (float32 effective scales).
    QCOMPARE(tfliteReferenceOutputs(f, nhwc, images, Int8Arithmetic::TinyEngine).size(), std::size_t(images));

    // (3) TFLM on the file, when it was built.
    if (tflmRunBinary().empty()) {
        qInfo("%s: no tflm_run (%s)", what, tflmRunMissing().c_str());
        return;
    }
    QTemporaryDir dir;
    const std::string path = writeBytes(dir, QStringLiteral("model.tflite"), built.bytes);
    const TfliteFile fromDisk = readTflite(path);
    QVERIFY(fromDisk.rebuilds_exactly);
    const TflmRunReport r = runTflm(path, nhwc, images);
    QCOMPARE(static_cast<int>(r.outputs.size()), images);
    for (int i = 0; i < images; ++i) {
        const std::vector<std::int8_t>& o = ours[static_cast<std::size_t>(i)];
        QCOMPARE(r.outputs[static_cast<std::size_t>(i)], std::vector<double>(o.begin(), o.end()));
    }
    qInfo("%s: %zu bytes rebuilt exactly; TFLM's outputs of %d images equal", what, built.bytes.size(), images);
}

// The message parseTflite / readTflite gives, checked to be one line naming the file.
QString refusal(const std::function<void()>& f, const std::string& file)
{
    const QString msg = test::inputErrorOf(f);
    if (msg.isEmpty()) return QStringLiteral("<accepted>");
    if (msg.contains(QLatin1Char('\n'))) return QStringLiteral("<several lines> ") + msg;
    if (!msg.startsWith(QString::fromStdString(file + ": "))) return QStringLiteral("<does not name the file> ") + msg;
    return msg;
}

}  // namespace

class TestTfliteRead : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { setTorchThreads(2); }

    void smallNetworkWithDoubleScalesRoundTrips()
    {
        const Network net = smallNetwork();
        TfliteMetadata meta;
        meta.labels = {"a", "b", "c", "d", "e"};
        meta.channel_order = "BGR";
        meta.norm.mean[1] = 0.25f;
        meta.extra = Json{{"board", "nucleo-f746zg"}};
        for (std::uint32_t seed : {1u, 2u, 3u, 4u}) {
            checkRoundTrip(net, syntheticParams(net, seed), meta, "small");
            if (QTest::currentTestFailed()) return;
        }
    }

    void mcunet5fpsWithMitParamsRoundTrips()
    {
        REQUIRE_SHARED();
        QuantizedParams p = readParamsPickle(test::tinyengineRef("full-int8-params.pkl"));
        p.scales = readScaleJson(test::tinyengineRef("scale.json"));
        TfliteMetadata meta;
        meta.config = Json{{"zoo", "mcunet-5fps"}};
        checkRoundTrip(zooModel("mcunet-5fps"), p, meta, "mcunet-5fps");
    }

    void shippedSupernetSubnetsWithSqueezeExciteRoundTrip_data()
    {
        QTest::addColumn<QString>("config");
        QTest::newRow("min") << QStringLiteral("min");
        QTest::newRow("max") << QStringLiteral("max");
    }
    void shippedSupernetSubnetsWithSqueezeExciteRoundTrip()
    {
        QFETCH(QString, config);
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        const ModelSource spec = ModelSource::subnetByName("", config.toStdString(), dataRoot() + "/models/supernets/mcunet-fmnist.pth");
        QuantizeOptions o;
        o.calib_images = 16;
        o.bn_images = 32;
        const PreparedModel pm = prepareModel(spec, o);
        int se = 0;
        for (const Layer& l : pm.network.layers) se += l.kind == LayerKind::ChannelScale;
        QVERIFY(se > 0);
        TfliteMetadata meta;
        meta.config = pm.subnet ? Json(config.toStdString()) : Json();
        checkRoundTrip(pm.network, pm.params, meta, qPrintable(config));
    }

    // A channel-pruned subnet (prune --out's folder, issue 50) is an ordinary narrower network: its
    // file round-trips and TFLM computes Int8Forward's outputs on it.
    void aChannelPrunedSubnetRoundTrips()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        if (shippedSupernetPath().empty()) QSKIP("the shipped supernet models/supernets/mcunet-fmnist.pth is absent");
        QTemporaryDir dir;
        const ModelSource spec = test::prunedSubnetFolder(dir.filePath(QStringLiteral("pruned")), "max", 0.3);
        QuantizeOptions o;
        o.calib_images = 16;
        o.bn_images = 32;
        const PreparedModel pm = prepareModel(spec, o);
        QVERIFY(pm.network.params() < networkFromSubnet(*pm.space, *pm.subnet).params());
        TfliteMetadata meta;
        meta.config = pm.subnet->toJson();
        checkRoundTrip(pm.network, pm.params, meta, "pruned max");
    }

    void refusesWhatIsNoTinyscopeExportInOneLine()
    {
        const Network net = smallNetwork();
        const std::string good = buildTflite(net, syntheticParams(net, 1)).bytes;
        QTemporaryDir dir;
        auto parse = [&](const std::string& bytes) { return refusal([&] { parseTflite(bytes, "m.tflite"); }, "m.tflite"); };
        auto contains = [](const QString& msg, const char* want) { return msg.contains(QLatin1String(want)) && !msg.startsWith(QLatin1Char('<')); };
#define REFUSED(msg, want) QVERIFY2(contains(msg, want), qPrintable(msg))
        // Files.
        const std::string missing = dir.filePath(QStringLiteral("none.tflite")).toStdString();
        REFUSED(refusal([&] { readTflite(missing); }, missing), "cannot read the file");
        const std::string folder = dir.path().toStdString();
        REFUSED(refusal([&] { readTflite(folder); }, folder), "is a folder");
        const std::string empty = writeBytes(dir, QStringLiteral("empty.tflite"), "");
        REFUSED(refusal([&] { readTflite(empty); }, empty), "0 bytes, too small for a TFLite flatbuffer");
        // Identifier, verifier, version.
        std::string other = good;
        other.replace(4, 4, "TFL2");
        REFUSED(parse(other), "no 'TFL3' file identifier");
        REFUSED(parse(good.substr(0, good.size() / 2)), "corrupt TFLite flatbuffer");
        std::string flipped = good;
        flipped[0] = static_cast<char>(0xf0), flipped[1] = static_cast<char>(0xff);   // the root offset past the end
        REFUSED(parse(flipped), "corrupt TFLite flatbuffer");
        // Truncations at every 97th byte and single bit flips all over: a refusal or a file that
        // still reads (a flipped weight bit), never a crash.
        int refused = 0, read = 0;
        for (std::size_t n = 0; n < good.size(); n += 97) {
            const QString m = parse(good.substr(0, n));
            QVERIFY2(!m.startsWith(QLatin1Char('<')), qPrintable(m));
            ++refused;
        }
        for (std::size_t at = 0; at < good.size(); at += 13) {
            std::string b = good;
            b[at] = static_cast<char>(b[at] ^ (1 << (at % 8)));
            const QString m = parse(b);
            if (m == QLatin1String("<accepted>")) ++read;
            else QVERIFY2(!m.startsWith(QLatin1Char('<')), qPrintable(m));
        }
        QVERIFY(refused > 10 && read > 0);

        // Structure: a foreign model (no metadata, a SOFTMAX), more inputs, another version.
        auto model = [](int version, std::vector<int> inputs, int op2, bool metadata, int relu6Zero) {
            flatbuffers::FlatBufferBuilder fb;
            const std::vector<float> s1{0.02f};
            const std::vector<std::int64_t> z1{relu6Zero};
            auto q = [&] { return tflite::CreateQuantizationParametersDirect(fb, nullptr, nullptr, &s1, &z1, 0); };
            const std::vector<std::int8_t> w(3 * 3 * 3 * 4, 1);
            const std::vector<std::int32_t> bias(4, 0);
            std::vector<flatbuffers::Offset<tflite::Buffer>> buffers{tflite::CreateBuffer(fb),
                                                                     tflite::CreateBuffer(fb, fb.CreateVector(reinterpret_cast<const std::uint8_t*>(w.data()), w.size())),
                                                                     tflite::CreateBuffer(fb, fb.CreateVector(reinterpret_cast<const std::uint8_t*>(bias.data()), 16))};
            const std::vector<float> sw(4, 0.01f), sb(4, 0.0002f);
            const std::vector<std::int64_t> zw(4, 0);
            const std::vector<int> in{1, 8, 8, 3}, ws{4, 3, 3, 3}, bs{4}, out{1, 8, 8, 4}, pooled{1, 1, 1, 4};
            std::vector<flatbuffers::Offset<tflite::Tensor>> tensors{
                tflite::CreateTensorDirect(fb, &in, tflite::TensorType_INT8, 0, "input", q()),
                tflite::CreateTensorDirect(fb, &ws, tflite::TensorType_INT8, 1, "conv/weight", tflite::CreateQuantizationParametersDirect(fb, nullptr, nullptr, &sw, &zw, 0)),
                tflite::CreateTensorDirect(fb, &bs, tflite::TensorType_INT32, 2, "conv/bias", tflite::CreateQuantizationParametersDirect(fb, nullptr, nullptr, &sb, &zw, 0)),
                tflite::CreateTensorDirect(fb, &out, tflite::TensorType_INT8, 0, "conv", q()),
                tflite::CreateTensorDirect(fb, &pooled, tflite::TensorType_INT8, 7, "out", q())};   // buffer 7: out of range
            const std::vector<int> convIn{0, 1, 2}, convOut{3}, op2In{3}, op2Out{4};
            std::vector<flatbuffers::Offset<tflite::Operator>> ops{
                tflite::CreateOperatorDirect(fb, 0, &convIn, &convOut, tflite::BuiltinOptions_Conv2DOptions,
                                             tflite::CreateConv2DOptions(fb, tflite::Padding_SAME, 1, 1, tflite::ActivationFunctionType_RELU6).Union()),
                tflite::CreateOperatorDirect(fb, 1, &op2In, &op2Out, op2 == 1 ? tflite::BuiltinOptions_Pool2DOptions : tflite::BuiltinOptions_NONE,
                                             op2 == 1 ? tflite::CreatePool2DOptions(fb, tflite::Padding_VALID, 1, 1, 8, 8).Union() : 0)};
            const std::vector<flatbuffers::Offset<tflite::OperatorCode>> codes{
                tflite::CreateOperatorCode(fb, 3, 0, 3, tflite::BuiltinOperator_CONV_2D),
                tflite::CreateOperatorCode(fb, static_cast<std::int8_t>(op2), 0, 1, static_cast<tflite::BuiltinOperator>(op2))};
            const std::vector<int> outs{4};
            const auto sg = tflite::CreateSubGraphDirect(fb, &tensors, &inputs, &outs, &ops, "main");
            const std::vector<flatbuffers::Offset<tflite::SubGraph>> sgs{sg};
            std::vector<flatbuffers::Offset<tflite::Metadata>> md;
            if (metadata) {
                const std::string j = Json{{"format", "tinyscope-tflite"}, {"model", "hand"}}.dump();
                buffers.push_back(tflite::CreateBuffer(fb, fb.CreateVector(reinterpret_cast<const std::uint8_t*>(j.data()), j.size())));
                md.push_back(tflite::CreateMetadataDirect(fb, "tinyscope", static_cast<std::uint32_t>(buffers.size() - 1)));
            }
            const auto m = tflite::CreateModelDirect(fb, static_cast<std::uint32_t>(version), &codes, &sgs, "hand-made", &buffers, nullptr, &md);
            tflite::FinishModelBuffer(fb, m);
            return std::string(reinterpret_cast<const char*>(fb.GetBufferPointer()), fb.GetSize());
        };
        REFUSED(parse(model(3, {0}, 25, false, -128)), "foreign .tflite: op 1 is SOFTMAX; device-run compares only Tinyscope exports (core/deploy/TfliteExport)");
        REFUSED(parse(model(3, {0}, 2, true, -128)), "foreign .tflite: op 1 is CONCATENATION");
        REFUSED(parse(model(2, {0}, 25, false, -128)), "schema version 2, expected 3");
        REFUSED(parse(model(3, {0, 3}, 25, false, -128)), "2 inputs; a Tinyscope export has one");
        REFUSED(parse(model(3, {0}, 1, false, -128)), "foreign .tflite: no 'tinyscope' metadata");
        // Metadata present, the ops the writer's: the tensors are checked one by one.
        REFUSED(parse(model(3, {0}, 1, true, -128)), "op 1 (AVERAGE_POOL_2D): tensor 'out': buffer index 7 is out of range (the file has 4 buffers)");
        REFUSED(parse(model(3, {0}, 1, true, 0)), "op 0 (CONV_2D): its fused RELU6 clamps to [0, 127], not the whole int8 range");
#undef REFUSED
    }
};

QTEST_GUILESS_MAIN(TestTfliteRead)
#include "test_tflite_read.moc"
