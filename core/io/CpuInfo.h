#pragma once
// The processor a figure or an artefact was made on: its model name and the instruction-set
// extensions that decide which kernels the numeric libraries pick (OpenBLAS, oneDNN, ATen). Written
// into every card, because the same command can give other bits, or other times, on another CPU
// (docs/BENCHMARKS.md, docs/SEARCH.md "Reproducibility across CPUs").
#include "io/JsonFile.h"

#include <map>
#include <string>
#include <vector>

namespace tinyscope {

struct CpuInfo {
    std::string model;                           // /proc/cpuinfo "model name", e.g. "AMD EPYC"
    std::string signature;                       // x86: "family 26 model 2 stepping 1" (names the generation when the model name does not)
    std::string architecture;                    // "x86_64", "aarch64"
    std::vector<std::string> isa;                // the notable extensions present, e.g. avx2 fma avx512f amx_tile
    int logical_cpus = 0;
    std::map<std::string, std::string> kernels;  // kernel sets libraries chose, when known (openblas, onednn, aten)
};

// This machine (read once). `isa` keeps, in a fixed order, the x86 flags that change kernels
// (sse4_2 … avx512_bf16, amx_*); on other architectures every listed feature.
const CpuInfo& hostCpu();
// Picks the notable extensions out of a /proc/cpuinfo text (separate for tests).
CpuInfo parseCpuInfo(const std::string& procCpuinfo);

// "AMD EPYC (x86_64: sse4_2 avx avx2 fma avx512f …)"
std::string describe(const CpuInfo& cpu);

Json toJson(const CpuInfo& cpu);
CpuInfo cpuInfoFromJson(const JsonPath& p);

}  // namespace tinyscope
