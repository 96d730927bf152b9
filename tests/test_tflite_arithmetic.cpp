// Int8Forward's Tflite arithmetic (tinyengine/TfliteArithmetic.h) against TensorFlow Lite Micro's
// own reference code, compiled into this test from ../shared/reference/runtimes/tflite-micro
// (kernels/internal/common.cc, quantization_util.cc and the header-only reference int8 kernels;
// nothing is copied into the repository): QuantizeMultiplier and MultiplyByQuantizedMultiplier on
// a sweep of multipliers and inputs, ADD / MUL on every int8 pair, and a whole exported model —
// a small network with a stride-2 conv on an even size (PAD), depthwise, residual ADD, squeeze-
// excite MUL, pooling and the classifier, with random int8 parameters; mcunet-5fps with MIT's
// params; the largest mcunet-fmnist subnet quantized by prepareModel — run op by op by the reference kernels on the TFLite file, equal to Int8Forward's
// Tflite arithmetic on every element of every layer.
#include "QuantizedSubnet.h"
#include "TestSupport.h"

#include "Error.h"
#include "deploy/TfliteExport.h"
#include "graph/ForwardLowering.h"
#include "tflite_subset_generated.h"
#include "tinyengine/Int8Forward.h"
#include "tinyengine/TfliteArithmetic.h"
#include "zoo/NetworkBuilder.h"
#include "zoo/ZooCatalog.h"
#include "data/ImageDataset.h"
#include "nn/quantize/QuantizationJob.h"
#include "nn/supernet/Supernet.h"
#include "nn/TorchRuntime.h"
#include "space/SpacePresets.h"

#include <QTemporaryDir>

#ifdef TINYSCOPE_TFLM_REFERENCE
#include "tensorflow/lite/kernels/internal/common.h"
#include "tensorflow/lite/kernels/internal/quantization_util.h"
#include "tensorflow/lite/kernels/internal/reference/integer_ops/add.h"
#include "tensorflow/lite/kernels/internal/reference/integer_ops/conv.h"
#include "tensorflow/lite/kernels/internal/reference/integer_ops/depthwise_conv.h"
#include "tensorflow/lite/kernels/internal/reference/integer_ops/fully_connected.h"
#include "tensorflow/lite/kernels/internal/reference/integer_ops/mul.h"
#include "tensorflow/lite/kernels/internal/reference/integer_ops/pooling.h"
#endif

#include <cmath>
#include <cstring>

using namespace tinyscope;

#ifdef TINYSCOPE_TFLM_REFERENCE
namespace {

struct Lcg {
    std::uint32_t x;
    std::uint32_t next() { return x = 1664525u * x + 1013904223u; }
    int range(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<std::uint32_t>(hi - lo + 1)); }
    double uniform() { return (next() >> 8) / 16777216.0; }
};

// The TFLite file run by TFLM's reference int8 kernels, with the op preparation TFLM's micro
// kernels do (kernel_util.cc PopulateConvolutionQuantizationParams, add_common.cc, mul_common.cc)
// written here from the file's tensors. Returns every tensor's int8 values (NHWC).
std::vector<std::vector<std::int8_t>> runReference(const std::string& bytes, const std::vector<std::int8_t>& input)
{
    const tflite::Model* m = tflite::GetModel(bytes.data());
    const tflite::SubGraph* g = m->subgraphs()->Get(0);
    const auto* T = g->tensors();
    std::vector<std::vector<std::int8_t>> v(T->size());
    auto shape = [&](int t) {
        std::vector<int> s(T->Get(static_cast<unsigned>(t))->shape()->begin(), T->Get(static_cast<unsigned>(t))->shape()->end());
        return s;
    };
    auto rs = [&](int t) {
        const std::vector<int> s = shape(t);
        return tflite::RuntimeShape(static_cast<int>(s.size()), s.data());
    };
    auto scale = [&](int t, unsigned i = 0) { return T->Get(static_cast<unsigned>(t))->quantization()->scale()->Get(i); };
    auto zero = [&](int t) { return static_cast<std::int32_t>(T->Get(static_cast<unsigned>(t))->quantization()->zero_point()->Get(0)); };
    auto data = [&](int t) { return m->buffers()->Get(T->Get(static_cast<unsigned>(t))->buffer())->data()->data(); };
    auto elems = [&](int t) {
        std::size_t n = 1;
        for (int d : shape(t)) n *= static_cast<std::size_t>(d);
        return n;
    };
    v[static_cast<std::size_t>(g->inputs()->Get(0))] = input;
    for (const tflite::Operator* op : *g->operators()) {
        const auto code = m->operator_codes()->Get(op->opcode_index())->builtin_code();
        const int x = op->inputs()->Get(0), y = op->outputs()->Get(0);
        std::vector<std::int8_t>& out = v[static_cast<std::size_t>(y)];
        out.assign(elems(y), 0);
        const std::int8_t* in = v[static_cast<std::size_t>(x)].data();
        // TFLite's SAME padding before (ComputePaddingHeightWidth): half of the total, rounded down.
        auto samePad = [&](tflite::Padding pad, int dim, int k, int stride) {
            if (pad != tflite::Padding_SAME) return 0;
            return std::max((shape(y)[static_cast<std::size_t>(dim)] - 1) * stride + k - shape(x)[static_cast<std::size_t>(dim)], 0) / 2;
        };
        auto perChannel = [&](int w, std::vector<std::int32_t>& mult, std::vector<int>& shift) {
            const unsigned n = T->Get(static_cast<unsigned>(w))->quantization()->scale()->size();
            for (unsigned o = 0; o < n; ++o) {
                const double eff = static_cast<double>(scale(x)) * static_cast<double>(scale(w, o)) / static_cast<double>(scale(y));
                std::int32_t q;
                int s;
                tflite::QuantizeMultiplier(eff, &q, &s);
                mult.push_back(q);
                shift.push_back(s);
            }
        };
        switch (code) {
        case tflite::BuiltinOperator_PAD: {
            const auto* pads = reinterpret_cast<const std::int32_t*>(data(op->inputs()->Get(1)));
            const std::vector<int> is = shape(x), os = shape(y);
            std::fill(out.begin(), out.end(), static_cast<std::int8_t>(zero(y)));
            for (int h = 0; h < is[1]; ++h)
                for (int w = 0; w < is[2]; ++w)
                    std::memcpy(&out[((static_cast<std::size_t>(h + pads[2]) * os[2]) + w + pads[4]) * os[3]], &in[(static_cast<std::size_t>(h) * is[2] + w) * is[3]],
                                static_cast<std::size_t>(is[3]));
            break;
        }
        case tflite::BuiltinOperator_CONV_2D:
        case tflite::BuiltinOperator_DEPTHWISE_CONV_2D: {
            const int w = op->inputs()->Get(1), b = op->inputs()->Get(2);
            std::vector<std::int32_t> mult, shift;
            std::vector<int> sh;
            perChannel(w, mult, sh);
            shift.assign(sh.begin(), sh.end());
            const auto* wd = reinterpret_cast<const std::int8_t*>(data(w));
            const auto* bd = reinterpret_cast<const std::int32_t*>(data(b));
            if (code == tflite::BuiltinOperator_CONV_2D) {
                const auto* o = op->builtin_options_as_Conv2DOptions();
                tflite::ConvParams p{};
                p.padding_values.height = static_cast<std::int16_t>(samePad(o->padding(), 1, shape(w)[1], o->stride_h()));
                p.padding_values.width = static_cast<std::int16_t>(samePad(o->padding(), 2, shape(w)[2], o->stride_w()));
                p.stride_height = o->stride_h(), p.stride_width = o->stride_w();
                p.dilation_height_factor = p.dilation_width_factor = 1;
                p.input_offset = -zero(x), p.output_offset = zero(y), p.weights_offset = 0;
                p.quantized_activation_min = -128, p.quantized_activation_max = 127;
                tflite::reference_integer_ops::ConvPerChannel(p, mult.data(), shift.data(), rs(x), in, rs(w), wd, rs(b), bd, rs(y), out.data());
            } else {
                const auto* o = op->builtin_options_as_DepthwiseConv2DOptions();
                tflite::DepthwiseParams p{};
                p.padding_values.height = static_cast<std::int16_t>(samePad(o->padding(), 1, shape(w)[1], o->stride_h()));
                p.padding_values.width = static_cast<std::int16_t>(samePad(o->padding(), 2, shape(w)[2], o->stride_w()));
                p.stride_height = o->stride_h(), p.stride_width = o->stride_w();
                p.dilation_height_factor = p.dilation_width_factor = 1;
                p.depth_multiplier = 1;
                p.input_offset = -zero(x), p.output_offset = zero(y), p.weights_offset = 0;
                p.quantized_activation_min = -128, p.quantized_activation_max = 127;
                tflite::reference_integer_ops::DepthwiseConvPerChannel(p, mult.data(), shift.data(), rs(x), in, rs(w), wd, rs(b), bd, rs(y), out.data());
            }
            break;
        }
        case tflite::BuiltinOperator_FULLY_CONNECTED: {
            const int w = op->inputs()->Get(1), b = op->inputs()->Get(2);
            std::vector<std::int32_t> mult;
            std::vector<int> shift;
            perChannel(w, mult, shift);
            tflite::FullyConnectedParams p{};
            p.input_offset = -zero(x), p.output_offset = zero(y), p.weights_offset = 0;
            p.quantized_activation_min = -128, p.quantized_activation_max = 127;
            tflite::reference_integer_ops::FullyConnectedPerChannel(p, mult.data(), shift.data(), rs(x), in, rs(w), reinterpret_cast<const std::int8_t*>(data(w)),
                                                                    rs(b), reinterpret_cast<const std::int32_t*>(data(b)), rs(y), out.data());
            break;
        }
        case tflite::BuiltinOperator_AVERAGE_POOL_2D: {
            const auto* o = op->builtin_options_as_Pool2DOptions();
            tflite::PoolParams p{};
            p.stride_height = o->stride_h(), p.stride_width = o->stride_w();
            p.filter_height = o->filter_height(), p.filter_width = o->filter_width();
            p.quantized_activation_min = -128, p.quantized_activation_max = 127;
            tflite::reference_integer_ops::AveragePool(p, rs(x), in, rs(y), out.data());
            break;
        }
        case tflite::BuiltinOperator_RESHAPE:
            std::memcpy(out.data(), in, out.size());
            break;
        case tflite::BuiltinOperator_ADD:
        case tflite::BuiltinOperator_MUL: {
            const int x2 = op->inputs()->Get(1);
            tflite::ArithmeticParams p{};
            p.input1_offset = -zero(x), p.input2_offset = -zero(x2), p.output_offset = zero(y);
            p.quantized_activation_min = -128, p.quantized_activation_max = 127;
            if (code == tflite::BuiltinOperator_ADD) {   // add_common.cc CalculateOpDataAdd
                p.left_shift = 20;
                const double twice = 2 * static_cast<double>(std::max(scale(x), scale(x2)));
                tflite::QuantizeMultiplierSmallerThanOneExp(static_cast<double>(scale(x)) / twice, &p.input1_multiplier, &p.input1_shift);
                tflite::QuantizeMultiplierSmallerThanOneExp(static_cast<double>(scale(x2)) / twice, &p.input2_multiplier, &p.input2_shift);
                tflite::QuantizeMultiplierSmallerThanOneExp(twice / ((1 << p.left_shift) * static_cast<double>(scale(y))), &p.output_multiplier,
                                                            &p.output_shift);
                tflite::reference_integer_ops::AddElementwise(static_cast<int>(out.size()), p, in, v[static_cast<std::size_t>(x2)].data(), out.data());
            } else {   // mul_common.cc
                tflite::QuantizeMultiplier(static_cast<double>(scale(x)) * static_cast<double>(scale(x2)) / static_cast<double>(scale(y)), &p.output_multiplier,
                                           &p.output_shift);
                tflite::reference_integer_ops::BroadcastMul4DSlow(p, rs(x), in, rs(x2), v[static_cast<std::size_t>(x2)].data(), rs(y), out.data());
            }
            break;
        }
        default:
            throw std::runtime_error("unexpected operator");
        }
    }
    return v;
}

// Int8Forward (Tflite arithmetic, the file's effective scales) vs the reference run, on every
// layer's output (by tensor name) for one input. Returns the number of compared elements.
std::size_t compareWithReference(const Network& net, const QuantizedParams& p, std::uint32_t seed)
{
    const TfliteModel built = buildTflite(net, p);
    const TrainingGraph g = lowerForward(net);
    const Int8Forward f(g, p, Int8Arithmetic::Tflite, &built.effective_scales);
    Lcg r{seed};
    const Shape3 in = net.input;
    std::vector<std::int8_t> chw(static_cast<std::size_t>(in.elems())), nhwc(chw.size());
    for (int c = 0; c < in.c; ++c)
        for (int h = 0; h < in.h; ++h)
            for (int w = 0; w < in.w; ++w) {
                const auto b = static_cast<std::int8_t>(r.next() >> 24);
                chw[(static_cast<std::size_t>(c) * in.h + h) * in.w + w] = b;
                nhwc[(static_cast<std::size_t>(h) * in.w + w) * in.c + c] = b;
            }
    const std::vector<std::vector<std::int32_t>> ours = f.runAll(chw);
    const std::vector<std::vector<std::int8_t>> ref = runReference(built.bytes, nhwc);
    const tflite::SubGraph* sg = tflite::GetModel(built.bytes.data())->subgraphs()->Get(0);
    std::map<std::string, int> byName;
    for (unsigned t = 0; t < sg->tensors()->size(); ++t) byName[sg->tensors()->Get(t)->name()->str()] = static_cast<int>(t);
    std::size_t compared = 0;
    for (int li = 0; li < static_cast<int>(net.layers.size()); ++li) {
        const Layer& l = net.layer(li);
        int last = -1;   // the layer's last forward op (its clamp, or the pool)
        for (int i = 0; i < g.forward_ops; ++i)
            if (g.op(i).layer == li && g.op(i).phase == Phase::Forward) last = i;
        const std::vector<std::int32_t>& a = ours[static_cast<std::size_t>(g.op(last).output)];
        const std::vector<std::int8_t>& b = ref[static_cast<std::size_t>(byName.at(l.name))];
        const Shape3 s = l.out;
        if (a.size() != b.size()) throw std::runtime_error(l.name + ": sizes differ");
        for (int c = 0; c < s.c; ++c)
            for (int h = 0; h < s.h; ++h)
                for (int w = 0; w < s.w; ++w) {
                    const std::int32_t x = a[(static_cast<std::size_t>(c) * s.h + h) * s.w + w];
                    const std::int32_t y = b[(static_cast<std::size_t>(h) * s.w + w) * s.c + c];
                    if (x != y)
                        throw std::runtime_error(l.name + " (c " + std::to_string(c) + ", h " + std::to_string(h) + ", w " + std::to_string(w) + "): Int8Forward " +
                                                 std::to_string(x) + ", TFLM reference " + std::to_string(y));
                    ++compared;
                }
    }
    return compared;
}

// A network with every op the writer emits: a stride-2 conv on an even size (PAD), depthwise,
// a residual add, a squeeze-excite gate, pooling and a linear classifier; random int8 params.
std::pair<Network, QuantizedParams> smallModel(std::uint32_t seed)
{
    NetworkBuilder nb("tiny-tflite", Shape3{3, 12, 12});
    const int c1 = nb.conv(-1, ConvSpec::of("stem", "stem", "v0", -1, 8, 3, 2, 1, Activation::ReLU6).withBias());
    const int d = nb.conv(c1, ConvSpec::of("dw", "dw", "v1", 0, 8, 3, 1, 8, Activation::ReLU).withBias());
    const int pw = nb.conv(d, ConvSpec::of("pw", "pw2", "v2", 0, 8, 1).withBias());
    const int a = nb.add(c1, pw, "add", "v3_qadd", 0);
    const int g = nb.globalAvgPool(a, "se.pool");
    const int r1 = nb.conv(g, ConvSpec::of("se.reduce", "se_reduce", "v4", 0, 4, 1, 1, 1, Activation::ReLU).withBias());
    const int r2 = nb.conv(r1, ConvSpec::of("se.expand", "se_expand", "v5", 0, 8, 1, 1, 1, Activation::HSigmoid).withBias());
    const int m = nb.channelScale(r2, a, "se.scale", "v6_qmul", 0);
    const int g2 = nb.globalAvgPool(m, "pool");
    nb.conv(g2, ConvSpec::of("classifier", "classifier", "v7", -1, 5).asLinear());
    const Network net = nb.finish(5, LossKind::CrossEntropy, "test", "test");

    Lcg r{seed};
    QuantizedParams p;
    p.source = "random params";
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
        sc[i + 1] = 0.01 + 0.09 * r.uniform();
        zp[i + 1] = l.act == Activation::None ? r.range(-40, 40) : -128;
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
            // The float32 the params hold is the tensor's scale.
            sc[i + 1] = static_cast<float>(S(li));
        }
    }
    return {net, p};
}

}  // namespace
#endif

class TestTfliteArithmetic : public QObject {
    Q_OBJECT

private Q_SLOTS:
#ifndef TINYSCOPE_TFLM_REFERENCE
    void tflmReferenceIsAbsent() { QSKIP("../shared/reference/runtimes/tflite-micro was absent when the build was configured"); }
#else
    void multipliersAndRoundingEqualTflm()
    {
        Lcg r{12345};
        int checked = 0;
        std::vector<double> reals{0.5, 1.0, 0.999999999999, 0.49999999999999, 1.0 / 3, 2.0, 7.5, 1e-9, 3e-10, 4.656612873077393e-10};
        for (int i = 0; i < 400; ++i) reals.push_back(std::pow(10.0, -9.0 + 10.0 * r.uniform()));
        for (double real : reals) {
            std::int32_t q;
            int s;
            tflite::QuantizeMultiplier(real, &q, &s);
            const QuantizedMultiplier m = quantizeMultiplier(real);
            QCOMPARE(m.multiplier, q);
            QCOMPARE(m.shift, s);
            const std::int32_t limit = s > 0 ? (std::int32_t(1) << (30 - s)) : INT32_MAX;   // no int32 overflow in x·2^shift
            for (int k = 0; k < 200; ++k) {
                std::int32_t x = static_cast<std::int32_t>(r.next());
                if (k < 4) x = std::vector<std::int32_t>{0, 1, -1, INT32_MIN + 1}[static_cast<std::size_t>(k)];
                if (s > 0) x %= limit;
                QCOMPARE(multiplyByQuantizedMultiplier(x, m), tflite::MultiplyByQuantizedMultiplier(x, q, s));
                ++checked;
            }
        }
        QVERIFY(checked > 80000);
    }

    void addAndMulEqualTflmOnEveryPair()
    {
        const float scales[][3] = {{0.02f, 0.05f, 0.04f}, {0.1f, 0.013f, 0.2f}, {0.0078431f, 0.0078431f, 0.0039215f}, {0.05f, 1.0f / 255, 0.05f}};
        for (const auto& s : scales) {
            const int z1 = -7, z2 = 13, zy = -128;
            tflite::ArithmeticParams p{};
            p.input1_offset = -z1, p.input2_offset = -z2, p.output_offset = zy, p.left_shift = 20;
            p.quantized_activation_min = -128, p.quantized_activation_max = 127;
            const double twice = 2 * static_cast<double>(std::max(s[0], s[1]));
            tflite::QuantizeMultiplierSmallerThanOneExp(static_cast<double>(s[0]) / twice, &p.input1_multiplier, &p.input1_shift);
            tflite::QuantizeMultiplierSmallerThanOneExp(static_cast<double>(s[1]) / twice, &p.input2_multiplier, &p.input2_shift);
            tflite::QuantizeMultiplierSmallerThanOneExp(twice / ((1 << 20) * static_cast<double>(s[2])), &p.output_multiplier, &p.output_shift);
            tflite::ArithmeticParams pm = p;
            tflite::QuantizeMultiplier(static_cast<double>(s[0]) * s[1] / s[2], &pm.output_multiplier, &pm.output_shift);
            std::vector<std::int8_t> a(65536), b(65536), ya(65536), ym(65536);
            for (int i = 0; i < 65536; ++i) a[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(i >> 8), b[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(i & 255);
            tflite::reference_integer_ops::AddElementwise(65536, p, a.data(), b.data(), ya.data());
            tflite::reference_integer_ops::MulElementwise(65536, pm, a.data(), b.data(), ym.data());
            const TfliteAdd add(s[0], s[1], s[2]);
            const QuantizedMultiplier mul = tfliteMulMultiplier(s[0], s[1], s[2]);
            for (std::size_t i = 0; i < a.size(); ++i) {
                const std::int32_t x1 = a[i] - z1, x2 = b[i] - z2;
                QCOMPARE(std::clamp(add.apply(x1, x2) + zy, -128, 127), static_cast<int>(ya[i]));
                QCOMPARE(std::clamp(multiplyByQuantizedMultiplier(x1 * x2, mul) + zy, -128, 127), static_cast<int>(ym[i]));
            }
        }
    }

    void int8ForwardEqualsTflmKernelsOnTheExportedFile()
    {
        for (std::uint32_t seed : {1u, 2u, 3u}) {
            const auto [net, p] = smallModel(seed);
            try {
                QVERIFY(compareWithReference(net, p, seed * 7919u) > 0);
            } catch (const std::exception& e) {
                QFAIL(e.what());
            }
        }
    }

    void int8ForwardEqualsTflmKernelsOnMcunet()
    {
        REQUIRE_SHARED();
        QuantizedParams p = readParamsPickle(test::sharedPath("reference/tinyengine/full-int8-params.pkl"));
        p.scales = readScaleJson(test::sharedPath("reference/tinyengine/scale.json"));
        try {
            QVERIFY(compareWithReference(zooModel("mcunet-5fps"), p, 99u) > 100000);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }

    void int8ForwardEqualsTflmKernelsOnASupernetSubnet()
    {
        // Real post-training quantization: squeeze-excite gates (h-sigmoid folded into the conv,
        // MUL broadcast), residual adds, PADs.
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        configureAllocator();
        setTorchThreads(2);
        QTemporaryDir dir;
        const PreparedModel pm = test::quantizedSubnet(dir.path(), 11, "max", 16, 32);
        int se = 0, hsigmoid = 0;
        for (const Layer& l : pm.network.layers) se += l.kind == LayerKind::ChannelScale, hsigmoid += l.act == Activation::HSigmoid;
        QVERIFY(se > 0 && hsigmoid == se);
        try {
            QVERIFY(compareWithReference(pm.network, pm.params, 5u) > 10000);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }
#endif
};

QTEST_GUILESS_MAIN(TestTfliteArithmetic)
#include "test_tflite_arithmetic.moc"
