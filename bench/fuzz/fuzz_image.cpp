// libFuzzer target: arbitrary bytes as an image file (decoded, resized and normalised as the
// evaluator does) and as an IDX dataset (gzip or not; the first byte picks the labels' count).
#include "FuzzSupport.h"

#include "data/Image.h"
#include "data/ImageDataset.h"

#include <vector>

using namespace tinyscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    fuzz::expectOnlyInputErrors([&] {
        const Image img = decodeImage(bytes, "fuzz.png");
        std::vector<float> out(3 * 32 * 32);
        imageToTensor(img, 32, out.data());
    });
    fuzz::expectOnlyInputErrors([&] {
        const fuzz::MemoryFile images(bytes);
        const std::uint32_t n = size ? data[0] : 0;
        const std::string labels = std::string("\0\0\x08\x01\0\0\0", 7) + static_cast<char>(n) + std::string(n, '\1');
        const fuzz::MemoryFile labelFile(labels);
        const IdxDataset ds(images.path(), labelFile.path());
        for (std::size_t i = 0; i < ds.size() && i < 4; ++i) ds.image(i);
    });
    return 0;
}
