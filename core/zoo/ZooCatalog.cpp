#include "zoo/ZooCatalog.h"

#include "Error.h"
#include "zoo/NetworkBuilder.h"
#include "io/Text.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

namespace tinyscope {

namespace {

std::string str(int v) { return std::to_string(v); }

// ---- tiny-training's MobileNet-like models -------------------------------------------------
// Stem 3→16 s2, block 0 = dw 3×3 + pw2 16→8, then inverted-bottleneck blocks; every conv has
// a bias (BN folded), ReLU6 after stem/pw1/dw, global pool, 10-class classifier.

struct MbBlock {
    int cout, expand, kernel, stride;
    bool residual;
};

Network tinyTrainingNet(const std::string& name, const std::vector<MbBlock>& blocks, const std::string& description)
{
    NetworkBuilder b(name, {3, 128, 128});
    auto conv = [&](int from, const std::string& lname, const std::string& role, const std::string& prefix,
                    int block, int cout, int k, int stride, int groups, Activation act) {
        return b.conv(from, ConvSpec::of(lname, role, prefix, block, cout, k, stride, groups, act).withBias());
    };
    int x = conv(-1, "first_conv", "stem", "v0", -1, 16, 3, 2, 1, Activation::ReLU6);
    x = conv(x, "blocks.0.dw", "dw", "v1_conv_0", 0, 16, 3, 1, 16, Activation::ReLU6);
    x = conv(x, "blocks.0.pw2", "pw2", "v1_conv_1", 0, 8, 1, 1, 1, Activation::None);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const MbBlock& m = blocks[i];
        const int bi = static_cast<int>(i) + 1;
        const std::string p = "v" + str(bi + 1) + "_conv_", n = "blocks." + str(bi) + ".";
        const int in = x, cin = b.shape(x).c, mid = cin * m.expand;
        int y = conv(x, n + "pw1", "pw1", p + "0", bi, mid, 1, 1, 1, Activation::ReLU6);
        y = conv(y, n + "dw", "dw", p + "1", bi, mid, m.kernel, m.stride, mid, Activation::ReLU6);
        y = conv(y, n + "pw2", "pw2", p + "2", bi, m.cout, 1, 1, 1, Activation::None);
        if (m.residual) y = b.add(in, y, n + "add", "v" + str(bi + 1) + "_qadd", bi);
        x = y;
    }
    x = b.globalAvgPool(x, "pool");
    b.conv(x, ConvSpec::of("classifier", "classifier", "v" + str(static_cast<int>(blocks.size()) + 2), -1, 10).asLinear());
    return b.finish(10, LossKind::CrossEntropy, description,
                    "mit-han-lab/tiny-training algorithm/assets/mcu_models/" + name + ".pkl, 10-class head");
}

Network mbv2w035()
{
    return tinyTrainingNet("mbv2-w0.35",
                           {{8, 6, 3, 2, false},   {8, 6, 3, 1, true},    {16, 6, 3, 2, false},  {16, 6, 3, 1, true},
                            {16, 6, 3, 1, true},   {24, 6, 3, 2, false},  {24, 6, 3, 1, true},   {24, 6, 3, 1, true},
                            {24, 6, 3, 1, true},   {32, 6, 3, 1, false},  {32, 6, 3, 1, true},   {32, 6, 3, 1, true},
                            {56, 6, 3, 2, false},  {56, 6, 3, 1, true},   {56, 6, 3, 1, true},   {112, 6, 3, 1, false}},
                           "MobileNetV2 width 0.35 (tiny-training), 128x128, 10 classes");
}

Network mcunet5fps()
{
    return tinyTrainingNet("mcunet-5fps",
                           {{16, 4, 3, 2, false},  {16, 3, 3, 1, true},   {24, 3, 7, 2, false},  {24, 5, 3, 1, true},
                            {40, 5, 3, 2, false},  {40, 4, 7, 1, true},   {48, 4, 5, 1, false},  {48, 3, 3, 1, true},
                            {48, 4, 3, 1, true},   {96, 5, 7, 2, false},  {96, 4, 5, 1, true},   {96, 4, 5, 1, true},
                            {160, 6, 3, 1, false}},
                           "MCUNet 5 fps (tiny-training), 128x128, 10 classes");
}

Network proxylessW03()
{
    return tinyTrainingNet("proxyless-w0.3",
                           {{16, 3, 5, 2, false},  {16, 3, 3, 1, true},   {16, 3, 7, 2, false},  {16, 3, 3, 1, true},
                            {16, 3, 5, 1, true},   {16, 3, 5, 1, true},   {24, 6, 7, 2, false},  {24, 3, 5, 1, true},
                            {24, 3, 5, 1, true},   {24, 3, 5, 1, true},   {32, 6, 5, 1, false},  {32, 3, 5, 1, true},
                            {32, 3, 5, 1, true},   {32, 3, 5, 1, true},   {64, 6, 7, 2, false},  {64, 6, 7, 1, true},
                            {64, 3, 7, 1, true},   {64, 3, 7, 1, true},   {96, 6, 7, 1, false}},
                           "ProxylessNAS width 0.3 (tiny-training), 128x128, 10 classes");
}

// ---- MLPerf Tiny references (convs without bias + BN + ReLU, Linear with bias) -----------------

ConvSpec convBnRelu(const std::string& name, const std::string& role, const std::string& prefix, int block, int cout,
                    int k, int stride, int groups = 1, Activation act = Activation::ReLU)
{
    return ConvSpec::of(name, role, prefix, block, cout, k, stride, groups, act).withBn();
}

ConvSpec linearLayer(const std::string& name, const std::string& role, const std::string& prefix, int cout)
{
    return ConvSpec::of(name, role, prefix, -1, cout).asLinear();
}

Network dscnnS()
{
    NetworkBuilder b("ds-cnn-s", {1, 49, 10});
    ConvSpec stem = convBnRelu("stem", "stem", "v0", -1, 64, 1, 2);
    stem.kh = 10;
    stem.kw = 4;
    stem.pad_t = stem.pad_b = 5;   // Keras 'same' as symmetric padding: 25×5 output
    stem.pad_l = stem.pad_r = 1;
    int x = b.conv(-1, stem);
    for (int i = 0; i < 4; ++i) {
        const std::string n = "blocks." + str(i) + ".", p = "v" + str(i + 1) + "_conv_";
        x = b.conv(x, convBnRelu(n + "dw", "dw", p + "0", i, 64, 3, 1, 64));
        x = b.conv(x, convBnRelu(n + "pw", "pw", p + "1", i, 64, 1, 1));
    }
    x = b.globalAvgPool(x, "pool");
    b.conv(x, linearLayer("fc", "classifier", "v5", 12));
    return b.finish(12, LossKind::CrossEntropy, "MLPerf Tiny KWS: DS-CNN-S, 49x10 MFCC, 12 classes",
                    "pulp-platform/Onnx4Deeploy dscnn.py (MLPerf Tiny keyword spotting)");
}

Network mobilenetV1()
{
    NetworkBuilder b("mobilenetv1-0.25", {3, 96, 96});
    int x = b.conv(-1, convBnRelu("stem", "stem", "v0", -1, 8, 3, 2));
    const int pw[13] = {16, 32, 32, 64, 64, 128, 128, 128, 128, 128, 128, 256, 256};
    const int dwStride[13] = {1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1};
    for (int i = 0; i < 13; ++i) {
        const std::string n = "blocks." + str(i) + ".", p = "v" + str(i + 1) + "_conv_";
        const int c = b.shape(x).c;
        x = b.conv(x, convBnRelu(n + "dw", "dw", p + "0", i, c, 3, dwStride[i], c));
        x = b.conv(x, convBnRelu(n + "pw", "pw", p + "1", i, pw[i], 1, 1));
    }
    x = b.globalAvgPool(x, "pool");
    b.conv(x, linearLayer("fc", "classifier", "v14", 2));
    return b.finish(2, LossKind::CrossEntropy, "MLPerf Tiny VWW: MobileNetV1 width 0.25, 96x96, 2 classes",
                    "pulp-platform/Onnx4Deeploy mobilenetv1.py (MLPerf Tiny visual wake words)");
}

Network deepAutoEncoder()
{
    NetworkBuilder b("autoencoder", {640, 1, 1});
    const int widths[10] = {128, 128, 128, 128, 8, 128, 128, 128, 128, 640};
    int x = -1;
    for (int i = 0; i < 10; ++i) {
        const bool last = i == 9;
        ConvSpec s = linearLayer("layers." + str(i), last ? "classifier" : "fc", "v" + str(i), widths[i]);
        if (!last) {
            s.bn = true;   // BatchNorm1d with frozen statistics, γ/β trainable
            s.act = Activation::ReLU;
        }
        x = b.conv(x, s);
    }
    return b.finish(640, LossKind::MeanSquaredError,
                    "MLPerf Tiny AD: Deep AutoEncoder 640-128x4-8-128x4-640, MSE reconstruction",
                    "pulp-platform/Onnx4Deeploy autoencoder_mlperf_ad (MLPerf Tiny anomaly detection)");
}

Network resnet8()
{
    NetworkBuilder b("resnet-8", {3, 32, 32});
    int x = b.conv(-1, convBnRelu("stem", "stem", "v0", -1, 16, 3, 1));
    const int widths[3] = {16, 32, 64};
    for (int s = 0; s < 3; ++s) {
        const std::string n = "stage" + str(s + 1) + ".", p = "v" + str(s + 1) + "_conv_";
        const int stride = s == 0 ? 1 : 2;
        const int in = x;
        int y = b.conv(in, convBnRelu(n + "conv1", "conv", p + "0", s, widths[s], 3, stride));
        y = b.conv(y, convBnRelu(n + "conv2", "conv", p + "1", s, widths[s], 3, 1, 1, Activation::None));
        int skip = in;
        if (stride != 1 || b.shape(in).c != widths[s])
            skip = b.conv(in, convBnRelu(n + "shortcut", "shortcut", p + "2", s, widths[s], 1, stride, 1, Activation::None));
        x = b.add(skip, y, n + "add", "v" + str(s + 1) + "_qadd", s, Activation::ReLU);
    }
    x = b.globalAvgPool(x, "pool");
    b.conv(x, linearLayer("fc", "classifier", "v4", 10));
    return b.finish(10, LossKind::CrossEntropy, "MLPerf Tiny IC: ResNet-8, 32x32 CIFAR-10, 10 classes",
                    "pulp-platform/Onnx4Deeploy resnet_exporter.py resnet8 (MLPerf Tiny image classification)");
}

Network cct2()
{
    NetworkBuilder b("cct-2/3x2", {3, 32, 32});
    ConvSpec t0 = ConvSpec::of("tokenizer.conv0", "token_conv", "v0", -1, 64, 3, 1, 1, Activation::ReLU);
    int x = b.conv(-1, t0);
    x = b.maxPool(x, 3, 2, 1, "tokenizer.pool0");
    ConvSpec t1 = t0;
    t1.name = "tokenizer.conv1";
    t1.prefix = "v1";
    t1.cout = 128;
    x = b.conv(x, t1);
    x = b.maxPool(x, 3, 2, 1, "tokenizer.pool1");
    x = b.positionEmbedding(x, "positional_emb");
    for (int l = 0; l < 2; ++l) {
        const std::string n = "blocks." + str(l) + ".", p = "v" + str(l + 2) + "_";
        const int normed = b.layerNorm(x, n + "pre_norm");
        ConvSpec q = linearLayer(n + "attn.q", "q", p + "q", 128);
        q.bias = false;
        ConvSpec k = q, v = q;
        k.name = n + "attn.k";
        k.role = "k";
        k.prefix = p + "k";
        v.name = n + "attn.v";
        v.role = "v";
        v.prefix = p + "v";
        const int qi = b.conv(normed, q), ki = b.conv(normed, k), vi = b.conv(normed, v);
        int a = b.attention(qi, ki, vi, 2, n + "attn");
        a = b.conv(a, linearLayer(n + "attn.proj", "proj", p + "proj", 128));
        x = b.add(x, a, n + "add1", p + "qadd1", l);
        x = b.layerNorm(x, n + "norm1");
        int m = b.conv(x, linearLayer(n + "mlp.fc1", "mlp_fc1", p + "fc1", 128));
        m = b.biasActivation(m, Activation::GELU, n + "mlp.gelu_bias");
        m = b.conv(m, linearLayer(n + "mlp.fc2", "mlp_fc2", p + "fc2", 128));
        x = b.add(x, m, n + "add2", p + "qadd2", l);
    }
    x = b.layerNorm(x, "norm");
    const int logits = b.conv(x, linearLayer("attention_pool", "attention_pool", "v4", 1));
    x = b.sequencePool(x, logits, "seq_pool");
    b.conv(x, linearLayer("fc", "classifier", "v5", 10));
    return b.finish(10, LossKind::CrossEntropy,
                    "MLPerf-style CCT-2/3x2 compact convolutional transformer, 32x32, 10 classes",
                    "pulp-platform/Deeploy CCT training (cct_2_3x2_32)");
}

struct Builder {
    ZooEntry entry;
    std::vector<std::string> aliases;
    std::function<Network()> build;
};

const std::vector<Builder>& builders()
{
    static const std::vector<Builder> all = {
        {{"mbv2-w0.35", "MobileNetV2-w0.35, tiny-training, 128x128, 10 classes"}, {"mbv2", "mcu-mbv2-w0.35"}, mbv2w035},
        {{"mcunet-5fps", "MCUNet-5fps, tiny-training, 128x128, 10 classes"}, {"mcunet", "mcu-mcunet-5fps"}, mcunet5fps},
        {{"proxyless-w0.3", "ProxylessNAS-w0.3, tiny-training, 128x128, 10 classes"}, {"proxyless"}, proxylessW03},
        {{"ds-cnn-s", "MLPerf Tiny KWS DS-CNN-S, 49x10, 12 classes"}, {"dscnn-s", "dscnn_s", "kws"}, dscnnS},
        {{"mobilenetv1-0.25", "MLPerf Tiny VWW MobileNetV1-0.25, 96x96, 2 classes"}, {"mbv1-0.25", "vww"}, mobilenetV1},
        {{"autoencoder", "MLPerf Tiny AD Deep AutoEncoder, 640 -> 640"}, {"deep-autoencoder", "ad"}, deepAutoEncoder},
        {{"resnet-8", "MLPerf Tiny IC ResNet-8, 32x32, 10 classes"}, {"resnet8", "ic"}, resnet8},
        {{"cct-2/3x2", "CCT-2/3x2 compact transformer, 32x32, 10 classes"}, {"cct_2_3x2_32", "cct-2-3x2", "cct"}, cct2},
    };
    return all;
}

}  // namespace

const std::vector<ZooEntry>& zooEntries()
{
    static const std::vector<ZooEntry> entries = [] {
        std::vector<ZooEntry> e;
        for (const Builder& b : builders()) e.push_back(b.entry);
        return e;
    }();
    return entries;
}

std::vector<std::string> zooModelNames()
{
    std::vector<std::string> n;
    for (const ZooEntry& e : zooEntries()) n.push_back(e.name);
    return n;
}

namespace {
const Builder* findBuilder(const std::string& name)
{
    const std::string key = asciiLower(name);
    for (const Builder& b : builders()) {
        if (key == b.entry.name) return &b;
        for (const std::string& a : b.aliases)
            if (key == a) return &b;
    }
    return nullptr;
}
}  // namespace

bool isZooModel(const std::string& name) { return findBuilder(name) != nullptr; }

Network zooModel(const std::string& name)
{
    const Builder* b = findBuilder(name);
    if (!b) {
        std::string list;
        for (const std::string& n : zooModelNames()) list += (list.empty() ? "" : ", ") + n;
        throw InputError("unknown zoo model '" + name + "' (models: " + list + ")");
    }
    return b->build();
}

std::string zooModelMatching(const Network& net)
{
    for (const std::string& n : zooModelNames()) {
        const Network z = zooModel(n);
        if (z.input.c == net.input.c && z.input.h == net.input.h && z.input.w == net.input.w && z.numConvs() == net.numConvs() &&
            z.params() == net.params())
            return n;
    }
    return {};
}

}  // namespace tinyscope
