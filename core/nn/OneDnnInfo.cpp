#include "nn/OneDnnInfo.h"

#include <dnnl.hpp>

namespace tinyscope {

std::string oneDnnIsa()
{
    using dnnl::cpu_isa;
    const cpu_isa isa = dnnl::get_effective_cpu_isa();
    switch (isa) {
    case cpu_isa::all: return "all";
    case cpu_isa::sse41: return "sse41";
    case cpu_isa::avx: return "avx";
    case cpu_isa::avx2: return "avx2";
    case cpu_isa::avx2_vnni: return "avx2_vnni";
    case cpu_isa::avx512_mic: return "avx512_mic";
    case cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case cpu_isa::avx512_core: return "avx512_core";
    case cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case cpu_isa::avx512_core_amx: return "avx512_core_amx";
    }
    return "isa 0x" + [](unsigned v) {
        const char* hex = "0123456789abcdef";
        std::string s;
        do s.insert(s.begin(), hex[v & 15u]); while (v >>= 4);
        return s;
    }(static_cast<unsigned>(isa));
}

bool oneDnnHasVnni()
{
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx2_vnni || isa == dnnl::cpu_isa::avx512_core_vnni || isa == dnnl::cpu_isa::avx512_core_bf16 ||
           isa == dnnl::cpu_isa::avx512_core_amx;
}

bool oneDnnHasBf16()
{
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

std::string oneDnnVersion()
{
    const dnnl_version_t* v = dnnl::version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

std::string oneDnnThreading()
{
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
    return "OpenMP";
#elif DNNL_CPU_RUNTIME == DNNL_RUNTIME_TBB
    return "TBB";
#elif DNNL_CPU_RUNTIME == DNNL_RUNTIME_SEQ
    return "sequential";
#else
    return "threadpool";
#endif
}

}  // namespace tinyscope
