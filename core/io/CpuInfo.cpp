#include "io/CpuInfo.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <sys/utsname.h>
#include <thread>

namespace tinyscope {

namespace {

// x86 extensions that select different BLAS / oneDNN / ATen kernels, oldest first.
const char* const kX86Notable[] = {"sse2", "ssse3", "sse4_1", "sse4_2", "avx", "f16c", "fma", "avx2", "avx_vnni", "avx512f",
                                   "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16",
                                   "amx_tile", "amx_bf16", "amx_int8"};

std::string trimBlanks(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

CpuInfo parseCpuInfo(const std::string& text)
{
    CpuInfo cpu;
    std::istringstream in(text);
    std::string line, flags, features, family, model, stepping;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = trimBlanks(line.substr(0, colon)), value = trimBlanks(line.substr(colon + 1));
        if (key == "processor") ++cpu.logical_cpus;
        else if (key == "model name" && cpu.model.empty()) cpu.model = value;
        else if (key == "flags" && flags.empty()) flags = value;
        else if (key == "cpu family" && family.empty()) family = value;
        else if (key == "model" && model.empty()) model = value;
        else if (key == "stepping" && stepping.empty()) stepping = value;
        else if (key == "Features" && features.empty()) features = value;
    }
    if (!flags.empty()) {
        std::istringstream f(flags);
        std::vector<std::string> present;
        for (std::string w; f >> w;) present.push_back(w);
        for (const char* name : kX86Notable)
            if (std::find(present.begin(), present.end(), name) != present.end()) cpu.isa.push_back(name);
    } else {
        std::istringstream f(features);
        for (std::string w; f >> w;) cpu.isa.push_back(w);
    }
    if (cpu.model.empty()) cpu.model = "unknown";
    if (!family.empty()) cpu.signature = "family " + family + " model " + model + " stepping " + stepping;
    return cpu;
}

const CpuInfo& hostCpu()
{
    static const CpuInfo cpu = [] {
        std::ifstream f("/proc/cpuinfo");
        std::stringstream text;
        text << f.rdbuf();
        CpuInfo c = parseCpuInfo(text.str());
        if (c.logical_cpus == 0) c.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
        utsname u{};
        if (uname(&u) == 0) c.architecture = u.machine;
        return c;
    }();
    return cpu;
}

std::string describe(const CpuInfo& cpu)
{
    std::string s = cpu.model + (cpu.signature.empty() ? "" : ", " + cpu.signature) + " (" +
                    (cpu.architecture.empty() ? std::string("?") : cpu.architecture) + ":";
    for (const std::string& f : cpu.isa) s += " " + f;
    return s + ")";
}

Json toJson(const CpuInfo& cpu)
{
    Json j{{"model", cpu.model}, {"architecture", cpu.architecture}, {"isa", cpu.isa}, {"logical_cpus", cpu.logical_cpus}};
    if (!cpu.signature.empty()) j["signature"] = cpu.signature;
    if (!cpu.kernels.empty()) j["kernels"] = cpu.kernels;
    return j;
}

CpuInfo cpuInfoFromJson(const JsonPath& p)
{
    CpuInfo c;
    c.model = p["model"].asString();
    if (p.has("architecture")) c.architecture = p["architecture"].asString();
    if (p.has("signature")) c.signature = p["signature"].asString();
    JsonPath isa = p["isa"];
    for (std::size_t i = 0; i < isa.size(); ++i) c.isa.push_back(isa[i].asString());
    if (p.has("logical_cpus")) c.logical_cpus = p["logical_cpus"].asInt();
    if (p.has("kernels")) {
        JsonPath k = p["kernels"];
        if (!k.node().is_object()) k.fail("expected an object of strings");
        for (const auto& item : k.node().items()) c.kernels[item.key()] = k[item.key().c_str()].asString();
    }
    return c;
}

}  // namespace tinyscope
