// libFuzzer target: arbitrary bytes as a checkpoint (zip + pickle + storages) and as a bare
// pickle. Anything but InputError (a crash, a hang, a sanitizer report, another exception type)
// is a finding. Built by bench/fuzz/CMakeLists.txt with clang; see docs/EVALUATOR.md.
#include "Error.h"
#include "io/Pickle.h"
#include "nn/supernet/Checkpoint.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        tinyscope::readPickle(bytes, "fuzz.pkl");
    } catch (const tinyscope::InputError&) {
    }
    try {
        tinyscope::readCheckpointBytes(bytes, "fuzz.pth");
    } catch (const tinyscope::InputError&) {
    }
    return 0;
}
