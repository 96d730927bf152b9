#pragma once
// Which engine measures a subnet's top-1: LibTorch (the training path's own forwardNet) or oneDNN
// primitives built for the extracted subnet (nn/onednn, docs/ONEDNN.md; the default: faster, and
// equal to LibTorch within 1e-4 on the logits). A subnet oneDNN refuses falls back to LibTorch
// with a note in the result. Torch-free.
#include "Error.h"

#include <string>

namespace tinyscope {

enum class EvalEngine { LibTorch, OneDnn };

inline const char* evalEngineName(EvalEngine e) { return e == EvalEngine::OneDnn ? "onednn" : "libtorch"; }

// An engine's name as people write it ("oneDNN", "LibTorch"); another name as it is.
inline std::string evalEngineTitle(const std::string& name)
{
    return name == "onednn" ? "oneDNN" : name == "libtorch" ? "LibTorch" : name;
}

// "onednn" / "libtorch"; anything else is an InputError naming `where` (e.g. "--engine").
inline EvalEngine parseEvalEngine(const std::string& text, const std::string& where)
{
    if (text == "onednn") return EvalEngine::OneDnn;
    if (text == "libtorch") return EvalEngine::LibTorch;
    throw InputError(where + ": unknown engine '" + text + "' (onednn or libtorch)");
}

// The data type the engine computes in: fp32, or bf16 (oneDNN only, on a CPU with AVX-512 BF16 or
// AMX; bfloat16 activations and weights, f32 accumulation and logits).
enum class EvalDtype { Fp32, Bf16 };

inline const char* evalDtypeName(EvalDtype d) { return d == EvalDtype::Bf16 ? "bf16" : "fp32"; }

inline EvalDtype parseEvalDtype(const std::string& text, const std::string& where)
{
    if (text == "fp32") return EvalDtype::Fp32;
    if (text == "bf16") return EvalDtype::Bf16;
    throw InputError(where + ": unknown data type '" + text + "' (fp32 or bf16)");
}

// InputError (one line, naming the missing instruction set) unless `engine` can compute in `dtype`
// here (defined in Evaluator.cpp).
void requireEvalDtype(EvalEngine engine, EvalDtype dtype);

// --dtype of the commands that can also measure the deployed int8 top-1 (eval, search / predict
// --measure, make-accdata): "fp32", "bf16" or "int8" (then `int8` is set and the float dtype is
// Fp32). The int8 measurement runs on oneDNN's int8 plans only: InputError with another engine.
inline EvalDtype parseMeasuredDtype(const std::string& text, const std::string& where, EvalEngine engine, bool& int8)
{
    int8 = text == "int8";
    if (int8) {
        if (engine != EvalEngine::OneDnn) throw InputError(where + " int8 runs on oneDNN's int8 plans (--engine onednn)");
        return EvalDtype::Fp32;
    }
    if (text != "fp32" && text != "bf16") throw InputError(where + ": unknown data type '" + text + "' (fp32, bf16 or int8)");
    return parseEvalDtype(text, where);
}

}  // namespace tinyscope
