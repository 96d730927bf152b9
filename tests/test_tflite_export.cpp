// The int8 TFLite writer (deploy/TfliteExport.h): every export is decoded by flatc against the
// OFFICIAL TFLite schema from ../shared (not our subset), and the decoded file is checked against
// the quantized model it came from: version, operator codes (as numbers), op counts per layer
// kind, tensor shapes and types, per-channel weight scales s_eff·s_y/s_x, bias values and
// scales, weight layouts, input / output quantization, padding and strides (stride-2 convs on
// even sizes need a PAD op: TFLite's SAME pads at the end, PyTorch at both sides), and the
// "tinyscope" metadata. Models: mcunet-5fps with MIT's int8 params, a design-space subnet with
// squeeze-and-excite blocks quantized by prepareModel. Refusals: ops without a TFLite form,
// inconsistent tensor quantization; nothing is left behind when a model is refused.
#include "QuantizedSubnet.h"
#include "TestSupport.h"
#include "TfliteSchema.h"

#include "Error.h"
#include "data/ImageDataset.h"
#include "deploy/TfliteExport.h"
#include "nn/quantize/QuantizationJob.h"
#include "nn/supernet/Supernet.h"
#include "nn/TorchRuntime.h"
#include "space/SpacePresets.h"
#include "tflite_subset_generated.h"
#include "zoo/NetworkBuilder.h"
#include "zoo/ZooCatalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cmath>
#include <cstring>

using namespace tinyscope;

namespace {

const char* kSchema = "reference/runtimes/tflite-micro/tensorflow/compiler/mlir/lite/schema/schema.fbs";

QString flatc() { return QStandardPaths::findExecutable(QStringLiteral("flatc")); }

#define REQUIRE_FLATC()                                                                                          \
    do {                                                                                                         \
        if (flatc().isEmpty()) QSKIP("flatc is not installed (Debian flatbuffers-compiler)");                    \
        if (!QFileInfo::exists(QString::fromStdString(test::sharedPath(kSchema))))                               \
            QSKIP("../shared/reference/runtimes (the official TFLite schema) is absent");                       \
    } while (0)

// flatc --json with the official schema; fields at their default are printed too.
Json decode(const std::string& bytes)
{
    QTemporaryDir dir;
    const QString model = dir.filePath(QStringLiteral("model.tflite"));
    QFile f(model);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes.data(), static_cast<qint64>(bytes.size())) != static_cast<qint64>(bytes.size()))
        throw std::runtime_error("cannot write the model for flatc");
    f.close();
    // The official schema, in a temporary copy Debian's flatc reads (TfliteSchema.h).
    const QString schema = dir.filePath(QStringLiteral("schema.fbs"));
    if (test::writeFlatcReadableSchema(QString::fromStdString(test::sharedPath(kSchema)), schema) < 0)
        throw std::runtime_error("cannot copy the official schema");
    QProcess p;
    p.start(flatc(), {QStringLiteral("--json"), QStringLiteral("--strict-json"), QStringLiteral("--raw-binary"), QStringLiteral("--defaults-json"),
                      QStringLiteral("-o"), dir.path(), schema, QStringLiteral("--"), model});
    if (!p.waitForFinished(120000) || p.exitCode() != 0)
        throw std::runtime_error("flatc failed: " + p.readAllStandardError().toStdString() + p.readAllStandardOutput().toStdString());
    QFile j(dir.filePath(QStringLiteral("model.json")));
    if (!j.open(QIODevice::ReadOnly)) throw std::runtime_error("flatc wrote no model.json");
    return Json::parse(j.readAll().toStdString());
}

std::vector<std::uint8_t> bufferBytes(const Json& model, int buffer)
{
    const Json& b = model["buffers"][static_cast<std::size_t>(buffer)];
    return b.contains("data") ? b["data"].get<std::vector<std::uint8_t>>() : std::vector<std::uint8_t>{};
}

std::vector<std::int32_t> int32Buffer(const Json& model, int buffer)
{
    const std::vector<std::uint8_t> d = bufferBytes(model, buffer);
    std::vector<std::int32_t> v(d.size() / 4);
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(d[4 * i]) | static_cast<std::uint32_t>(d[4 * i + 1]) << 8 |
                                         static_cast<std::uint32_t>(d[4 * i + 2]) << 16 | static_cast<std::uint32_t>(d[4 * i + 3]) << 24);
    return v;
}

// flatc 2.0.8 prints floats with six decimals: a decoded scale is the written one to ±5e-7 (the
// exact float32 values are compared through the generated accessors in exactScalesAreOurs).
// `rel`: the relative error `want` carries when it is computed from decoded values.
bool close(double decoded, double want, double rel = 1e-6) { return std::fabs(decoded - want) <= 5.01e-7 + rel * std::fabs(want); }
bool closeRel(double a, double b, double rel = 2e-6) { return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)); }

std::vector<int> nhwc(const Shape3& s) { return {1, s.h, s.w, s.c}; }

// What TFLite's SAME padding gives (before, after), and whether it is the layer's padding.
bool sameMatches(int in, int k, int s, int out, int before, int after)
{
    const int o = (in + s - 1) / s;
    const int total = std::max((o - 1) * s + k - in, 0);
    return o == out && total / 2 == before && total - total / 2 == after;
}

// Checks the decoded model against the network and its params, op by op. Returns the op counts.
std::map<std::string, int> checkModel(const Json& m, const Network& net, const QuantizedParams& p, const TfliteModel& built)
{
    std::map<std::string, int> counts;
    if (m["version"] != 3) throw std::runtime_error("version " + m["version"].dump());
    if (m["subgraphs"].size() != 1) throw std::runtime_error("subgraphs");
    const Json& g = m["subgraphs"][0];
    const Json& tensors = g["tensors"];
    const Json& ops = g["operators"];
    // Operator codes: the format's numbers (checked in the official schema: ADD 0,
    // AVERAGE_POOL_2D 1, CONV_2D 3, DEPTHWISE_CONV_2D 4, FULLY_CONNECTED 9, MUL 18, RESHAPE 22, PAD 34).
    const std::map<std::string, int> numbers{{"ADD", 0}, {"AVERAGE_POOL_2D", 1}, {"CONV_2D", 3}, {"DEPTHWISE_CONV_2D", 4},
                                             {"FULLY_CONNECTED", 9}, {"MUL", 18}, {"RESHAPE", 22}, {"PAD", 34}};
    std::vector<std::string> codeName;
    for (const Json& c : m["operator_codes"]) {
        const std::string name = c["builtin_code"];
        if (!numbers.count(name)) throw std::runtime_error("unexpected op " + name);
        if (c["deprecated_builtin_code"] != numbers.at(name)) throw std::runtime_error(name + ": deprecated_builtin_code " + c["deprecated_builtin_code"].dump());
        codeName.push_back(name);
    }
    auto shapeOf = [&](int t) { return tensors[static_cast<std::size_t>(t)]["shape"].get<std::vector<int>>(); };
    auto scaleOf = [&](int t) { return tensors[static_cast<std::size_t>(t)]["quantization"]["scale"][0].get<double>(); };
    auto zeroOf = [&](int t) { return tensors[static_cast<std::size_t>(t)]["quantization"]["zero_point"][0].get<int>(); };
    auto typeOf = [&](int t) { return tensors[static_cast<std::size_t>(t)]["type"].get<std::string>(); };
    auto fail = [&](const Layer& l, const std::string& what) { throw std::runtime_error(l.name + ": " + what); };

    // The network input.
    const int in_t = g["inputs"][0];
    if (shapeOf(in_t) != nhwc(net.input) || typeOf(in_t) != "INT8") throw std::runtime_error("input tensor");
    const Layer& stem = net.layer(0);
    if (zeroOf(in_t) != static_cast<int>(p.value(stem.ir_prefix + "_zero_x"))) throw std::runtime_error("input zero point");
    if (!close(scaleOf(in_t), p.scales.at(stem.ir_prefix + "_x_scale"))) throw std::runtime_error("input scale");

    std::vector<int> produced(net.layers.size(), -1);
    auto tensorOfLayer = [&](int layer) { return layer < 0 ? in_t : produced[static_cast<std::size_t>(layer)]; };
    std::size_t k = 0;   // next operator
    auto next = [&](const Layer& l, const std::string& want) -> const Json& {
        if (k >= ops.size()) fail(l, "no operator left for " + want);
        const Json& op = ops[k++];
        const std::string got = codeName[op["opcode_index"].get<std::size_t>()];
        if (got != want) fail(l, "operator " + got + ", expected " + want);
        ++counts[got];
        return op;
    };
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        const std::string& pre = l.ir_prefix;
        switch (l.kind) {
        case LayerKind::Conv: {
            int x_t = tensorOfLayer(l.inputs[0]);
            const bool fc = i + 1 == net.layers.size() && l.in.h == 1 && l.in.w == 1 && l.kh == 1 && l.kw == 1;
            const bool pad = !fc && (l.pad_t || l.pad_b || l.pad_l || l.pad_r) &&
                             !(sameMatches(l.in.h, l.kh, l.stride_h, l.out.h, l.pad_t, l.pad_b) && sameMatches(l.in.w, l.kw, l.stride_w, l.out.w, l.pad_l, l.pad_r));
            if (fc) {
                const Json& r = next(l, "RESHAPE");
                if (r["inputs"][0] != x_t) fail(l, "reshape input");
                x_t = r["outputs"][0];
                if (shapeOf(x_t) != std::vector<int>{1, l.cin}) fail(l, "reshape shape");
            }
            if (pad) {
                const Json& po = next(l, "PAD");
                if (po["inputs"][0] != x_t) fail(l, "pad input");
                const std::vector<std::int32_t> pads = int32Buffer(m, tensors[po["inputs"][1].get<std::size_t>()]["buffer"]);
                if (pads != std::vector<std::int32_t>{0, 0, l.pad_t, l.pad_b, l.pad_l, l.pad_r, 0, 0}) fail(l, "paddings");
                const int pt = po["outputs"][0];
                if (zeroOf(pt) != zeroOf(x_t) || scaleOf(pt) != scaleOf(x_t)) fail(l, "pad quantization");
                if (shapeOf(pt) != std::vector<int>{1, l.in.h + l.pad_t + l.pad_b, l.in.w + l.pad_l + l.pad_r, l.in.c}) fail(l, "pad shape");
                x_t = pt;
            }
            const Json& op = next(l, fc ? "FULLY_CONNECTED" : l.depthwise() ? "DEPTHWISE_CONV_2D" : "CONV_2D");
            if (op["inputs"][0] != x_t) fail(l, "input tensor");
            const int w_t = op["inputs"][1], b_t = op["inputs"][2], y_t = op["outputs"][0];
            // Shapes, types.
            const std::vector<int> wshape = fc ? std::vector<int>{l.cout, l.cin}
                                               : l.depthwise() ? std::vector<int>{1, l.kh, l.kw, l.cout} : std::vector<int>{l.cout, l.kh, l.kw, l.cin};
            if (shapeOf(w_t) != wshape || typeOf(w_t) != "INT8") fail(l, "weight shape/type");
            if (shapeOf(b_t) != std::vector<int>{l.cout} || typeOf(b_t) != "INT32") fail(l, "bias shape/type");
            if (shapeOf(y_t) != (fc ? std::vector<int>{1, l.cout} : nhwc(l.out)) || typeOf(y_t) != "INT8") fail(l, "output shape/type");
            // Zero points as our params; weight scales s_eff·s_y/s_x; biases ours with scale s_x·s_w.
            if (zeroOf(x_t) != static_cast<int>(p.value(pre + "_zero_x"))) fail(l, "input zero point");
            if (zeroOf(y_t) != static_cast<int>(p.value(pre + "_zero_y"))) fail(l, "output zero point");
            const Json& wq = tensors[static_cast<std::size_t>(w_t)]["quantization"];
            const Json& bq = tensors[static_cast<std::size_t>(b_t)]["quantization"];
            if (wq["quantized_dimension"] != (l.depthwise() ? 3 : 0)) fail(l, "quantized_dimension");
            const std::vector<float> seff = p.floats(pre + "_scale");
            const double sx = scaleOf(x_t), sy = scaleOf(y_t);
            if (wq["scale"].size() != static_cast<std::size_t>(l.cout) || bq["scale"].size() != static_cast<std::size_t>(l.cout)) fail(l, "scale count");
            for (int o = 0; o < l.cout; ++o) {
                const double sw = wq["scale"][static_cast<std::size_t>(o)];
                if (!close(sw, static_cast<double>(seff[static_cast<std::size_t>(o)]) * sy / sx, 1e-6 + 5.01e-7 / sx + 5.01e-7 / sy))
                    fail(l, "weight scale " + std::to_string(o));
                if (wq["zero_point"][static_cast<std::size_t>(o)] != 0 || bq["zero_point"][static_cast<std::size_t>(o)] != 0) fail(l, "weight/bias zero point");
                if (!close(bq["scale"][static_cast<std::size_t>(o)].get<double>(), sx * sw, 1e-6 + 5.01e-7 / sx + 5.01e-7 / std::max(sw, 1e-30)))
                    fail(l, "bias scale " + std::to_string(o));
            }
            const std::vector<std::int32_t> bias = int32Buffer(m, tensors[static_cast<std::size_t>(b_t)]["buffer"]);
            for (int o = 0; o < l.cout; ++o)
                if (bias[static_cast<std::size_t>(o)] != static_cast<std::int32_t>(p.value(pre + "_bias", o))) fail(l, "bias " + std::to_string(o));
            // Weight layout: element (o, c, y, x) of our OIHW array.
            const std::vector<std::uint8_t> wb = bufferBytes(m, tensors[static_cast<std::size_t>(w_t)]["buffer"]);
            const int I = l.cin / l.groups;
            for (int o = 0; o < l.cout; ++o)
                for (int c = 0; c < I; ++c)
                    for (int y = 0; y < l.kh; ++y)
                        for (int x = 0; x < l.kw; ++x) {
                            const std::int64_t ours = ((static_cast<std::int64_t>(o) * I + c) * l.kh + y) * l.kw + x;
                            const std::size_t at = fc ? static_cast<std::size_t>(o) * I + c
                                                   : l.depthwise() ? (static_cast<std::size_t>(y) * l.kw + x) * l.cout + o
                                                                   : ((static_cast<std::size_t>(o) * l.kh + y) * l.kw + x) * I + c;
                            if (static_cast<std::int8_t>(wb[at]) != static_cast<std::int8_t>(p.value(pre + "_weight", ours))) fail(l, "weight layout");
                        }
            // Fused activation: the layer's own (RELU / RELU6) only where TFLite's clamp for it is
            // the whole int8 range, which is our clamp; else NONE.
            {
                const std::string fused = op["builtin_options"]["fused_activation_function"];
                const int z = zeroOf(y_t);
                const double q6 = z + std::round(6.0 / sy);
                const bool reluIsInt8Range = z <= -128, relu6IsInt8Range = z <= -128 && q6 >= 127;
                std::string want = "NONE";
                if (l.act == Activation::ReLU && reluIsInt8Range) want = "RELU";
                if (l.act == Activation::ReLU6 && relu6IsInt8Range) want = "RELU6";
                if (fused != want) fail(l, "fused activation " + fused + ", expected " + want);
            }
            // Padding and strides.
            if (!fc) {
                const Json& o = op["builtin_options"];
                const std::string wantPad = pad || (!l.pad_t && !l.pad_b && !l.pad_l && !l.pad_r) ? "VALID" : "SAME";
                if (o["padding"] != wantPad) fail(l, "padding " + o["padding"].dump() + ", expected " + wantPad);
                if (o["stride_h"] != l.stride_h || o["stride_w"] != l.stride_w) fail(l, "strides");
            }
            produced[i] = y_t;
            break;
        }
        case LayerKind::Add:
        case LayerKind::ChannelScale: {
            const bool add = l.kind == LayerKind::Add;
            const Json& op = next(l, add ? "ADD" : "MUL");
            const int a = op["inputs"][0], b = op["inputs"][1], y = op["outputs"][0];
            if (a != tensorOfLayer(l.inputs[0]) || b != tensorOfLayer(l.inputs[1])) fail(l, "inputs");
            if (!add && (shapeOf(a) != nhwc(net.shapeOf(l.inputs[0])) || shapeOf(a)[1] != 1 || shapeOf(b) != nhwc(l.out))) fail(l, "gate broadcast shapes");
            if (zeroOf(a) != p.value(pre + "_zero_x1") || zeroOf(b) != p.value(pre + "_zero_x2") || zeroOf(y) != p.value(pre + "_zero_y")) fail(l, "zero points");
            if (!close(scaleOf(a), p.value(pre + "_scale_x1")) || !close(scaleOf(b), p.value(pre + "_scale_x2")) || !close(scaleOf(y), p.value(pre + "_scale_y")))
                fail(l, "scales");
            if (shapeOf(y) != nhwc(l.out)) fail(l, "output shape");
            produced[i] = y;
            break;
        }
        case LayerKind::GlobalAvgPool: {
            const Json& op = next(l, "AVERAGE_POOL_2D");
            const int x = op["inputs"][0], y = op["outputs"][0];
            if (x != tensorOfLayer(l.inputs[0])) fail(l, "input");
            const Json& o = op["builtin_options"];
            if (o["filter_height"] != l.in.h || o["filter_width"] != l.in.w || o["padding"] != "VALID") fail(l, "pool window");
            if (shapeOf(y) != nhwc(l.out) || zeroOf(y) != zeroOf(x) || scaleOf(y) != scaleOf(x)) fail(l, "pool output");
            produced[i] = y;
            break;
        }
        default:
            fail(l, "unexpected layer kind");
        }
    }
    if (k != ops.size()) throw std::runtime_error("extra operators");
    if (g["outputs"][0] != produced.back()) throw std::runtime_error("subgraph output");
    // The summary says what the file says.
    if (built.ops != counts) throw std::runtime_error("summary op counts");
    const int out_t = g["outputs"][0];
    if (built.output.shape != shapeOf(out_t) || built.output.zero_point != zeroOf(out_t) || !close(built.output.scale, scaleOf(out_t)))
        throw std::runtime_error("summary output");
    if (built.input.shape != shapeOf(in_t) || built.input.zero_point != zeroOf(in_t) || !close(built.input.scale, scaleOf(in_t)))
        throw std::runtime_error("summary input");
    // Metadata: one "tinyscope" buffer with the JSON.
    if (m["metadata"].size() != 1 || m["metadata"][0]["name"] != "tinyscope") throw std::runtime_error("metadata");
    const std::vector<std::uint8_t> md = bufferBytes(m, m["metadata"][0]["buffer"]);
    if (Json::parse(std::string(md.begin(), md.end())) != built.metadata) throw std::runtime_error("metadata JSON");
    return counts;
}

std::map<std::string, int> expectedCounts(const Network& net)
{
    std::map<std::string, int> c;
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Layer& l = net.layers[i];
        switch (l.kind) {
        case LayerKind::Conv:
            if (i + 1 == net.layers.size() && l.in.h == 1 && l.kh == 1) ++c["FULLY_CONNECTED"], ++c["RESHAPE"];
            else ++c[l.depthwise() ? "DEPTHWISE_CONV_2D" : "CONV_2D"];
            break;
        case LayerKind::Add: ++c["ADD"]; break;
        case LayerKind::ChannelScale: ++c["MUL"]; break;
        case LayerKind::GlobalAvgPool: ++c["AVERAGE_POOL_2D"]; break;
        default: break;
        }
    }
    return c;
}

QuantizedParams mitParams()
{
    QuantizedParams p = readParamsPickle(test::tinyengineRef("full-int8-params.pkl"));
    p.scales = readScaleJson(test::tinyengineRef("scale.json"));
    return p;
}

}  // namespace

class TestTfliteExport : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        configureAllocator();
        setTorchThreads(2);
    }

    void mcunet5fpsWithMitParamsDecodesWithTheOfficialSchema()
    {
        REQUIRE_SHARED();
        REQUIRE_FLATC();
        const Network net = zooModel("mcunet-5fps");
        const QuantizedParams p = mitParams();
        TfliteMetadata meta;
        meta.labels = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
        meta.config = Json{{"zoo", "mcunet-5fps"}};
        const TfliteModel built = buildTflite(net, p, meta);
        const Json m = decode(built.bytes);
        QCOMPARE(m["description"].get<std::string>(), std::string("Tinyscope int8 export of mcunet-5fps"));
        std::map<std::string, int> counts;
        try {
            counts = checkModel(m, net, p, built);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        std::map<std::string, int> want = expectedCounts(net);
        // PAD ops: only where SAME pads differently from the layer (stride 2 on an even size).
        int pads = 0;
        for (const Layer& l : net.layers)
            if (l.isConv() && l.stride_h == 2 && l.in.h % 2 == 0 && l.kh > 1) ++pads;
        QVERIFY(pads > 0);
        want["PAD"] = pads;
        QCOMPARE(counts, want);
        QCOMPARE(counts["ADD"], 7);
        QCOMPARE(counts["FULLY_CONNECTED"], 1);
        // The output is the classifier's int8 logits with its y scale and zero point.
        QCOMPARE(built.output.shape, (std::vector<int>{1, 10}));
        QCOMPARE(built.input.shape, (std::vector<int>{1, 128, 128, 3}));
        QVERIFY(std::fabs(built.input.scale - 1.0 / 127.5) < 1e-7);
        QCOMPARE(built.metadata["labels"].size(), std::size_t(10));
        QCOMPARE(built.metadata["input"]["layout"].get<std::string>(), std::string("NHWC"));
        QCOMPARE(built.metadata["macs"].get<std::int64_t>(), net.macs());
        QCOMPARE(built.metadata["peak_sram_bytes"].get<std::int64_t>(), net.peakActivationBytes());
        qInfo("mcunet-5fps: %zu bytes, %s", built.bytes.size(), built.toJson()["ops"].dump().c_str());
    }

    void exactScalesAreOurs()
    {
        // The float32 scales exactly, through the classes flatc generated from our subset (whose
        // layout the decodes above check against the official schema).
        REQUIRE_SHARED();
        const Network net = zooModel("mcunet-5fps");
        const QuantizedParams p = mitParams();
        const TfliteModel built = buildTflite(net, p);
        const tflite::Model* m = tflite::GetModel(built.bytes.data());
        QVERIFY(m && m->subgraphs() && m->subgraphs()->size() == 1);
        const auto* tensors = m->subgraphs()->Get(0)->tensors();
        std::map<std::string, const tflite::Tensor*> byName;
        for (const tflite::Tensor* t : *tensors) byName[t->name()->str()] = t;
        auto scale = [](const tflite::Tensor* t, unsigned i = 0) { return t->quantization()->scale()->Get(i); };
        const tflite::Tensor* in = tensors->Get(static_cast<unsigned>(m->subgraphs()->Get(0)->inputs()->Get(0)));
        QCOMPARE(scale(in), static_cast<float>(p.scales.at(net.layer(0).ir_prefix + "_x_scale")));
        int checked = 0;
        for (std::size_t i = 0; i < net.layers.size(); ++i) {
            const Layer& l = net.layers[i];
            const tflite::Tensor* y = byName.at(l.name);
            if (l.kind == LayerKind::Add) {
                QCOMPARE(scale(y), static_cast<float>(p.value(l.ir_prefix + "_scale_y")));
                continue;
            }
            if (!l.isConv()) continue;
            const tflite::Tensor* w = byName.at(l.name + "/weight");
            const tflite::Tensor* b = byName.at(l.name + "/bias");
            // The conv's input tensor is the producer's output (or the input).
            const tflite::Tensor* x = l.inputs[0] < 0 ? in : byName.at(net.layer(l.inputs[0]).name);
            bool addConsumes = false;
            for (const Layer& c : net.layers)
                if (c.kind == LayerKind::Add && (c.inputs[0] == static_cast<int>(i) || c.inputs[1] == static_cast<int>(i))) addConsumes = true;
            if (!addConsumes) QCOMPARE(scale(y), static_cast<float>(p.scales.at(l.ir_prefix + "_y_scale")));
            const std::vector<float> seff = p.floats(l.ir_prefix + "_scale");
            for (int o = 0; o < l.cout; ++o) {
                const float sw = scale(w, static_cast<unsigned>(o));
                QVERIFY2(closeRel(sw, static_cast<double>(seff[static_cast<std::size_t>(o)]) * scale(y) / scale(x), 1.2e-7),
                         qPrintable(QString::fromStdString(l.name)));
                QVERIFY(closeRel(scale(b, static_cast<unsigned>(o)), static_cast<double>(scale(x)) * sw, 1.2e-7));
            }
            ++checked;
        }
        QCOMPARE(checked, net.numConvs());
    }

    void supernetSubnetWithSqueezeExciteDecodes()
    {
        REQUIRE_FLATC();
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        QTemporaryDir dir;
        const PreparedModel pm = test::quantizedSubnet(dir.path(), 7, "min", 16, 32);
        int se = 0;
        for (const Layer& l : pm.network.layers) se += l.kind == LayerKind::ChannelScale;
        QVERIFY2(se > 0, "the min subnet of mcunet-fmnist has squeeze-and-excite blocks");
        const std::string path = (dir.path() + QStringLiteral("/subnet.tflite")).toStdString();
        const TfliteModel built = writeTflite(path, pm.network, pm.params);
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray onDisk = f.readAll();
        QCOMPARE(onDisk.size(), static_cast<qsizetype>(built.bytes.size()));
        QVERIFY(std::memcmp(onDisk.data(), built.bytes.data(), built.bytes.size()) == 0);
        const Json m = decode(built.bytes);
        std::map<std::string, int> counts;
        try {
            counts = checkModel(m, pm.network, pm.params, built);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        std::map<std::string, int> want = expectedCounts(pm.network);
        if (counts.count("PAD")) want["PAD"] = counts["PAD"];   // checked layer by layer above
        QCOMPARE(counts, want);
        QCOMPARE(counts["MUL"], se);
        QCOMPARE(built.toJson()["ops"]["MUL"].get<int>(), se);
        qInfo("min subnet: %zu bytes, %s", built.bytes.size(), built.toJson()["ops"].dump().c_str());
    }

    void opWithoutTfliteFormIsRefusedNamingLayerAndOp()
    {
        NetworkBuilder b("pooled", Shape3{3, 16, 16});
        const int c = b.conv(-1, ConvSpec::of("stem", "stem", "v0", -1, 8, 3, 1, 1, Activation::ReLU).withBias());
        const int mp = b.maxPool(c, 2, 2, 0, "pool");
        const int g = b.globalAvgPool(mp, "gap");
        b.conv(g, ConvSpec::of("fc", "classifier", "v1", -1, 4).asLinear());
        const Network net = b.finish(4, LossKind::CrossEntropy, "test", "test");
        QTemporaryDir dir;
        const std::string path = (dir.path() + QStringLiteral("/pooled.tflite")).toStdString();
        try {
            writeTflite(path, net, QuantizedParams{});
            QFAIL("a max-pool network was written");
        } catch (const InputError& e) {
            const std::string msg = e.what();
            QVERIFY2(msg.find("layer 1 'pool'") != std::string::npos && msg.find("max") != std::string::npos, e.what());
        }
        QVERIFY(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::System).isEmpty());
    }

    void inconsistentTensorQuantizationIsRefusedAndNothingIsWritten()
    {
        REQUIRE_SHARED();
        const Network net = zooModel("mcunet-5fps");
        QuantizedParams p = mitParams();
        // The first residual add reads its skip input with a zero point its producer does not give.
        const Layer* add = nullptr;
        for (const Layer& l : net.layers)
            if (l.kind == LayerKind::Add) { add = &l; break; }
        QVERIFY(add);
        const int z = static_cast<int>(p.value(add->ir_prefix + "_zero_x1"));
        p.set(add->ir_prefix + "_zero_x1", int8Array({static_cast<std::int8_t>(z == 5 ? 6 : 5)}, {1}));
        QTemporaryDir dir;
        const std::string path = (dir.path() + QStringLiteral("/m.tflite")).toStdString();
        try {
            writeTflite(path, net, p);
            QFAIL("inconsistent zero points were written");
        } catch (const InputError& e) {
            const std::string msg = e.what();
            QVERIFY2(msg.find("'" + add->name + "'") != std::string::npos && msg.find("ADD input 1") != std::string::npos &&
                         msg.find("one quantization") != std::string::npos,
                     e.what());
        }
        QVERIFY(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::System).isEmpty());
        // A params file that lacks a conv's weights is refused naming the array.
        QuantizedParams q = mitParams();
        q.arrays.erase(net.layer(0).ir_prefix + "_weight");
        try {
            buildTflite(net, q);
            QFAIL("missing weights were accepted");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find(net.layer(0).ir_prefix + "_weight") != std::string::npos, e.what());
        }
    }

    void groupedConvIsRefused()
    {
        NetworkBuilder b("grouped", Shape3{4, 8, 8});
        const int c = b.conv(-1, ConvSpec::of("g", "conv", "v0", -1, 8, 3, 1, 2).withBias());
        const int g = b.globalAvgPool(c, "gap");
        b.conv(g, ConvSpec::of("fc", "classifier", "v1", -1, 4).asLinear());
        const Network net = b.finish(4, LossKind::CrossEntropy, "test", "test");
        const std::string why = tfliteObstacle(net);
        QVERIFY2(why.find("layer 0 'g'") != std::string::npos && why.find("groups 2") != std::string::npos, why.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTfliteExport)
#include "test_tflite_export.moc"
