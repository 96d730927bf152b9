#pragma once
// What oneDNN — the library behind nn/onednn's inference engine, and LibTorch's own — runs with on
// this machine: the instruction set its CPU kernels dispatched to, its version and its threading
// runtime. Figures measured on different instruction sets are not comparable; every evaluation
// and benchmark says which one it used. Torch- and dnnl-free.
#include <string>

namespace tinyscope {

// oneDNN's effective CPU ISA as its own name ("avx2", "avx512_core_vnni", "avx512_core_bf16",
// "avx512_core_amx", ...); ONEDNN_MAX_CPU_ISA caps it.
std::string oneDnnIsa();
// Whether oneDNN runs bf16 on native instructions here: its ISA is avx512_core_bf16 (AVX-512 BF16)
// or avx512_core_amx (AMX).
bool oneDnnHasBf16();
// VNNI (AVX-512 VNNI, AVX-VNNI, or AMX): int8 dot products accumulated in int32 without saturation.
bool oneDnnHasVnni();
std::string oneDnnVersion();     // "2.6.3"
// The CPU threading runtime oneDNN was built with ("OpenMP" on Debian): what decides its threads.
std::string oneDnnThreading();

}  // namespace tinyscope
