#include "graph/TrainingGraph.h"

#include "Error.h"

namespace tinyscope {

const char* opTypeName(OpKind k)
{
    switch (k) {
    case OpKind::McuConv2d: return "nn.mcuconv2d";
    case OpKind::McuTruncate: return "nn.mcutruncate";
    case OpKind::McuAdd: return "nn.mcuadd";
    case OpKind::McuMean: return "mcumean";
    case OpKind::McuMultiply: return "nn.mcumultiply";
    case OpKind::Reshape: return "reshape";
    case OpKind::Cast: return "cast";
    case OpKind::LogSoftmax: return "nn.log_softmax";
    case OpKind::CrossEntropyWithLogits: return "nn.cross_entropy_with_logits";
    case OpKind::GreaterEqual: return "greater_equal";
    case OpKind::LessEqual: return "less_equal";
    case OpKind::Multiply: return "multiply";
    case OpKind::Where: return "where";
    case OpKind::Zeros: return "zeros";
    case OpKind::Ones: return "ones";
    case OpKind::Negative: return "negative";
    case OpKind::Exp: return "exp";
    case OpKind::Subtract: return "subtract";
    case OpKind::Divide: return "divide";
    case OpKind::Add: return "add";
    case OpKind::Sum: return "sum";
    case OpKind::Mean: return "mean";
    case OpKind::Tile: return "tile";
    case OpKind::Conv2d: return "nn.conv2d";
    case OpKind::Transpose: return "transpose";
    case OpKind::Conv2dTranspose: return "nn.conv2d_transpose";
    case OpKind::StridedSlice: return "strided_slice";
    }
    return "?";
}

const char* dtypeName(DType d)
{
    switch (d) {
    case DType::Int8: return "int8";
    case DType::Int32: return "int32";
    case DType::Float32: return "float32";
    case DType::Bool: return "bool";
    }
    return "?";
}

bool opKindFromName(const std::string& name, OpKind& kind)
{
    for (int k = 0; k < kOpKindCount; ++k)
        if (name == opTypeName(static_cast<OpKind>(k))) {
            kind = static_cast<OpKind>(k);
            return true;
        }
    return false;
}

bool dtypeFromName(const std::string& name, DType& dtype)
{
    for (DType d : {DType::Int8, DType::Int32, DType::Float32, DType::Bool})
        if (name == dtypeName(d)) {
            dtype = d;
            return true;
        }
    return false;
}

const char* opRoleName(OpRole r)
{
    switch (r) {
    case OpRole::Forward: return "forward";
    case OpRole::Loss: return "loss";
    case OpRole::Seed: return "seed";
    case OpRole::Mask: return "mask";
    case OpRole::Gradient: return "gradient";
    case OpRole::BiasGrad: return "bias_grad";
    case OpRole::WeightGrad: return "weight_grad";
    case OpRole::InputGrad: return "input_grad";
    case OpRole::Accumulate: return "accumulate";
    case OpRole::ZeroGrad: return "zero_grad";
    }
    return "?";
}

const char* autodiffModeName(AutodiffMode m) { return m == AutodiffMode::Correct ? "correct" : "reference"; }

AutodiffMode parseAutodiffMode(const std::string& s)
{
    if (s == "correct" || s == "faithful") return AutodiffMode::Correct;
    if (s == "reference") return AutodiffMode::Reference;
    throw InputError("autodiff mode '" + s + "' is not one of: correct, reference");
}

std::int64_t shapeElems(const TensorShape& s)
{
    std::int64_t n = 1;
    for (int d : s) n *= d;
    return n;
}

std::int64_t dtypeBytes(DType d)
{
    switch (d) {
    case DType::Int8: return 1;
    case DType::Bool: return 1;
    case DType::Int32: return 4;
    case DType::Float32: return 4;
    }
    return 4;
}

int TrainingGraph::findParameter(const std::string& name) const
{
    for (std::size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].kind == TensorKind::Parameter && tensors[i].name == name) return static_cast<int>(i);
    return -1;
}

std::unordered_map<std::string, int> TrainingGraph::parameterIndex() const
{
    std::unordered_map<std::string, int> index;
    for (std::size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].kind == TensorKind::Parameter) index.emplace(tensors[i].name, static_cast<int>(i));
    return index;
}

}  // namespace tinyscope
