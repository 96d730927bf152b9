// tflm_run (tests/tflm): TensorFlow Lite Micro, compiled on the host from ../shared/reference/runtimes,
// runs int8 TFLite models that this test writes itself, as JSON against TFLite's official schema and
// converted by Debian's flatc (not by the project's writer). The outputs must equal, to the bit, an
// oracle written here with plain integer arithmetic following TFLM's documented quantization rule
// (QuantizeMultiplier: frexp into a Q31 multiplier and a shift; MultiplyByQuantizedMultiplier:
// gemmlowp's saturating rounding doubling high multiply, then a rounding right shift). Bad input
// (corrupt model, unknown op, wrong input size, tiny arena) gives one line and exit 2.
#include "TestSupport.h"

#include "TfliteSchema.h"
#include "deploy/TfliteExport.h"
#include "graph/ForwardLowering.h"
#include "tinyengine/Int8Forward.h"
#include "tinyengine/QuantizedParams.h"
#include "zoo/ZooCatalog.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

using nlohmann::json;

namespace {

QString tflmDir() { return QStringLiteral(TINYSCOPE_SHARED_DIR "/reference/runtimes/tflite-micro"); }
QString tflmRunBinary() { return QStringLiteral(TINYSCOPE_TFLM_RUN); }
QString officialSchema() { return tinyscope::test::officialTfliteSchema(QStringLiteral(TINYSCOPE_SHARED_DIR)); }

// ---- the oracle: TFLM's documented int8 arithmetic, written out -------------------------------

struct Multiplier {
    std::int32_t m = 0;
    int shift = 0;  // > 0: left shift, < 0: right shift
};

// QuantizeMultiplier: d = q * 2^shift with q in [0.5, 1), q rounded to Q31 (half away from zero).
Multiplier quantizeMultiplier(double d)
{
    if (d == 0.0) return {};
    int shift = 0;
    const double q = std::frexp(d, &shift);
    std::int64_t fixed = std::llround(q * double(1ll << 31));
    if (fixed == (1ll << 31)) {
        fixed /= 2;
        ++shift;
    }
    if (shift < -31) return {};
    return {std::int32_t(fixed), shift};
}

// gemmlowp::SaturatingRoundingDoublingHighMul: round(a * b / 2^31), the one overflow saturated.
std::int32_t doublingHighMul(std::int32_t a, std::int32_t b)
{
    if (a == b && a == std::numeric_limits<std::int32_t>::min()) return std::numeric_limits<std::int32_t>::max();
    const std::int64_t ab = std::int64_t(a) * std::int64_t(b);
    const std::int64_t nudge = ab >= 0 ? (1ll << 30) : (1 - (1ll << 30));
    return std::int32_t((ab + nudge) / (1ll << 31));
}

// gemmlowp::RoundingDivideByPOT: x / 2^e rounded half away from zero.
std::int32_t roundingDivideByPot(std::int32_t x, int e)
{
    const std::int32_t mask = std::int32_t((1ll << e) - 1);
    const std::int32_t remainder = x & mask;
    const std::int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (remainder > threshold ? 1 : 0);
}

// MultiplyByQuantizedMultiplier (TFLM's default, double rounding).
std::int32_t multiplyByMultiplier(std::int32_t x, Multiplier q)
{
    const int left = q.shift > 0 ? q.shift : 0;
    const int right = q.shift > 0 ? 0 : -q.shift;
    return roundingDivideByPot(doublingHighMul(x * (1 << left), q.m), right);
}

std::int8_t clampInt8(std::int32_t v) { return std::int8_t(std::clamp(v, -128, 127)); }

struct Quant {
    float scale;
    int zeroPoint;
};

// ---- the test model --------------------------------------------------------------------------
// input [1,H,W,3] -> CONV_2D 3x3 SAME (4 ch) -> DEPTHWISE_CONV_2D 3x3 SAME -> ADD(conv, dw)
// -> MEAN over H,W -> FULLY_CONNECTED 4->5; int8 activations, per-channel int8 weights, int32 biases.
struct TestNet {
    int h = 8, w = 8;
    static constexpr int cin = 3, c = 4, classes = 5;
    Quant in{0.02f, -3}, conv{0.08f, 5}, dw{0.06f, -2}, add{0.1f, 1}, mean{0.05f, -1}, out{0.09f, 2};
    std::vector<float> convScales, dwScales, fcScales;
    std::vector<std::int8_t> convW;  // [c][3][3][cin] (OHWI)
    std::vector<std::int8_t> dwW;    // [1][3][3][c]
    std::vector<std::int8_t> fcW;    // [classes][c]
    std::vector<std::int32_t> convB, dwB, fcB;

    explicit TestNet(unsigned seed, int height = 8, int width = 8) : h(height), w(width)
    {
        std::mt19937 rng(seed);
        auto i8 = [&] { return std::int8_t(int(rng() % 255) - 127); };
        auto scale = [&](float base) { return base * (0.5f + float(rng() % 100) / 100.0f); };
        for (int i = 0; i < c; ++i) convScales.push_back(scale(0.01f));
        for (int i = 0; i < c; ++i) dwScales.push_back(scale(0.02f));
        for (int i = 0; i < classes; ++i) fcScales.push_back(scale(0.01f));
        for (int i = 0; i < c * 9 * cin; ++i) convW.push_back(i8());
        for (int i = 0; i < 9 * c; ++i) dwW.push_back(i8());
        for (int i = 0; i < classes * c; ++i) fcW.push_back(i8());
        for (int i = 0; i < c; ++i) convB.push_back(int(rng() % 2001) - 1000);
        for (int i = 0; i < c; ++i) dwB.push_back(int(rng() % 2001) - 1000);
        for (int i = 0; i < classes; ++i) fcB.push_back(int(rng() % 2001) - 1000);
    }

    std::size_t inputBytes() const { return std::size_t(h) * w * cin; }

    // SAME 3x3 stride 1 convolution (depthwise when `depthwise`), per-channel requantization.
    std::vector<std::int8_t> conv3x3(const std::vector<std::int8_t>& x, int channelsIn, Quant qi, Quant qo,
                                     const std::vector<std::int8_t>& weights, const std::vector<std::int32_t>& bias,
                                     const std::vector<float>& scales, bool depthwise) const
    {
        std::vector<std::int8_t> y(std::size_t(h) * w * c);
        for (int oc = 0; oc < c; ++oc) {
            const Multiplier q = quantizeMultiplier(double(qi.scale) * double(scales[oc]) / double(qo.scale));
            for (int oy = 0; oy < h; ++oy)
                for (int ox = 0; ox < w; ++ox) {
                    std::int32_t acc = 0;
                    for (int ky = 0; ky < 3; ++ky)
                        for (int kx = 0; kx < 3; ++kx) {
                            const int iy = oy + ky - 1, ix = ox + kx - 1;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                            if (depthwise) {
                                acc += (x[(iy * w + ix) * channelsIn + oc] - qi.zeroPoint) * weights[(ky * 3 + kx) * c + oc];
                            } else {
                                for (int ic = 0; ic < channelsIn; ++ic)
                                    acc += (x[(iy * w + ix) * channelsIn + ic] - qi.zeroPoint) *
                                           weights[((oc * 3 + ky) * 3 + kx) * channelsIn + ic];
                            }
                        }
                    y[(oy * w + ox) * c + oc] = clampInt8(multiplyByMultiplier(acc + bias[oc], q) + qo.zeroPoint);
                }
        }
        return y;
    }

    std::vector<std::int8_t> forward(const std::int8_t* image) const
    {
        const std::vector<std::int8_t> x(image, image + inputBytes());
        const auto a = conv3x3(x, cin, in, conv, convW, convB, convScales, false);
        const auto b = conv3x3(a, c, conv, dw, dwW, dwB, dwScales, true);

        // ADD: both inputs rescaled to twice the larger scale, left shift 20, then to the output.
        const double twiceMax = 2.0 * double(std::max(conv.scale, dw.scale));
        const Multiplier m1 = quantizeMultiplier(double(conv.scale) / twiceMax);
        const Multiplier m2 = quantizeMultiplier(double(dw.scale) / twiceMax);
        const Multiplier mo = quantizeMultiplier(twiceMax / (double(1 << 20) * double(add.scale)));
        std::vector<std::int8_t> s(a.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            const std::int32_t x1 = multiplyByMultiplier((a[i] - conv.zeroPoint) * (1 << 20), m1);
            const std::int32_t x2 = multiplyByMultiplier((b[i] - dw.zeroPoint) * (1 << 20), m2);
            s[i] = clampInt8(multiplyByMultiplier(x1 + x2, mo) + add.zeroPoint);
        }

        // MEAN over H and W: the sum of (x - zp), the multiplier in/out divided by the count n with
        // its shift lowered by floor(log2 n) first (reference_ops::QuantizedMeanOrSum).
        const std::int64_t n = std::int64_t(h) * w;
        Multiplier mm = quantizeMultiplier(double(add.scale) / double(mean.scale));
        int shift = 63 - __builtin_clzll(std::uint64_t(n));
        shift = std::min({shift, 32, 31 + mm.shift});
        mm.m = std::int32_t((std::int64_t(mm.m) << shift) / n);
        mm.shift -= shift;
        std::vector<std::int8_t> pooled(c);
        for (int ch = 0; ch < c; ++ch) {
            std::int32_t sum = 0;
            for (std::int64_t i = 0; i < n; ++i) sum += s[std::size_t(i) * c + ch];
            pooled[ch] = clampInt8(multiplyByMultiplier(sum - std::int32_t(add.zeroPoint * n), mm) + mean.zeroPoint);
        }

        // FULLY_CONNECTED with per-output-channel weight scales.
        std::vector<std::int8_t> y(classes);
        for (int o = 0; o < classes; ++o) {
            const Multiplier q = quantizeMultiplier(double(mean.scale) * double(fcScales[o]) / double(out.scale));
            std::int32_t acc = fcB[o];
            for (int i = 0; i < c; ++i) acc += (pooled[i] - mean.zeroPoint) * fcW[o * c + i];
            y[o] = clampInt8(multiplyByMultiplier(acc, q) + out.zeroPoint);
        }
        return y;
    }

    // The model as TFLite JSON (official schema field names; flatc -b turns it into a .tflite).
    json modelJson(const std::string& fcOpName = "FULLY_CONNECTED") const
    {
        auto bytesOf8 = [](const std::vector<std::int8_t>& v) {
            json a = json::array();
            for (std::int8_t x : v) a.push_back(std::uint8_t(x));
            return a;
        };
        auto bytesOf32 = [](const std::vector<std::int32_t>& v) {
            json a = json::array();
            for (std::int32_t x : v)
                for (int k = 0; k < 4; ++k) a.push_back((std::uint32_t(x) >> (8 * k)) & 0xff);
            return a;
        };
        auto q = [](Quant p) { return json{{"scale", {p.scale}}, {"zero_point", {p.zeroPoint}}}; };
        auto perChannel = [](const std::vector<float>& scales, int dim) {
            return json{{"scale", scales}, {"zero_point", std::vector<int>(scales.size(), 0)}, {"quantized_dimension", dim}};
        };
        auto biasQuant = [](Quant input, const std::vector<float>& scales) {
            std::vector<float> s;
            for (float x : scales) s.push_back(input.scale * x);
            return json{{"scale", s}, {"zero_point", std::vector<int>(s.size(), 0)}};
        };
        auto tensor = [](const char* name, std::vector<int> shape, const char* type, int buffer, json quant) {
            return json{{"name", name}, {"shape", shape}, {"type", type}, {"buffer", buffer}, {"quantization", quant}};
        };
        json tensors = json::array({
            tensor("input", {1, h, w, cin}, "INT8", 0, q(in)),                                 // 0
            tensor("conv/w", {c, 3, 3, cin}, "INT8", 1, perChannel(convScales, 0)),            // 1
            tensor("conv/b", {c}, "INT32", 2, biasQuant(in, convScales)),                      // 2
            tensor("conv", {1, h, w, c}, "INT8", 0, q(conv)),                                  // 3
            tensor("dw/w", {1, 3, 3, c}, "INT8", 3, perChannel(dwScales, 3)),                  // 4
            tensor("dw/b", {c}, "INT32", 4, biasQuant(conv, dwScales)),                        // 5
            tensor("dw", {1, h, w, c}, "INT8", 0, q(dw)),                                      // 6
            tensor("add", {1, h, w, c}, "INT8", 0, q(add)),                                    // 7
            tensor("mean/axes", {2}, "INT32", 5, json::object()),                              // 8
            tensor("mean", {1, c}, "INT8", 0, q(mean)),                                        // 9
            tensor("fc/w", {classes, c}, "INT8", 6, perChannel(fcScales, 0)),                  // 10
            tensor("fc/b", {classes}, "INT32", 7, biasQuant(mean, fcScales)),                  // 11
            tensor("logits", {1, classes}, "INT8", 0, q(out)),                                 // 12
        });
        json buffers = json::array({json::object(), {{"data", bytesOf8(convW)}}, {{"data", bytesOf32(convB)}},
                                    {{"data", bytesOf8(dwW)}}, {{"data", bytesOf32(dwB)}},
                                    {{"data", bytesOf32({1, 2})}}, {{"data", bytesOf8(fcW)}},
                                    {{"data", bytesOf32(fcB)}}});
        auto code = [](const std::string& name, int deprecated) {
            return json{{"builtin_code", name}, {"deprecated_builtin_code", deprecated}, {"version", 1}};
        };
        json codes = json::array({code("CONV_2D", 3), code("DEPTHWISE_CONV_2D", 4), code("ADD", 0), code("MEAN", 40),
                                  fcOpName == "FULLY_CONNECTED" ? code("FULLY_CONNECTED", 9) : code(fcOpName, 0)});
        json same = {{"padding", "SAME"}, {"stride_w", 1}, {"stride_h", 1}, {"fused_activation_function", "NONE"}};
        json dwOptions = same;
        dwOptions["depth_multiplier"] = 1;
        json ops = json::array({
            {{"opcode_index", 0}, {"inputs", {0, 1, 2}}, {"outputs", {3}}, {"builtin_options_type", "Conv2DOptions"}, {"builtin_options", same}},
            {{"opcode_index", 1}, {"inputs", {3, 4, 5}}, {"outputs", {6}}, {"builtin_options_type", "DepthwiseConv2DOptions"}, {"builtin_options", dwOptions}},
            {{"opcode_index", 2}, {"inputs", {3, 6}}, {"outputs", {7}}, {"builtin_options_type", "AddOptions"}, {"builtin_options", {{"fused_activation_function", "NONE"}}}},
            {{"opcode_index", 3}, {"inputs", {7, 8}}, {"outputs", {9}}, {"builtin_options_type", "ReducerOptions"}, {"builtin_options", {{"keep_dims", false}}}},
            {{"opcode_index", 4}, {"inputs", {9, 10, 11}}, {"outputs", {12}}, {"builtin_options_type", "FullyConnectedOptions"}, {"builtin_options", {{"fused_activation_function", "NONE"}}}},
        });
        return {{"version", 3}, {"description", "test_tflm_runner"}, {"operator_codes", codes}, {"buffers", buffers},
                {"subgraphs", json::array({{{"name", "main"}, {"tensors", tensors}, {"inputs", {0}}, {"outputs", {12}}, {"operators", ops}}})}};
    }
};

struct ProcessRun {
    int code = -1;
    std::string out, err;
};

ProcessRun runProcess(const QString& program, const QStringList& args, const QString& workDir = {})
{
    QProcess p;
    if (!workDir.isEmpty()) p.setWorkingDirectory(workDir);
    p.start(program, args);
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        return {-3, {}, "timed out"};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, p.readAllStandardOutput().toStdString(),
            p.readAllStandardError().toStdString()};
}

bool writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

QByteArray readBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Exactly one line on stderr, nothing on stdout, exit 2.
void checkOneLineError(const ProcessRun& r, const char* mustContain)
{
    QCOMPARE(r.code, 2);
    QVERIFY2(r.out.empty(), r.out.c_str());
    QVERIFY2(!r.err.empty() && r.err.back() == '\n' && std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err.c_str());
    QVERIFY2(r.err.find(mustContain) != std::string::npos, (r.err + " lacks: " + mustContain).c_str());
}

}  // namespace

class TestTflmRunner : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    QString schema_;

    // model JSON -> .tflite with flatc and the official schema; empty on failure (test failed).
    QString makeModel(const json& model, const QString& name)
    {
        const QString dir = tmp_.filePath(name);
        QDir().mkpath(dir);
        const QString jsonPath = dir + QStringLiteral("/") + name + QStringLiteral(".json");
        if (!writeBytes(jsonPath, QByteArray::fromStdString(model.dump()))) return {};
        const ProcessRun r = runProcess(QStringLiteral("flatc"),
                                 {QStringLiteral("-b"), QStringLiteral("--strict-json"), QStringLiteral("-o"), dir, schema_, jsonPath});
        if (r.code != 0) {
            qWarning("flatc failed: %s%s", r.out.c_str(), r.err.c_str());
            return {};
        }
        const QString out = dir + QStringLiteral("/") + name + QStringLiteral(".tflite");
        return QFileInfo::exists(out) ? out : QString();
    }

    static QByteArray randomImages(int count, std::size_t bytes, unsigned seed)
    {
        std::mt19937 rng(seed);
        QByteArray b(int(count * bytes), Qt::Uninitialized);
        for (char& x : b) x = char(rng() & 0xff);
        return b;
    }

    ProcessRun runModel(const QString& model, const QByteArray& images, int count, const QStringList& extra = {})
    {
        const QString inputs = tmp_.filePath(QStringLiteral("inputs-%1.bin").arg(qHash(images)));
        if (!writeBytes(inputs, images)) return {};
        return runProcess(tflmRunBinary(), QStringList{model, inputs, QString::number(count)} + extra);
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (!QFileInfo::exists(tflmDir()))
            QSKIP(qPrintable(QStringLiteral("TensorFlow Lite Micro is absent (%1): nothing to run").arg(tflmDir())));
        if (tflmRunBinary().isEmpty())
            QSKIP("tflm_run was not built: cmake found no ../shared/reference/runtimes/tflite-micro or no libgemmlowp-dev (its STATUS message says which)");
        QVERIFY2(QFileInfo::exists(tflmRunBinary()), qPrintable(tflmRunBinary()));
        QVERIFY2(!QStandardPaths::findExecutable(QStringLiteral("flatc")).isEmpty(),
                 "flatc is missing: Debian package flatbuffers-compiler (./setup.sh test installs it)");
        QVERIFY(tmp_.isValid());
        // The official schema, in a copy Debian's flatc reads (TfliteSchema.h): three
        // "(deprecated)" attributes dropped, all on REDUCE_WINDOW; no name, id or value changes.
        schema_ = tmp_.filePath(QStringLiteral("schema.fbs"));
        QCOMPARE(tinyscope::test::writeFlatcReadableSchema(officialSchema(), schema_), 3);
    }

    // Outputs equal the oracle on every image; shapes, quantization, ops and the arena are reported.
    void runsAnInt8ConvNetExactly()
    {
        const TestNet net(18);
        const QString model = makeModel(net.modelJson(), QStringLiteral("convnet"));
        QVERIFY(!model.isEmpty());
        const int count = 6;
        const QByteArray images = randomImages(count, net.inputBytes(), 7);
        const ProcessRun r = runModel(model, images, count);
        QVERIFY2(r.code == 0, r.err.c_str());
        const json j = json::parse(r.out);
        QCOMPARE(j["input"]["shape"], json({1, 8, 8, 3}));
        QCOMPARE(j["input"]["type"], json("int8"));
        QCOMPARE(j["input"]["scale"].get<float>(), net.in.scale);
        QCOMPARE(j["input"]["zero_point"].get<int>(), net.in.zeroPoint);
        QCOMPARE(j["output"]["shape"], json({1, 5}));
        QCOMPARE(j["output"]["scale"].get<float>(), net.out.scale);
        QCOMPARE(j["output"]["zero_point"].get<int>(), net.out.zeroPoint);
        QCOMPARE(j["ops"], json({"CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "MEAN", "FULLY_CONNECTED"}));
        QCOMPARE(j["images"].get<int>(), count);
        QCOMPARE(j["invoke_us"].size(), std::size_t(count));
        QVERIFY(j["arena_used_bytes"].get<long long>() > 0);
        QVERIFY(j["arena_used_bytes"].get<long long>() <= j["arena_bytes"].get<long long>());
        // The breakdown: the head holds the planned activations; while ADD runs, its two inputs and
        // its output ([1,8,8,4] int8 each) are live at once.
        const json& bd = j["arena_breakdown"];
        QVERIFY2(bd["head_bytes"].get<long long>() >= 3 * 8 * 8 * 4, bd.dump().c_str());
        QCOMPARE(bd["head_bytes"].get<long long>() + bd["tail_bytes"].get<long long>(),
                 bd["recording_arena_used_bytes"].get<long long>());
        QCOMPARE(bd["nodes_and_registrations"]["count"].get<int>(), 5);
        QCOMPARE(bd["eval_tensors"]["count"].get<int>(), 13);

        int unsaturated = 0;
        for (int i = 0; i < count; ++i) {
            const auto expected = net.forward(reinterpret_cast<const std::int8_t*>(images.constData()) + i * net.inputBytes());
            const auto got = j["outputs"][i].get<std::vector<int>>();
            QCOMPARE(got, std::vector<int>(expected.begin(), expected.end()));
            for (int v : got) unsaturated += (v > -128 && v < 127);
        }
        // The comparison says something only if the logits are not all clamped.
        QVERIFY2(unsaturated >= count * 3, r.out.c_str());

        // The same model and images again, and fewer images: the same arena and the same outputs.
        const ProcessRun again = runModel(model, images, count);
        QVERIFY2(again.code == 0, again.err.c_str());
        const json k = json::parse(again.out);
        QCOMPARE(k["arena_used_bytes"], j["arena_used_bytes"]);
        QCOMPARE(k["outputs"], j["outputs"]);
        // min_arena_bytes is the least arena that works: exactly that runs (same outputs and
        // arena_used_bytes), one byte less does not. On this small model arena_used_bytes alone is
        // not enough: while planning, TFLM's planner keeps working lists in the free part of the
        // arena, and here they need more than the 768 bytes of planned activations.
        const long long minArena = j["min_arena_bytes"].get<long long>();
        QVERIFY2(minArena > j["arena_used_bytes"].get<long long>(), r.out.c_str());
        const ProcessRun exact = runModel(model, images, count, {QStringLiteral("--arena"), QString::number(minArena)});
        QVERIFY2(exact.code == 0, exact.err.c_str());
        QCOMPARE(json::parse(exact.out)["outputs"], j["outputs"]);
        QCOMPARE(json::parse(exact.out)["arena_used_bytes"], j["arena_used_bytes"]);
        QCOMPARE(json::parse(exact.out)["min_arena_bytes"].get<long long>(), minArena);
        const QString less = QString::number(minArena - 1);
        checkOneLineError(runModel(model, images, count, {QStringLiteral("--arena"), less}),
                          qPrintable(QStringLiteral("AllocateTensors, with an arena of %1 bytes").arg(less)));
        const QString used = QString::number(j["arena_used_bytes"].get<long long>());
        checkOneLineError(runModel(model, images, count, {QStringLiteral("--arena"), used}),
                          qPrintable(QStringLiteral("AllocateTensors, with an arena of %1 bytes").arg(used)));
        const ProcessRun one = runModel(model, images.left(int(net.inputBytes())), 1);
        QVERIFY2(one.code == 0, one.err.c_str());
        QCOMPARE(json::parse(one.out)["arena_used_bytes"], j["arena_used_bytes"]);
        QCOMPARE(json::parse(one.out)["outputs"][0], j["outputs"][0]);
    }

    // Other weights, another resolution: still exact, and the arena grows with the activations.
    void arenaFollowsTheActivations()
    {
        const TestNet small(5, 8, 8), large(5, 16, 12);
        const QString a = makeModel(small.modelJson(), QStringLiteral("small"));
        const QString b = makeModel(large.modelJson(), QStringLiteral("large"));
        QVERIFY(!a.isEmpty() && !b.isEmpty());
        const QByteArray imagesA = randomImages(2, small.inputBytes(), 11);
        const QByteArray imagesB = randomImages(2, large.inputBytes(), 12);
        const ProcessRun ra = runModel(a, imagesA, 2), rb = runModel(b, imagesB, 2);
        QVERIFY2(ra.code == 0, ra.err.c_str());
        QVERIFY2(rb.code == 0, rb.err.c_str());
        const json ja = json::parse(ra.out), jb = json::parse(rb.out);
        for (int i = 0; i < 2; ++i) {
            const auto e = large.forward(reinterpret_cast<const std::int8_t*>(imagesB.constData()) + i * large.inputBytes());
            QCOMPARE(jb["outputs"][i].get<std::vector<int>>(), std::vector<int>(e.begin(), e.end()));
        }
        // Two activations of [1,H,W,4] int8 are live at once (the ADD's inputs, and its output); the
        // larger model needs at least that much more arena.
        const long long grown = jb["arena_used_bytes"].get<long long>() - ja["arena_used_bytes"].get<long long>();
        QVERIFY2(grown >= 2 * (16 * 12 - 8 * 8) * 4, qPrintable(QString::number(grown)));
        // TFLM's greedy planner puts exactly the peak of live activations in the head: the ADD's two
        // inputs and its output (sizes multiples of 16, so no alignment padding); the persistent
        // tail does not depend on the resolution.
        QCOMPARE(ja["arena_breakdown"]["head_bytes"].get<long long>(), 3LL * 8 * 8 * 4);
        QCOMPARE(jb["arena_breakdown"]["head_bytes"].get<long long>(), 3LL * 16 * 12 * 4);
        QCOMPARE(grown, jb["arena_breakdown"]["head_bytes"].get<long long>() - ja["arena_breakdown"]["head_bytes"].get<long long>());
        // With 2,304 bytes of activations the planner's lists fit in the head: the least arena is
        // arena_used_bytes itself.
        QCOMPARE(jb["min_arena_bytes"], jb["arena_used_bytes"]);
    }

    // The project's own export of a real network, run by TFLM's interpreter: mcunet-5fps with MIT's
    // int8 params (28 CONV_2D, 14 DEPTHWISE_CONV_2D, 7 ADD, 5 PAD, AVERAGE_POOL_2D, RESHAPE,
    // FULLY_CONNECTED) gives the same int8 logits as Int8Forward with TFLite's arithmetic.
    void runsTheMcunetExportLikeInt8Forward()
    {
        const QString params = QStringLiteral(TINYSCOPE_SHARED_DIR "/reference/tinyengine/full-int8-params.pkl");
        const QString scales = QStringLiteral(TINYSCOPE_SHARED_DIR "/reference/tinyengine/scale.json");
        if (!QFileInfo::exists(params) || !QFileInfo::exists(scales))
            QSKIP(qPrintable(QStringLiteral("MIT's mcunet-5fps params are absent (%1)").arg(params)));
        using namespace tinyscope;
        QuantizedParams p = readParamsPickle(params.toStdString());
        p.scales = readScaleJson(scales.toStdString());
        const Network net = zooModel("mcunet-5fps");
        const QString model = tmp_.filePath(QStringLiteral("mcunet-5fps.tflite"));
        const TfliteModel built = writeTflite(model.toStdString(), net, p);
        const TrainingGraph g = lowerForward(net);
        const Int8Forward ours(g, p, Int8Arithmetic::Tflite, &built.effective_scales);

        const int count = 3;
        std::mt19937 rng(5);
        const Shape3 in = net.input;
        QByteArray nhwcImages;
        std::vector<std::vector<int>> expected;
        for (int i = 0; i < count; ++i) {
            std::vector<std::int8_t> chw(static_cast<std::size_t>(in.elems())), nhwc(chw.size());
            for (int ch = 0; ch < in.c; ++ch)
                for (int y = 0; y < in.h; ++y)
                    for (int x = 0; x < in.w; ++x) {
                        const auto b = static_cast<std::int8_t>(rng() & 0xff);
                        chw[(static_cast<std::size_t>(ch) * in.h + y) * in.w + x] = b;
                        nhwc[(static_cast<std::size_t>(y) * in.w + x) * in.c + ch] = b;
                    }
            nhwcImages.append(reinterpret_cast<const char*>(nhwc.data()), static_cast<qsizetype>(nhwc.size()));
            const std::vector<std::int8_t> logits = ours.run(chw);
            expected.emplace_back(logits.begin(), logits.end());
        }
        const ProcessRun r = runModel(model, nhwcImages, count);
        QVERIFY2(r.code == 0, r.err.c_str());
        const json j = json::parse(r.out);
        QCOMPARE(j["input"]["shape"], json({1, in.h, in.w, in.c}));
        QCOMPARE(j["output"]["shape"], json({1, 10}));
        std::map<std::string, int> ops;
        for (const auto& op : j["ops"]) ++ops[op.get<std::string>()];
        QCOMPARE(ops, built.ops);
        for (int i = 0; i < count; ++i) QCOMPARE(j["outputs"][i].get<std::vector<int>>(), expected[static_cast<std::size_t>(i)]);
        QVERIFY(j["arena_used_bytes"].get<long long>() > j["arena_breakdown"]["head_bytes"].get<long long>());
    }

    void refusesBadInput()
    {
        const TestNet net(18);
        const QString model = makeModel(net.modelJson(), QStringLiteral("bad"));
        QVERIFY(!model.isEmpty());
        const QByteArray image = randomImages(1, net.inputBytes(), 3);

        // Inputs file of the wrong size: names the file and both sizes.
        checkOneLineError(runModel(model, image + "x", 1), "193 bytes, expected 1 x 192 = 192 bytes");
        checkOneLineError(runModel(model, image, 2), "expected 2 x 192 = 384");

        // A missing model file, a file that is not a flatbuffer, a truncated model, a flipped offset.
        checkOneLineError(runModel(tmp_.filePath(QStringLiteral("none.tflite")), image, 1), "none.tflite: cannot open the model file");
        const QByteArray bytes = readBytes(model);
        const QString garbage = tmp_.filePath(QStringLiteral("garbage.tflite"));
        QVERIFY(writeBytes(garbage, QByteArray(300, 'z')));
        checkOneLineError(runModel(garbage, image, 1), "not a TFLite flatbuffer");
        const QString truncated = tmp_.filePath(QStringLiteral("truncated.tflite"));
        QVERIFY(writeBytes(truncated, bytes.left(bytes.size() / 2)));
        checkOneLineError(runModel(truncated, image, 1), "truncated.tflite: corrupt TFLite flatbuffer");
        QByteArray flipped = bytes;
        flipped[0] = char(0xf0);  // the root table offset now points past the end
        flipped[1] = char(0xff);
        const QString flippedPath = tmp_.filePath(QStringLiteral("flipped.tflite"));
        QVERIFY(writeBytes(flippedPath, flipped));
        checkOneLineError(runModel(flippedPath, image, 1), "corrupt TFLite flatbuffer");

        // An op TFLM's resolver does not have: TFLM's own message, in the one line.
        const QString unknown = makeModel(net.modelJson("BATCH_MATMUL"), QStringLiteral("unknown"));
        QVERIFY(!unknown.isEmpty());
        checkOneLineError(runModel(unknown, image, 1), "BATCH_MATMUL");

        // An arena too small: the size, AllocateTensors and TFLM's reason.
        const ProcessRun tiny = runModel(model, image, 1, {QStringLiteral("--arena"), QStringLiteral("2048")});
        checkOneLineError(tiny, "AllocateTensors, with an arena of 2048 bytes");
        QVERIFY2(tiny.err.find("Failed to") != std::string::npos, tiny.err.c_str());

        // Bad arguments.
        checkOneLineError(runModel(model, image, 0), "bad N '0'");
        checkOneLineError(runModel(model, image, 1, {QStringLiteral("--arena"), QStringLiteral("lots")}), "bad --arena 'lots'");
        checkOneLineError(runProcess(tflmRunBinary(), {model}), "usage: tflm_run");
    }
};

QTEST_GUILESS_MAIN(TestTflmRunner)
#include "test_tflm_runner.moc"
