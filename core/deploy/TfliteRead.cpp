#include "deploy/TfliteRead.h"

#include "Error.h"
#include "graph/ForwardLowering.h"
#include "tinyengine/TfliteArithmetic.h"
#include "tflite_subset_generated.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <sstream>
#include <sys/stat.h>
#include <tuple>

namespace tinyscope {

namespace {

// TFLite's builtin operator names by code (schema version 3, codes 0..161), for naming an op of
// a foreign file; the writer's own ops are in tflite_subset.fbs.
const char* const kBuiltinNames[] = {
    "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE", "DEQUANTIZE", 
    "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D", 
    "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC", "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU", "RELU_N1_TO_1", 
    "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH", "CONCAT_EMBEDDINGS", 
    "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD", "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", 
    "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "TRANSPOSE", "MEAN", "SUB", "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM", 
    "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2", "SPLIT", "LOG_SOFTMAX", "DELEGATE", 
    "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM", "ARG_MAX", "MINIMUM", "LESS", "NEG", "PADV2", "GREATER", 
    "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE", "SIN", "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", 
    "EQUAL", "NOT_EQUAL", "LOG", "SUM", "SQRT", "RSQRT", "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD", 
    "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK", "REDUCE_MIN", "FLOOR_DIV", 
    "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL", "FLOOR_MOD", "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", 
    "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS", "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", 
    "WHERE", "RANK", "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND", "HARD_SWISH", "IF", 
    "WHILE", "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM", 
    "BATCH_MATMUL", "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE", "BROADCAST_TO", "RFFT2D", "CONV_3D", "IMAG", 
    "REAL", "COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT", "HASHTABLE_SIZE", "REDUCE_ALL", 
    "CONV_3D_TRANSPOSE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "BROADCAST_ARGS", "RANDOM_STANDARD_NORMAL", 
    "BUCKETIZE", "RANDOM_UNIFORM", "MULTINOMIAL", "GELU", "DYNAMIC_UPDATE_SLICE", "RELU_0_TO_1", "UNSORTED_SEGMENT_PROD", 
    "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_SUM", "ATAN2", "UNSORTED_SEGMENT_MIN", "SIGN", "BITCAST", "BITWISE_XOR", 
    "RIGHT_SHIFT", 
};

std::string builtinOpName(int code)
{
    const int n = static_cast<int>(sizeof(kBuiltinNames) / sizeof(kBuiltinNames[0]));
    return code >= 0 && code < n ? kBuiltinNames[code] : "builtin op " + std::to_string(code);
}

// ---- The scale.json doubles behind the file's float32 scales.
//
// buildTflite writes a conv's weight scale s_w[o] = float32(s_eff[o]·s_y/s_x) with s_x, s_y the
// doubles of scale.json (a tensor's producing conv's _y_scale; an ADD / MUL tensor's float32 scale)
// and stores s_x, s_y rounded to float32. Reading back, s_eff is chosen per channel so that the same
// expression gives the file's s_w; with s_x, s_y at their float32 values that has no solution for
// some channels of post-training-quantized models (their scales are doubles). Then the doubles
// are chosen inside their float32 rounding intervals: per conv, the ratios s_y/s_x for which every
// channel has an s_eff form a set of intervals, and the tensors' doubles are narrowed to those sets
// conv by conv (arc consistency; the convs link the tensors as a forest, so it suffices).

using Intervals = std::vector<std::pair<double, double>>;   // sorted, disjoint, closed

Intervals merged(Intervals v)
{
    std::sort(v.begin(), v.end());
    Intervals out;
    for (const auto& iv : v) {
        if (!(iv.first <= iv.second)) continue;
        if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
        else out.push_back(iv);
    }
    return out;
}

Intervals intersect(const Intervals& a, const Intervals& b)
{
    Intervals out;
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const double lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
        if (lo <= hi) out.emplace_back(lo, hi);
        if (a[i].second < b[j].second) ++i;
        else ++j;
    }
    return out;
}

// {a·f} or {a/f} for positive intervals.
Intervals scaled(const Intervals& a, const Intervals& f, bool divide)
{
    Intervals out;
    out.reserve(a.size() * f.size());
    for (const auto& x : a)
        for (const auto& y : f)   // rounded outwards: a point times the ratio that leads to another point still meets it
            out.emplace_back((divide ? x.first / y.second : x.first * y.first) * (1 - 1e-15), (divide ? x.second / y.first : x.second * y.second) * (1 + 1e-15));
    return merged(std::move(out));
}

// The doubles that round to the positive float f (ends moved inwards: the check is exact later).
std::pair<double, double> roundingInterval(float f)
{
    const double d = f;
    const double lo = (d + static_cast<double>(std::nextafter(f, 0.0f))) / 2, hi = (d + static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity()))) / 2;
    return {std::nextafter(lo, hi), std::nextafter(hi, lo)};
}

// The writer's weight scale of a channel.
float writtenWeightScale(float seff, double sy, double sx) { return static_cast<float>(static_cast<double>(seff) * sy / sx); }

// An s_eff the writer turns into `sw` with these tensor doubles, if there is one.
bool effectiveFor(float sw, double sx, double sy, float* seff)
{
    if (sw == 0.0f) return *seff = 0.0f, true;
    const float guess = static_cast<float>(static_cast<double>(sw) * sx / sy);
    float up = guess, down = guess;
    for (int k = 0; k < 6; ++k) {
        if (writtenWeightScale(up, sy, sx) == sw) return *seff = up, true;
        if (writtenWeightScale(down, sy, sx) == sw) return *seff = down, true;
        up = std::nextafter(up, std::numeric_limits<float>::infinity());
        down = std::nextafter(down, 0.0f);
    }
    return false;
}

struct ConvScales {
    int x = 0, y = 0;              // tensor classes
    std::vector<float> sw;         // the file's weight scales
};

// The ratios s_y/s_x inside `window` for which every channel has an s_eff.
Intervals feasibleRatios(const std::vector<float>& sw, std::pair<double, double> window)
{
    Intervals f{window};
    for (const float w : sw) {
        if (w == 0.0f) continue;
        const auto [plo, phi] = roundingInterval(w);   // products that round to w
        Intervals ch;
        float s = std::nextafter(std::nextafter(static_cast<float>(plo / window.second), 0.0f), 0.0f);
        for (int k = 0; k < 64 && static_cast<double>(s) * window.first <= phi; ++k, s = std::nextafter(s, std::numeric_limits<float>::infinity())) {
            if (!(s > 0.0f)) continue;
            const double lo = plo / s, hi = phi / s;
            ch.emplace_back(lo * (1 - 1e-15), hi * (1 + 1e-15));   // closed, a little wider: a tie may be the writer's
        }
        f = intersect(f, intersect(merged(std::move(ch)), Intervals{window}));
        if (f.empty()) break;
    }
    return f;
}

// Chooses the tensor doubles (values[c], starting at the file's float32 scales; `hard` classes
// stay there) and the channels' s_eff. False when no choice reproduces every weight scale.
bool chooseScaleDoubles(const std::vector<float>& fscale, const std::vector<bool>& hard, const std::vector<ConvScales>& convs,
                        std::vector<double>& values, std::vector<std::vector<float>>& seff)
{
    auto solveAll = [&]() {
        for (std::size_t i = 0; i < convs.size(); ++i) {
            const ConvScales& c = convs[i];
            seff[i].assign(c.sw.size(), 0.0f);
            for (std::size_t o = 0; o < c.sw.size(); ++o)
                if (!effectiveFor(c.sw[o], values[static_cast<std::size_t>(c.x)], values[static_cast<std::size_t>(c.y)], &seff[i][o])) return false;
        }
        return true;
    };
    for (std::size_t c = 0; c < values.size(); ++c) values[c] = fscale[c];
    if (solveAll()) return true;

    std::vector<Intervals> dom(values.size());
    for (std::size_t c = 0; c < values.size(); ++c) {
        if (!(fscale[c] > 0)) return false;
        dom[c] = hard[c] ? Intervals{{values[c], values[c]}} : Intervals{roundingInterval(fscale[c])};
    }
    std::vector<Intervals> ratios(convs.size());
    for (std::size_t i = 0; i < convs.size(); ++i) {
        const Intervals& dx = dom[static_cast<std::size_t>(convs[i].x)];
        const Intervals& dy = dom[static_cast<std::size_t>(convs[i].y)];
        ratios[i] = feasibleRatios(convs[i].sw, {dy.front().first / dx.back().second * (1 - 1e-14), dy.back().second / dx.front().first * (1 + 1e-14)});
        if (ratios[i].empty()) return false;
    }
    auto propagate = [&]() {
        for (int round = 0; round < 200; ++round) {
            bool changed = false;
            for (std::size_t i = 0; i < convs.size(); ++i) {
                Intervals& dx = dom[static_cast<std::size_t>(convs[i].x)];
                Intervals& dy = dom[static_cast<std::size_t>(convs[i].y)];
                Intervals ny = intersect(dy, scaled(dx, ratios[i], false));
                if (ny != dy) dy = std::move(ny), changed = true;
                Intervals nx = intersect(dx, scaled(dy, ratios[i], true));
                if (nx != dx) dx = std::move(nx), changed = true;
                if (dx.empty() || dy.empty()) return false;
            }
            if (!changed) return true;
        }
        return true;
    };
    if (!propagate()) return false;
    for (std::size_t c = 0; c < values.size(); ++c) {   // classes in execution order
        if (hard[c]) continue;
        // The float32 value itself when it fits, else the middle of the widest piece.
        const double f = fscale[c];
        const auto widest = std::max_element(dom[c].begin(), dom[c].end(), [](const auto& a, const auto& b) { return a.second - a.first < b.second - b.first; });
        values[c] = (widest->first + widest->second) / 2;
        for (const auto& piece : dom[c])
            if (piece.first <= f && f <= piece.second) values[c] = f;
        dom[c] = {{values[c], values[c]}};
        if (!propagate()) return false;
    }
    // A channel whose product fell on a rounding tie at the writer needs the same side of the tie:
    // nudge a soft tensor of a conv that still fails by a few double ulps (the other channels have
    // far more room than that).
    auto convOk = [&](std::size_t i) {
        float e = 0;
        for (const float w : convs[i].sw)
            if (!effectiveFor(w, values[static_cast<std::size_t>(convs[i].x)], values[static_cast<std::size_t>(convs[i].y)], &e)) return false;
        return true;
    };
    for (std::size_t i = 0; i < convs.size(); ++i) {
        if (convOk(i)) continue;
        bool fixed = false;
        for (const int c : {convs[i].y, convs[i].x}) {
            if (hard[static_cast<std::size_t>(c)] || fixed) continue;
            const double v0 = values[static_cast<std::size_t>(c)];
            for (int k = 1; k <= 256 && !fixed; ++k)
                for (const int sign : {1, -1}) {
                    double v = v0;
                    for (int step = 0; step < k; ++step) v = std::nextafter(v, sign > 0 ? 1e300 : 0.0);
                    values[static_cast<std::size_t>(c)] = v;
                    bool all = static_cast<float>(v) == fscale[static_cast<std::size_t>(c)];
                    for (std::size_t j = 0; all && j < convs.size(); ++j)
                        if (convs[j].x == c || convs[j].y == c) all = convOk(j);
                    if (all) { fixed = true; break; }
                    values[static_cast<std::size_t>(c)] = v0;
                }
        }
        if (!fixed) return false;
    }
    for (std::size_t c = 0; c < values.size(); ++c)
        if (static_cast<float>(values[c]) != fscale[c]) return false;
    return solveAll();
}

// TFLite's clamp for a fused activation (CalculateActivationRangeQuantized), as the writer computes it.
std::pair<int, int> fusedRange(tflite::ActivationFunctionType a, float scale, int zero)
{
    auto q = [&](double f) {
        const double v = static_cast<double>(zero) + std::round(f / static_cast<double>(scale));
        return v > 1e6 ? 1000000 : v < -1e6 ? -1000000 : static_cast<int>(v);
    };
    switch (a) {
    case tflite::ActivationFunctionType_RELU: return {std::max(-128, q(0.0)), 127};
    case tflite::ActivationFunctionType_RELU6: return {std::max(-128, q(0.0)), std::min(127, q(6.0))};
    default: return {-128, 127};
    }
}

std::pair<int, int> samePads(int in, int k, int s)
{
    const int out = (in + s - 1) / s;
    const int total = std::max((out - 1) * s + k - in, 0);
    return {total / 2, total - total / 2};
}

std::string tfliteShapeText(const std::vector<int>& s)
{
    std::string t = "[";
    for (std::size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
    return t + "]";
}

// One activation tensor's quantization.
struct ActQuant {
    float scale = 0;
    int zero = 0;
    bool operator==(const ActQuant& o) const { return scale == o.scale && zero == o.zero; }
};

constexpr int kMaxDim = 1 << 16;   // no tensor dimension of a microcontroller model is larger

class TfliteReader {
public:
    TfliteReader(const std::string& bytes, std::string file) : bytes_(bytes), file_(std::move(file)) {}

    TfliteFile read();

private:
    const std::string& bytes_;
    std::string file_;
    const tflite::Model* model_ = nullptr;
    const tflite::SubGraph* sg_ = nullptr;
    std::vector<int> code_;          // per operator: its builtin code

    [[noreturn]] void fail(const std::string& why) const { throw InputError(file_ + ": " + why); }

    const tflite::Tensor* tensor(int index, const std::string& who) const
    {
        if (index < 0 || index >= static_cast<int>(sg_->tensors()->size()))
            fail(who + " names tensor " + std::to_string(index) + ", the subgraph has " + std::to_string(sg_->tensors()->size()));
        return sg_->tensors()->Get(static_cast<unsigned>(index));
    }
    std::string tensorName(int index) const
    {
        const tflite::Tensor* t = sg_->tensors()->Get(static_cast<unsigned>(index));
        return t->name() ? "tensor '" + t->name()->str() + "'" : "tensor " + std::to_string(index);
    }
    std::vector<int> shapeOf(int index) const
    {
        const tflite::Tensor* t = sg_->tensors()->Get(static_cast<unsigned>(index));
        std::vector<int> s;
        if (t->shape())
            for (const std::int32_t d : *t->shape()) s.push_back(d);
        return s;
    }
    // The constant data of a tensor (empty for an activation); its buffer index is checked.
    const flatbuffers::Vector<std::uint8_t>* dataOf(int index, const std::string& who) const
    {
        const tflite::Tensor* t = sg_->tensors()->Get(static_cast<unsigned>(index));
        if (t->buffer() >= model_->buffers()->size())
            fail(who + ": " + tensorName(index) + ": buffer index " + std::to_string(t->buffer()) + " is out of range (the file has " +
                 std::to_string(model_->buffers()->size()) + " buffers)");
        const tflite::Buffer* b = model_->buffers()->Get(t->buffer());
        return b && b->data() && b->data()->size() > 0 ? b->data() : nullptr;
    }
    // Shape, type and element count of a tensor as an op needs it.
    void expect(int index, const std::string& who, tflite::TensorType type, std::size_t rank) const
    {
        const tflite::Tensor* t = tensor(index, who);
        const std::vector<int> s = shapeOf(index);
        if (t->type() != type)
            fail(who + ": " + tensorName(index) + " is " + tflite::EnumNameTensorType(t->type()) + ", the writer emits " + tflite::EnumNameTensorType(type));
        if (s.size() != rank) fail(who + ": " + tensorName(index) + " has shape " + tfliteShapeText(s) + ", expected rank " + std::to_string(rank));
        std::int64_t elems = 1;
        for (const int d : s) {
            if (d < 1 || d > kMaxDim) fail(who + ": " + tensorName(index) + " has shape " + tfliteShapeText(s));
            elems *= d;
            if (elems > (std::int64_t{1} << 26)) fail(who + ": " + tensorName(index) + " has shape " + tfliteShapeText(s) + ", more than 2^26 elements: no microcontroller model");
        }
        if (t->is_variable()) fail(who + ": " + tensorName(index) + " is a variable tensor; the writer emits none");
    }
    ActQuant activation(int index, const std::string& who) const
    {
        const tflite::Tensor* t = tensor(index, who);
        if (dataOf(index, who)) fail(who + ": " + tensorName(index) + " is an activation but has constant data");
        const tflite::QuantizationParameters* q = t->quantization();
        if (!q || !q->scale() || !q->zero_point() || q->scale()->size() != 1 || q->zero_point()->size() != 1)
            fail(who + ": " + tensorName(index) + " lacks one per-tensor scale and zero point");
        ActQuant a{q->scale()->Get(0), 0};
        const std::int64_t z = q->zero_point()->Get(0);
        if (!(a.scale > 0) || !std::isfinite(a.scale)) fail(who + ": " + tensorName(index) + " has scale " + std::to_string(a.scale));
        if (z < -128 || z > 127) fail(who + ": " + tensorName(index) + " has zero point " + std::to_string(z) + ", outside int8");
        a.zero = static_cast<int>(z);
        return a;
    }
    template <typename T>
    std::vector<T> constant(int index, const std::string& who, std::size_t count) const
    {
        const auto* d = dataOf(index, who);
        if (!d || d->size() != count * sizeof(T))
            fail(who + ": " + tensorName(index) + " holds " + std::to_string(d ? d->size() : 0) + " bytes, its shape needs " + std::to_string(count * sizeof(T)));
        std::vector<T> v(count);
        for (std::size_t i = 0; i < count; ++i) {
            std::uint32_t u = 0;
            for (std::size_t k = 0; k < sizeof(T); ++k) u |= static_cast<std::uint32_t>(d->Get(static_cast<unsigned>(i * sizeof(T) + k))) << (8 * k);
            v[i] = static_cast<T>(u);
        }
        return v;
    }
    // Per-channel weight (or bias) scales with zero points 0.
    std::vector<float> channelScales(int index, const std::string& who, int channels, int dimension) const
    {
        const tflite::QuantizationParameters* q = sg_->tensors()->Get(static_cast<unsigned>(index))->quantization();
        if (!q || !q->scale() || !q->zero_point() || q->scale()->size() != static_cast<unsigned>(channels) ||
            q->zero_point()->size() != static_cast<unsigned>(channels))
            fail(who + ": " + tensorName(index) + " lacks " + std::to_string(channels) + " per-channel scales and zero points");
        if (dimension >= 0 && q->quantized_dimension() != dimension)
            fail(who + ": " + tensorName(index) + " is quantized along dimension " + std::to_string(q->quantized_dimension()) + ", the writer uses " +
                 std::to_string(dimension));
        std::vector<float> s;
        for (int o = 0; o < channels; ++o) {
            const float v = q->scale()->Get(static_cast<unsigned>(o));
            if (!(v >= 0) || !std::isfinite(v)) fail(who + ": " + tensorName(index) + " has scale " + std::to_string(v) + " for channel " + std::to_string(o));
            if (q->zero_point()->Get(static_cast<unsigned>(o)) != 0) fail(who + ": " + tensorName(index) + " has a non-zero zero point (the writer's are symmetric)");
            s.push_back(v);
        }
        return s;
    }
    void checkFused(tflite::ActivationFunctionType a, const ActQuant& y, const std::string& who) const
    {
        if (a != tflite::ActivationFunctionType_NONE && a != tflite::ActivationFunctionType_RELU && a != tflite::ActivationFunctionType_RELU6)
            fail("foreign .tflite: " + who + " fuses activation " + std::to_string(static_cast<int>(a)) + ", which the writer never emits");
        const auto r = fusedRange(a, y.scale, y.zero);
        if (r != std::pair<int, int>{-128, 127})
            fail(who + ": its fused " + tflite::EnumNameActivationFunctionType(a) + " clamps to [" + std::to_string(r.first) + ", " + std::to_string(r.second) +
                 "], not the whole int8 range the writer leaves it (Int8Forward clamps to [-128, 127])");
    }
    void checkOps();
    Json readMetadata() const;
};

void TfliteReader::checkOps()
{
    const auto* codes = model_->operator_codes();
    const auto* ops = sg_->operators();
    for (unsigned k = 0; k < ops->size(); ++k) {
        const tflite::Operator* op = ops->Get(k);
        const std::string at = "op " + std::to_string(k);
        if (!codes || op->opcode_index() >= codes->size())
            fail(at + " has operator code index " + std::to_string(op->opcode_index()) + ", the file has " + std::to_string(codes ? codes->size() : 0));
        const tflite::OperatorCode* oc = codes->Get(op->opcode_index());
        // TFLite's GetBuiltinCode: the larger of the two fields (the byte one predates code 127).
        const int code = std::max(static_cast<int>(oc->builtin_code()), static_cast<int>(oc->deprecated_builtin_code()));
        const std::string foreign = "; device-run compares only Tinyscope exports (core/deploy/TfliteExport)";
        if (oc->custom_code() || code == 32)
            fail("foreign .tflite: " + at + " is the custom op '" + (oc->custom_code() ? oc->custom_code()->str() : std::string()) + "'" + foreign);
        tflite::BuiltinOptions want = tflite::BuiltinOptions_NONE;
        switch (code) {
        case tflite::BuiltinOperator_CONV_2D: want = tflite::BuiltinOptions_Conv2DOptions; break;
        case tflite::BuiltinOperator_DEPTHWISE_CONV_2D: want = tflite::BuiltinOptions_DepthwiseConv2DOptions; break;
        case tflite::BuiltinOperator_PAD: want = tflite::BuiltinOptions_PadOptions; break;
        case tflite::BuiltinOperator_ADD: want = tflite::BuiltinOptions_AddOptions; break;
        case tflite::BuiltinOperator_MUL: want = tflite::BuiltinOptions_MulOptions; break;
        case tflite::BuiltinOperator_AVERAGE_POOL_2D: want = tflite::BuiltinOptions_Pool2DOptions; break;
        case tflite::BuiltinOperator_RESHAPE: want = tflite::BuiltinOptions_ReshapeOptions; break;
        case tflite::BuiltinOperator_FULLY_CONNECTED: want = tflite::BuiltinOptions_FullyConnectedOptions; break;
        default: fail("foreign .tflite: " + at + " is " + builtinOpName(code) + foreign);
        }
        if (op->builtin_options_type() != want || !op->builtin_options())
            fail("foreign .tflite: " + at + " (" + builtinOpName(code) + ") has options " + std::to_string(static_cast<int>(op->builtin_options_type())) +
                 ", the writer emits " + tflite::EnumNameBuiltinOptions(want) + foreign);
        if (!op->inputs() || !op->outputs() || op->outputs()->size() != 1) fail(at + " (" + builtinOpName(code) + ") does not have one output");
        code_.push_back(code);
    }
}

Json TfliteReader::readMetadata() const
{
    const auto* md = model_->metadata();
    if (md)
        for (const tflite::Metadata* e : *md) {
            if (!e->name() || e->name()->str() != "tinyscope") continue;
            if (e->buffer() >= model_->buffers()->size())
                fail("the 'tinyscope' metadata names buffer " + std::to_string(e->buffer()) + ", out of range (the file has " + std::to_string(model_->buffers()->size()) +
                     " buffers)");
            const tflite::Buffer* b = model_->buffers()->Get(e->buffer());
            if (!b || !b->data()) fail("the 'tinyscope' metadata buffer is empty");
            const std::string text(reinterpret_cast<const char*>(b->data()->data()), b->data()->size());
            Json j = Json::parse(text, nullptr, false);
            if (j.is_discarded() || !j.is_object()) fail("the 'tinyscope' metadata is not a JSON object");
            if (j.value("format", std::string()) != "tinyscope-tflite") fail("the 'tinyscope' metadata's format is not 'tinyscope-tflite'");
            if (!j.contains("model") || !j["model"].is_string()) fail("the 'tinyscope' metadata names no model");
            return j;
        }
    fail("foreign .tflite: no 'tinyscope' metadata; device-run compares only Tinyscope exports (core/deploy/TfliteExport)");
}

TfliteFile TfliteReader::read()
{
    // ---- The container, before anything is read from it.
    if (bytes_.size() < 16) fail(std::to_string(bytes_.size()) + " bytes, too small for a TFLite flatbuffer");
    if (bytes_.size() >= static_cast<std::size_t>(FLATBUFFERS_MAX_BUFFER_SIZE)) fail("larger than a flatbuffer can be (2 GiB)");
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes_.data());
    if (!tflite::ModelBufferHasIdentifier(data)) fail("no 'TFL3' file identifier: not a TFLite flatbuffer");
    {
        flatbuffers::Verifier v(data, bytes_.size());
        if (!tflite::VerifyModelBuffer(v)) fail("corrupt TFLite flatbuffer (the FlatBuffers verifier rejects it)");
    }
    model_ = tflite::GetModel(data);
    if (model_->version() != 3) fail("schema version " + std::to_string(model_->version()) + ", expected 3");
    if (!model_->subgraphs() || model_->subgraphs()->size() != 1)
        fail(std::to_string(model_->subgraphs() ? model_->subgraphs()->size() : 0) + " subgraphs; a Tinyscope export has one");
    if (!model_->buffers()) fail("no buffers");
    sg_ = model_->subgraphs()->Get(0);
    if (!sg_->tensors() || !sg_->operators() || sg_->operators()->size() == 0) fail("the subgraph has no tensors or no operators");
    if (!sg_->inputs() || sg_->inputs()->size() != 1) fail(std::to_string(sg_->inputs() ? sg_->inputs()->size() : 0) + " inputs; a Tinyscope export has one");
    if (!sg_->outputs() || sg_->outputs()->size() != 1) fail(std::to_string(sg_->outputs() ? sg_->outputs()->size() : 0) + " outputs; a Tinyscope export has one");
    checkOps();
    TfliteFile out;
    out.bytes = static_cast<std::int64_t>(bytes_.size());
    out.metadata = readMetadata();

    // ---- The layers, op by op.
    Network& net = out.net;
    QuantizedParams& p = out.params;
    p.source = file_;
    net.name = out.metadata["model"].get<std::string>();
    const int nTensors = static_cast<int>(sg_->tensors()->size());
    constexpr int kUnwritten = -2, kIntermediate = -3;
    std::vector<int> layerOf(static_cast<std::size_t>(nTensors), kUnwritten);
    const int inT = sg_->inputs()->Get(0);
    expect(inT, "the subgraph input", tflite::TensorType_INT8, 4);
    const std::vector<int> inShape = shapeOf(inT);
    if (inShape[0] != 1) fail("the input " + tensorName(inT) + " has batch " + std::to_string(inShape[0]) + "; the writer's is 1");
    const ActQuant inQ = activation(inT, "the subgraph input");
    layerOf[static_cast<std::size_t>(inT)] = -1;
    net.input = Shape3{inShape[3], inShape[1], inShape[2]};
    std::vector<ActQuant> quantOf{inQ};   // per slot: 0 = the input, 1 + i = layer i's output
    std::vector<std::vector<float>> weightScales;   // per layer (convs)

    struct Pending {
        int op = -1, tensor = -1, layer = 0;
        int t = 0, b = 0, l = 0, r = 0;
    } pad, reshape;
    const int nOps = static_cast<int>(code_.size());
    for (int k = 0; k < nOps; ++k) {
        const tflite::Operator* op = sg_->operators()->Get(static_cast<unsigned>(k));
        const int code = code_[static_cast<std::size_t>(k)];
        const std::string who = "op " + std::to_string(k) + " (" + builtinOpName(code) + ")";
        std::vector<int> ins(op->inputs()->begin(), op->inputs()->end());
        const int yT = op->outputs()->Get(0);
        tensor(yT, who);
        for (const int t : ins) tensor(t, who);
        if (layerOf[static_cast<std::size_t>(yT)] != kUnwritten) fail(who + " writes " + tensorName(yT) + ", which an earlier op or the input already holds");
        const bool convLike = code == tflite::BuiltinOperator_CONV_2D || code == tflite::BuiltinOperator_DEPTHWISE_CONV_2D;
        if (pad.op >= 0 && !(convLike && !ins.empty() && ins[0] == pad.tensor))
            fail("op " + std::to_string(pad.op) + " (PAD) is not followed by the conv that reads it; the writer emits PAD only right before a conv");
        if (reshape.op >= 0 && !(code == tflite::BuiltinOperator_FULLY_CONNECTED && !ins.empty() && ins[0] == reshape.tensor))
            fail("op " + std::to_string(reshape.op) + " (RESHAPE) is not followed by the FULLY_CONNECTED that reads it; the writer emits RESHAPE only for the classifier");
        auto nhwcShape = [](const std::vector<int>& s) { return Shape3{s[3], s[1], s[2]}; };
        auto layerIn = [&](int t) {
            const int l = layerOf[static_cast<std::size_t>(t)];
            if (l < -1) fail(who + " reads " + tensorName(t) + ", which no earlier layer writes");
            return l;
        };
        auto fromProducer = [&](int t, int layer) {   // an activation input read with its producer's shape
            expect(t, who, tflite::TensorType_INT8, 4);
            const std::vector<int> s = shapeOf(t);
            if (s[0] != 1 || nhwcShape(s) != net.shapeOf(layer)) fail(who + ": " + tensorName(t) + " has shape " + tfliteShapeText(s) + ", its producer's is another");
        };
        auto needInputs = [&](std::size_t n) {
            if (ins.size() != n) fail(who + " has " + std::to_string(ins.size()) + " inputs, the writer's has " + std::to_string(n));
        };
        const int index = static_cast<int>(net.layers.size());
        Layer lay;
        lay.name = sg_->tensors()->Get(static_cast<unsigned>(yT))->name() ? sg_->tensors()->Get(static_cast<unsigned>(yT))->name()->str()
                                                                       : "layer" + std::to_string(index);
        const std::string pre = "layer" + std::to_string(index);
        auto put8 = [&](const std::string& key, int v) { p.set(key, int8Array({static_cast<std::int8_t>(v)}, {1})); };

        switch (code) {
        case tflite::BuiltinOperator_PAD: {
            needInputs(2);
            const int x = layerIn(ins[0]);
            fromProducer(ins[0], x);
            expect(ins[1], who, tflite::TensorType_INT32, 2);
            expect(yT, who, tflite::TensorType_INT8, 4);
            if (shapeOf(ins[1]) != std::vector<int>{4, 2}) fail(who + ": " + tensorName(ins[1]) + " has shape " + tfliteShapeText(shapeOf(ins[1])) + ", expected [4,2]");
            const std::vector<std::int32_t> v = constant<std::int32_t>(ins[1], who, 8);
            if (v[0] || v[1] || v[6] || v[7]) fail(who + " pads the batch or channel dimension; the writer pads height and width only");
            for (int i = 2; i < 6; ++i)
                if (v[static_cast<std::size_t>(i)] < 0 || v[static_cast<std::size_t>(i)] > kMaxDim) fail(who + " has padding " + std::to_string(v[static_cast<std::size_t>(i)]));
            const std::vector<int> xs = shapeOf(ins[0]), ys = shapeOf(yT);
            if (ys != std::vector<int>{1, xs[1] + v[2] + v[3], xs[2] + v[4] + v[5], xs[3]})
                fail(who + ": " + tensorName(yT) + " has shape " + tfliteShapeText(ys) + ", the paddings give another");
            if (!(activation(yT, who) == quantOf[static_cast<std::size_t>(x + 1)]))
                fail(who + ": the padded tensor's quantization differs from its input's (the writer keeps it)");
            pad = Pending{k, yT, x, v[2], v[3], v[4], v[5]};
            layerOf[static_cast<std::size_t>(yT)] = kIntermediate;
            continue;
        }
        case tflite::BuiltinOperator_RESHAPE: {
            needInputs(2);
            const int x = layerIn(ins[0]);
            fromProducer(ins[0], x);
            expect(ins[1], who, tflite::TensorType_INT32, 1);
            expect(yT, who, tflite::TensorType_INT8, 2);
            const std::vector<int> xs = shapeOf(ins[0]);
            const std::vector<int> flat{1, xs[3]};
            if (xs[0] != 1 || xs[1] != 1 || xs[2] != 1) fail(who + " flattens " + tensorName(ins[0]) + " of shape " + tfliteShapeText(xs) + "; the writer's classifier reads [1,1,1,C]");
            if (shapeOf(ins[1]) != std::vector<int>{2} || constant<std::int32_t>(ins[1], who, 2) != std::vector<std::int32_t>{1, xs[3]} ||
                shapeOf(yT) != flat)
                fail(who + " does not reshape to " + tfliteShapeText(flat));
            const auto* o = op->builtin_options_as_ReshapeOptions();
            if (!o->new_shape() || std::vector<int>(o->new_shape()->begin(), o->new_shape()->end()) != flat) fail(who + ": new_shape is not " + tfliteShapeText(flat));
            if (!(activation(yT, who) == quantOf[static_cast<std::size_t>(x + 1)])) fail(who + ": the flattened tensor's quantization differs from its input's");
            reshape = Pending{k, yT, x};
            layerOf[static_cast<std::size_t>(yT)] = kIntermediate;
            continue;
        }
        case tflite::BuiltinOperator_CONV_2D:
        case tflite::BuiltinOperator_DEPTHWISE_CONV_2D:
        case tflite::BuiltinOperator_FULLY_CONNECTED: {
            needInputs(3);
            const bool fc = code == tflite::BuiltinOperator_FULLY_CONNECTED, dw = code == tflite::BuiltinOperator_DEPTHWISE_CONV_2D;
            int x = -1;
            if (fc) {
                if (k != nOps - 1) fail(who + " is not the last op; the writer emits FULLY_CONNECTED only as the classifier");
                x = reshape.layer;
                reshape = Pending{};
            } else if (pad.op >= 0) {
                x = pad.layer;
                lay.pad_t = pad.t, lay.pad_b = pad.b, lay.pad_l = pad.l, lay.pad_r = pad.r;
            } else {
                x = layerIn(ins[0]);
                fromProducer(ins[0], x);
            }
            const bool padded = pad.op >= 0;
            pad = Pending{};
            lay.kind = LayerKind::Conv;
            lay.inputs = {x};
            lay.in = net.shapeOf(x);
            lay.cin = lay.in.c;
            expect(ins[1], who, tflite::TensorType_INT8, fc ? 2 : 4);
            expect(ins[2], who, tflite::TensorType_INT32, 1);
            expect(yT, who, tflite::TensorType_INT8, fc ? 2 : 4);
            const std::vector<int> ws = shapeOf(ins[1]), ys = shapeOf(yT);
            const int O = fc || !dw ? ws[0] : ws[3];
            lay.cout = O;
            lay.kh = fc ? 1 : ws[1];
            lay.kw = fc ? 1 : ws[2];
            const int I = fc ? ws[1] : dw ? 1 : ws[3];
            lay.groups = dw ? lay.cin : 1;
            if (fc && (lay.in.h != 1 || lay.in.w != 1 || I != lay.cin)) fail(who + ": " + tensorName(ins[1]) + " has shape " + tfliteShapeText(ws) + " for " + std::to_string(lay.cin) + " inputs");
            if (dw && (ws[0] != 1 || O != lay.cin))
                fail(who + ": " + tensorName(ins[1]) + " has shape " + tfliteShapeText(ws) + "; the writer's depthwise weights are [1,KH,KW," + std::to_string(lay.cin) + "]");
            if (!fc && !dw && I != lay.cin) fail(who + ": " + tensorName(ins[1]) + " has shape " + tfliteShapeText(ws) + " for " + std::to_string(lay.cin) + " input channels");
            if (shapeOf(ins[2]) != std::vector<int>{O}) fail(who + ": " + tensorName(ins[2]) + " has shape " + tfliteShapeText(shapeOf(ins[2])) + ", expected [" + std::to_string(O) + "]");
            tflite::ActivationFunctionType fused = tflite::ActivationFunctionType_NONE;
            if (fc) {
                const auto* o = op->builtin_options_as_FullyConnectedOptions();
                if (o->weights_format() != tflite::FullyConnectedOptionsWeightsFormat_DEFAULT || o->keep_num_dims())
                    fail("foreign .tflite: " + who + " has weights format " + std::to_string(static_cast<int>(o->weights_format())) + " / keep_num_dims; the writer emits neither");
                fused = o->fused_activation_function();
                if (ys != std::vector<int>{1, O}) fail(who + ": " + tensorName(yT) + " has shape " + tfliteShapeText(ys) + ", expected [1," + std::to_string(O) + "]");
                lay.linear = true;
            } else {
                tflite::Padding padding = tflite::Padding_VALID;
                int sh = 1, sw = 1, dh = 1, dwf = 1;
                if (dw) {
                    const auto* o = op->builtin_options_as_DepthwiseConv2DOptions();
                    padding = o->padding(), sh = o->stride_h(), sw = o->stride_w(), dh = o->dilation_h_factor(), dwf = o->dilation_w_factor();
                    fused = o->fused_activation_function();
                    if (o->depth_multiplier() != 1) fail("foreign .tflite: " + who + " has depth multiplier " + std::to_string(o->depth_multiplier()) + "; the writer's is 1");
                } else {
                    const auto* o = op->builtin_options_as_Conv2DOptions();
                    padding = o->padding(), sh = o->stride_h(), sw = o->stride_w(), dh = o->dilation_h_factor(), dwf = o->dilation_w_factor();
                    fused = o->fused_activation_function();
                }
                if (dh != 1 || dwf != 1) fail("foreign .tflite: " + who + " is dilated (" + std::to_string(dh) + "x" + std::to_string(dwf) + "); the writer's convs are not");
                if (sh < 1 || sw < 1 || sh > kMaxDim || sw > kMaxDim) fail(who + " has stride " + std::to_string(sh) + "x" + std::to_string(sw));
                if (padding != tflite::Padding_SAME && padding != tflite::Padding_VALID) fail(who + " has padding " + std::to_string(static_cast<int>(padding)));
                if (padded && padding != tflite::Padding_VALID) fail(who + " pads SAME after a PAD; the writer's padded convs are VALID");
                lay.stride_h = sh, lay.stride_w = sw;
                if (padding == tflite::Padding_SAME) {
                    std::tie(lay.pad_t, lay.pad_b) = samePads(lay.in.h, lay.kh, sh);
                    std::tie(lay.pad_l, lay.pad_r) = samePads(lay.in.w, lay.kw, sw);
                }
                const int hp = lay.in.h + lay.pad_t + lay.pad_b, wp = lay.in.w + lay.pad_l + lay.pad_r;
                if (hp < lay.kh || wp < lay.kw) fail(who + ": a " + std::to_string(lay.kh) + "x" + std::to_string(lay.kw) + " window does not fit its input");
                const std::vector<int> want{1, (hp - lay.kh) / sh + 1, (wp - lay.kw) / sw + 1, O};
                if (ys != want) fail(who + ": " + tensorName(yT) + " has shape " + tfliteShapeText(ys) + ", the kernel, stride and padding give " + tfliteShapeText(want));
            }
            lay.out = fc ? Shape3{O, 1, 1} : nhwcShape(ys);
            const ActQuant xq = quantOf[static_cast<std::size_t>(x + 1)], yq = activation(yT, who);
            checkFused(fused, yq, who);
            lay.act = fused == tflite::ActivationFunctionType_RELU ? Activation::ReLU : fused == tflite::ActivationFunctionType_RELU6 ? Activation::ReLU6 : Activation::None;
            // Weights as our OIHW; biases; zero points; the per-channel weight scales.
            const std::size_t n = static_cast<std::size_t>(O) * I * lay.kh * lay.kw;
            const std::vector<std::int8_t> w = constant<std::int8_t>(ins[1], who, n);
            std::vector<std::int8_t> oihw(n);
            for (int o = 0; o < O; ++o)
                for (int c = 0; c < I; ++c)
                    for (int yy = 0; yy < lay.kh; ++yy)
                        for (int xx = 0; xx < lay.kw; ++xx) {
                            const std::size_t at = dw ? (static_cast<std::size_t>(yy) * lay.kw + xx) * O + o : ((static_cast<std::size_t>(o) * lay.kh + yy) * lay.kw + xx) * I + c;
                            oihw[((static_cast<std::size_t>(o) * I + c) * lay.kh + yy) * lay.kw + xx] = w[at];
                        }
            p.set(pre + "_weight", int8Array(oihw, {O, I, lay.kh, lay.kw}));
            p.set(pre + "_bias", int32Array(constant<std::int32_t>(ins[2], who, static_cast<std::size_t>(O)), {O}));
            put8(pre + "_zero_x", xq.zero);
            put8(pre + "_zero_y", yq.zero);
            weightScales.resize(static_cast<std::size_t>(index + 1));
            weightScales[static_cast<std::size_t>(index)] = channelScales(ins[1], who, O, dw ? 3 : 0);
            channelScales(ins[2], who, O, -1);
            quantOf.push_back(yq);
            break;
        }
        case tflite::BuiltinOperator_ADD:
        case tflite::BuiltinOperator_MUL: {
            needInputs(2);
            const bool add = code == tflite::BuiltinOperator_ADD;
            const int a = layerIn(ins[0]), b = layerIn(ins[1]);
            fromProducer(ins[0], a);
            fromProducer(ins[1], b);
            expect(yT, who, tflite::TensorType_INT8, 4);
            const std::vector<int> as = shapeOf(ins[0]), bs = shapeOf(ins[1]), ys = shapeOf(yT);
            if (add && (as != ys || bs != ys)) fail(who + " adds " + tfliteShapeText(as) + " and " + tfliteShapeText(bs) + " into " + tfliteShapeText(ys) + "; the writer's ADD has one shape");
            if (!add && (as != std::vector<int>{1, 1, 1, ys[3]} || bs != ys))
                fail(who + " multiplies " + tfliteShapeText(as) + " by " + tfliteShapeText(bs) + " into " + tfliteShapeText(ys) + "; the writer's MUL is a [1,1,1,C] gate over [1,H,W,C]");
            const ActQuant yq = activation(yT, who);
            const auto fused = add ? op->builtin_options_as_AddOptions()->fused_activation_function() : op->builtin_options_as_MulOptions()->fused_activation_function();
            checkFused(fused, yq, who);
            lay.kind = add ? LayerKind::Add : LayerKind::ChannelScale;
            lay.role = add ? "add" : "se_scale";
            lay.ir_prefix = pre;
            lay.inputs = {a, b};
            lay.in = net.shapeOf(a);
            lay.out = nhwcShape(ys);
            lay.act = fused == tflite::ActivationFunctionType_RELU ? Activation::ReLU : fused == tflite::ActivationFunctionType_RELU6 ? Activation::ReLU6 : Activation::None;
            const ActQuant q1 = quantOf[static_cast<std::size_t>(a + 1)], q2 = quantOf[static_cast<std::size_t>(b + 1)];
            put8(pre + "_zero_x1", q1.zero);
            put8(pre + "_zero_x2", q2.zero);
            p.set(pre + "_scale_x1", float32Array({q1.scale}, {1}));
            p.set(pre + "_scale_x2", float32Array({q2.scale}, {1}));
            put8(pre + "_zero_y", yq.zero);
            p.set(pre + "_scale_y", float32Array({yq.scale}, {1}));
            quantOf.push_back(yq);
            break;
        }
        case tflite::BuiltinOperator_AVERAGE_POOL_2D: {
            needInputs(1);
            const int x = layerIn(ins[0]);
            fromProducer(ins[0], x);
            expect(yT, who, tflite::TensorType_INT8, 4);
            const std::vector<int> xs = shapeOf(ins[0]), ys = shapeOf(yT);
            const auto* o = op->builtin_options_as_Pool2DOptions();
            if (o->filter_height() != xs[1] || o->filter_width() != xs[2] || o->stride_h() != 1 || o->stride_w() != 1 || o->padding() != tflite::Padding_VALID ||
                ys != std::vector<int>{1, 1, 1, xs[3]})
                fail("foreign .tflite: " + who + " is not a global average pooling (filter = the input's height x width, stride 1, VALID); the writer emits only that");
            if (o->fused_activation_function() != tflite::ActivationFunctionType_NONE) fail("foreign .tflite: " + who + " fuses an activation; the writer's pooling does not");
            if (!(activation(yT, who) == quantOf[static_cast<std::size_t>(x + 1)])) fail(who + ": the pooled tensor's quantization differs from its input's (the writer keeps it)");
            lay.kind = LayerKind::GlobalAvgPool;
            lay.role = "pool";
            lay.inputs = {x};
            lay.in = net.shapeOf(x);
            lay.out = Shape3{lay.in.c, 1, 1};
            quantOf.push_back(quantOf[static_cast<std::size_t>(x + 1)]);
            break;
        }
        default:
            fail("foreign .tflite: " + who);
        }
        layerOf[static_cast<std::size_t>(yT)] = index;
        if (lay.isConv()) lay.ir_prefix = pre;
        net.layers.push_back(std::move(lay));
        ++out.ops[builtinOpName(code)];
        if (code == tflite::BuiltinOperator_FULLY_CONNECTED) ++out.ops["RESHAPE"];
    }
    if (pad.op >= 0) fail("op " + std::to_string(pad.op) + " (PAD) is the last op; the writer emits PAD only right before a conv");
    if (reshape.op >= 0) fail("op " + std::to_string(reshape.op) + " (RESHAPE) is the last op; the writer emits RESHAPE only before the classifier");
    const int L = static_cast<int>(net.layers.size());
    const int outT = sg_->outputs()->Get(0);
    tensor(outT, "the subgraph output");
    if (layerOf[static_cast<std::size_t>(outT)] != L - 1) fail("the subgraph output " + tensorName(outT) + " is not the last op's output");
    for (int k = 0; k < nOps; ++k)
        if (code_[static_cast<std::size_t>(k)] == tflite::BuiltinOperator_PAD) ++out.ops["PAD"];
    out.input = TfliteTensorInfo{inShape, static_cast<double>(inQ.scale), inQ.zero};
    out.output = TfliteTensorInfo{shapeOf(outT), static_cast<double>(quantOf.back().scale), quantOf.back().zero};

    // ---- What the file does not say: roles, residual blocks, BN / bias flags.
    for (int i = 0; i < L; ++i) {
        Layer& l = net.layers[static_cast<std::size_t>(i)];
        if (!l.isConv()) continue;
        l.role = l.linear ? "classifier" : l.depthwise() ? "dw" : "conv";
    }
    for (int i = 0; i < L; ++i) {   // squeeze-excite: pool -> reduce conv -> expand conv -> MUL's gate
        const Layer& m = net.layer(i);
        if (m.kind != LayerKind::ChannelScale || m.inputs[0] < 0) continue;
        Layer& expand = net.layers[static_cast<std::size_t>(m.inputs[0])];
        if (!expand.isConv() || expand.inputs[0] < 0) continue;
        Layer& reduce = net.layers[static_cast<std::size_t>(expand.inputs[0])];
        if (!reduce.isConv() || reduce.inputs[0] < 0 || net.layer(reduce.inputs[0]).kind != LayerKind::GlobalAvgPool) continue;
        reduce.role = "se_reduce";
        expand.role = "se_expand";
    }
    {   // a residual block: the ADD and the layers of its branch back to its skip input
        int block = 0;
        for (int i = 0; i < L; ++i) {
            Layer& a = net.layers[static_cast<std::size_t>(i)];
            if (a.kind != LayerKind::Add) continue;
            a.block = block;
            for (int cur = a.inputs[1]; cur >= 0 && cur > a.inputs[0];) {
                Layer& l = net.layers[static_cast<std::size_t>(cur)];
                if (l.kind == LayerKind::Add || l.block >= 0) break;
                l.block = block;
                cur = l.kind == LayerKind::ChannelScale ? l.inputs[1] : l.inputs[0];
            }
            ++block;
        }
    }
    // BN after every conv but squeeze-excite's and the classifier (design-space subnets, our small
    // nets), or a bias on every conv (MIT's zoo models): the one whose parameter count the metadata
    // states, else the first.
    auto flagConvs = [&](bool bn) {
        for (Layer& l : net.layers) {
            if (!l.isConv()) continue;
            const bool biasOnly = !bn || l.linear || l.role == "se_reduce" || l.role == "se_expand";
            l.bn = !biasOnly;
            l.bias = biasOnly;
        }
    };
    flagConvs(true);
    if (out.metadata.contains("params") && out.metadata["params"].is_number_integer() && net.params() != out.metadata["params"].get<std::int64_t>()) {
        flagConvs(false);
        if (net.params() != out.metadata["params"].get<std::int64_t>()) flagConvs(true);
    }
    int head = -1;
    for (int i = 0; i < L; ++i)
        if (net.layer(i).isConv()) head = i;
    if (head < 0) fail("the file has no CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED");
    net.num_outputs = net.layer(head).cout;
    try {
        net.finalize();
    } catch (const InputError& e) {
        fail(e.what());
    }

    // ---- Scales: tensor classes as the writer forms them (pooling keeps its input's).
    std::vector<int> cls(static_cast<std::size_t>(L + 1));
    for (int s = 0; s <= L; ++s) {
        const int layer = s - 1;
        cls[static_cast<std::size_t>(s)] = layer >= 0 && net.layer(layer).kind == LayerKind::GlobalAvgPool ? cls[static_cast<std::size_t>(net.layer(layer).inputs[0] + 1)] : s;
    }
    std::vector<int> compact(static_cast<std::size_t>(L + 1), -1);
    std::vector<float> fscale;
    for (int s = 0; s <= L; ++s) {
        const int r = cls[static_cast<std::size_t>(s)];
        if (compact[static_cast<std::size_t>(r)] < 0) compact[static_cast<std::size_t>(r)] = static_cast<int>(fscale.size()), fscale.push_back(quantOf[static_cast<std::size_t>(r)].scale);
    }
    auto classOf = [&](int layer) { return compact[static_cast<std::size_t>(cls[static_cast<std::size_t>(layer + 1)])]; };
    std::vector<bool> hard(fscale.size(), false);
    std::vector<ConvScales> convs;
    std::vector<int> convLayer;
    for (int i = 0; i < L; ++i) {
        const Layer& l = net.layer(i);
        if (l.kind == LayerKind::Add || l.kind == LayerKind::ChannelScale)
            for (const int t : {l.inputs[0], l.inputs[1], i}) hard[static_cast<std::size_t>(classOf(t))] = true;
        if (l.isConv()) convs.push_back(ConvScales{classOf(l.inputs[0]), classOf(i), weightScales[static_cast<std::size_t>(i)]}), convLayer.push_back(i);
    }
    std::vector<double> values(fscale.size());
    std::vector<std::vector<float>> seff(convs.size());
    const bool exact = chooseScaleDoubles(fscale, hard, convs, values, seff);
    for (std::size_t c = 0; c < convs.size(); ++c) {
        const Layer& l = net.layer(convLayer[c]);
        const float sx = fscale[static_cast<std::size_t>(convs[c].x)], sy = fscale[static_cast<std::size_t>(convs[c].y)];
        std::vector<double>& eff = out.effective_scales[l.ir_prefix + "_scale"];
        for (const float sw : convs[c].sw) eff.push_back(tfliteEffectiveScale(sx, sw, sy));
        if (!exact) {   // no s_eff reproduces every weight scale: the nearest to the effective scale
            seff[c].clear();
            for (const double e : eff) seff[c].push_back(static_cast<float>(e));
        }
        p.set(l.ir_prefix + "_scale", float32Array(seff[c], {l.cout}));
        p.scales[l.ir_prefix + "_x_scale"] = exact ? values[static_cast<std::size_t>(convs[c].x)] : static_cast<double>(sx);
        p.scales[l.ir_prefix + "_y_scale"] = exact ? values[static_cast<std::size_t>(convs[c].y)] : static_cast<double>(sy);
    }

    // ---- The metadata buildTflite was given: the stored JSON less what the network implies.
    {
        const Json& md = out.metadata;
        TfliteMetadata& meta = out.meta;
        const Json in = md.value("input", Json::object());
        if (in.is_object()) {
            if (in.contains("channel_order") && in["channel_order"].is_string()) meta.channel_order = in["channel_order"].get<std::string>();
            for (const char* key : {"mean", "std"})
                if (in.contains(key) && in[key].is_array() && in[key].size() == 3 && in[key][0].is_number() && in[key][1].is_number() && in[key][2].is_number())
                    for (int c = 0; c < 3; ++c) (std::string(key) == "mean" ? meta.norm.mean : meta.norm.std)[c] = in[key][static_cast<std::size_t>(c)].get<float>();
        }
        if (md.contains("labels") && md["labels"].is_array())
            for (const Json& label : md["labels"])
                if (label.is_string()) meta.labels.push_back(label.get<std::string>());
        meta.config = md.value("config", Json());
        const std::string description = model_->description() ? model_->description()->str() : std::string();
        if (description != "Tinyscope int8 export of " + net.name) meta.description = description;
        static const char* const implied[] = {"format", "model", "input", "output", "labels", "config", "macs", "params", "peak_sram_bytes", "flash_bytes"};
        for (auto it = md.begin(); it != md.end(); ++it)
            if (std::find_if(std::begin(implied), std::end(implied), [&](const char* k) { return it.key() == k; }) == std::end(implied)) meta.extra[it.key()] = it.value();
    }
    // A figure the read network implies differently (e.g. a BN/bias guess) is kept as the file says it.
    for (int attempt = 0; attempt < 2; ++attempt) {
        try {
            const TfliteModel again = buildTflite(net, p, out.meta);
            out.rebuilds_exactly = again.bytes == bytes_;
            if (out.rebuilds_exactly) break;
            bool added = false;
            for (auto it = out.metadata.begin(); it != out.metadata.end(); ++it)
                if (!again.metadata.contains(it.key()) || again.metadata[it.key()] != it.value())
                    if (!out.meta.extra.contains(it.key())) out.meta.extra[it.key()] = it.value(), added = true;
            if (!added) break;
        } catch (const std::exception&) {
            out.rebuilds_exactly = false;
            break;
        }
    }
    return out;
}

}  // namespace

TfliteFile parseTflite(const std::string& bytes, const std::string& fileName) { return TfliteReader(bytes, fileName).read(); }

TfliteFile readTflite(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw InputError(path + ": cannot read the file (no such file)");
    if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a folder, not a .tflite file");
    if (!S_ISREG(st.st_mode)) throw InputError(path + ": is not a regular file");
    if (st.st_size >= static_cast<off_t>(FLATBUFFERS_MAX_BUFFER_SIZE)) throw InputError(path + ": larger than a flatbuffer can be (2 GiB)");
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError(path + ": cannot read the file (permission denied?)");
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (f.bad()) throw InputError(path + ": cannot read the file");
    return parseTflite(bytes, path);
}

std::vector<std::vector<std::int8_t>> tfliteReferenceOutputs(const TfliteFile& f, const std::vector<std::int8_t>& nhwcInputs, int images, Int8Arithmetic arithmetic)
{
    const Shape3 in = f.net.input;
    const std::size_t per = static_cast<std::size_t>(in.elems());
    if (images < 0 || nhwcInputs.size() != per * static_cast<std::size_t>(images))
        throw InputError("int8 reference: " + std::to_string(nhwcInputs.size()) + " input bytes for " + std::to_string(images) + " images of " + std::to_string(per));
    const TrainingGraph g = lowerForward(f.net);
    QuantizedParams p = f.params;
    if (arithmetic != Int8Arithmetic::Tflite)   // what a code generator reading the file computes per channel
        for (const auto& [key, eff] : f.effective_scales) {
            std::vector<float> s;
            for (const double e : eff) s.push_back(static_cast<float>(e));
            p.set(key, float32Array(s, {static_cast<std::int64_t>(s.size())}));
        }
    const Int8Forward forward(g, p, arithmetic, arithmetic == Int8Arithmetic::Tflite ? &f.effective_scales : nullptr);
    const int last = forward.steps().back().out;
    const Shape3 o = f.net.layers.back().out;
    std::vector<std::vector<std::int8_t>> outputs;
    std::vector<std::int8_t> chw(per);
    for (int i = 0; i < images; ++i) {
        const std::int8_t* x = nhwcInputs.data() + per * static_cast<std::size_t>(i);
        for (int c = 0; c < in.c; ++c)
            for (int y = 0; y < in.h; ++y)
                for (int xx = 0; xx < in.w; ++xx)
                    chw[(static_cast<std::size_t>(c) * in.h + y) * in.w + xx] = x[(static_cast<std::size_t>(y) * in.w + xx) * in.c + c];
        const std::vector<std::int32_t> v = forward.runAll(chw)[static_cast<std::size_t>(last)];
        std::vector<std::int8_t> nhwc(v.size());
        for (int c = 0; c < o.c; ++c)
            for (int y = 0; y < o.h; ++y)
                for (int xx = 0; xx < o.w; ++xx)
                    nhwc[(static_cast<std::size_t>(y) * o.w + xx) * o.c + c] = static_cast<std::int8_t>(v[(static_cast<std::size_t>(c) * o.h + y) * o.w + xx]);
        outputs.push_back(std::move(nhwc));
    }
    return outputs;
}

}  // namespace tinyscope
