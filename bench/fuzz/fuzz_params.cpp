// libFuzzer target: arbitrary bytes as a pickle and as a TinyEngine params pickle (numpy arrays in
// a dict), read as `tinyscope inspect --params` and `quantize --params` read it: every element
// read back as a number, and the params written again.
#include "FuzzSupport.h"

#include "io/Pickle.h"
#include "tinyengine/QuantizedParams.h"

using namespace tinyscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    fuzz::expectOnlyInputErrors([&] { readPickle(bytes, "fuzz.pkl"); });
    const fuzz::MemoryFile file(bytes);
    fuzz::expectOnlyInputErrors([&] {
        const QuantizedParams p = readParamsPickle(file.path());
        for (const auto& [name, a] : p.arrays)
            for (std::int64_t i = 0; i < a.numel() && i < 64; ++i) p.value(name, i);
        paramsPickleBytes(p);
    });
    return 0;
}
