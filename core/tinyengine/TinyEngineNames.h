#pragma once
// The names a TinyEngine export may carry (issue 45). TinyEngine's training code generator pastes
// parameter names into genModel.h / genModel.c as C identifiers and tensor names into the generated
// code's comments and tables, verbatim: a name holding a newline and C code compiles, and a name
// can make the generated code `#include` a host file. So every way a name comes in (graph import,
// params pickle, scale.json, our own exporter) accepts only the grammar the generator can emit
// safely, the grammar of every file MIT's compiler writes (TINYENGINE_JSON_SPEC.md §3), and refuses
// anything else naming the key, with the value escaped and cut (docs/INPUT_LIMITS.md).
// Torch-free, Qt-free.
#include <cstddef>
#include <string>

namespace tinyscope {

// Longest name accepted (MIT's files: 36 bytes at most).
constexpr std::size_t kMaxTinyEngineName = 128;

// A parameter's name (graph JSON parameters, params pickle keys, scale.json keys): a C identifier,
// [A-Za-z_][A-Za-z0-9_]*, at most kMaxTinyEngineName bytes. "v9_conv_0_weight", "v0_x_scale".
bool isTinyEngineIdentifier(const std::string& name);

// An op's or a tensor's name, or a graph output's output_info: an identifier that may also hold
// '.', '@' and '-' after its first character. "out_nn.mcuconv2d@0", "greater_equal@109-constant",
// "fwd@output".
bool isTinyEngineLabel(const std::string& name);

// Empty when `name` is acceptable, else why not ("a newline at byte 7", "longer than 128 bytes").
// `identifier` chooses the grammar.
std::string tinyEngineNameProblem(const std::string& name, bool identifier);

// Empty when `name` is acceptable, else the refusal for a message: "'<escaped, cut name>': not a
// name TinyEngine's code generator can emit safely (<problem>; expected <grammar>, at most 128 bytes)".
std::string tinyEngineNameRefusal(const std::string& name, bool identifier);

// Throws InputError "<where>: <what> <refusal>" unless the name fits the grammar.
void requireTinyEngineName(const std::string& name, bool identifier, const std::string& where, const std::string& what);

}  // namespace tinyscope
