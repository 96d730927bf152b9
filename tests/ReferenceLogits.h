#pragma once
// ../shared's lab reference for the supernet forward (test_supernet, test_onednn_engine): the
// logits file and its 1×3×96×96 float32 input. Callers REQUIRE_SHARED() first.
#include "TestSupport.h"
#include "io/AtomicFile.h"
#include "io/JsonFile.h"

#include <ATen/ATen.h>
#include <QtTest>

#include <cstring>

namespace tinyscope::test {

inline Json referenceLogits() { return readJsonFile(sharedPath("reference/mcunet-vww/logits_reference.json")); }

// Undefined (and the test failed) when the file is not 1×3×96×96 float32.
inline at::Tensor referenceLogitsInput()
{
    const std::string raw = readFileBytes(sharedPath("reference/mcunet-vww/logits_input_seed1_1x3x96x96_f32le.bin"));
    at::Tensor x = at::empty({1, 3, 96, 96}, at::kFloat);
    if (raw.size() != static_cast<std::size_t>(x.numel()) * sizeof(float)) {
        QTest::qFail(("the reference input has " + std::to_string(raw.size()) + " bytes, not 1x3x96x96 float32").c_str(), __FILE__, __LINE__);
        return {};
    }
    std::memcpy(x.data_ptr<float>(), raw.data(), raw.size());
    return x;
}

}  // namespace tinyscope::test
