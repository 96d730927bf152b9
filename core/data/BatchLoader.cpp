#include "data/BatchLoader.h"

#include "Error.h"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace tinyscope {

Batch loadBatch(const ImageDataset& data, const std::vector<std::size_t>& items, int resolution,
                const Normalization& norm, int threads, const ImageAugment& augment)
{
    const std::size_t plane = 3 * static_cast<std::size_t>(resolution) * static_cast<std::size_t>(resolution);
    std::vector<float> pixels(items.size() * plane);
    std::vector<char> ok(items.size(), 0);
    std::vector<std::string> why(items.size());
    std::atomic<std::size_t> next{0};
    // Any other failure (out of memory, a reader's bug) stops every worker and is rethrown on the
    // caller's thread after all have joined: an exception must never leave a std::thread.
    std::exception_ptr failure;
    std::mutex failureMutex;
    auto work = [&]() {
        for (std::size_t i = next++; i < items.size(); i = next++) {
            try {
                Image img = data.image(items[i]);
                if (augment) img = augment(img, i);
                imageToTensor(img, resolution, &pixels[i * plane], norm);
                ok[i] = 1;
            } catch (const InputError& e) {
                why[i] = e.what();
            } catch (...) {
                std::lock_guard<std::mutex> lock(failureMutex);
                if (!failure) failure = std::current_exception();
                next = items.size();
            }
        }
    };
    const int n = threads < 1 ? 1 : threads;
    if (n == 1 || items.size() < 8) {
        work();
    } else {
        std::vector<std::thread> pool;
        try {
            for (int t = 0; t < n; ++t) pool.emplace_back(work);
        } catch (...) {   // a thread could not start: the ones that did finish the work
            if (pool.empty()) work();
        }
        for (auto& t : pool) t.join();
    }
    if (failure) std::rethrow_exception(failure);
    Batch b;
    b.resolution = resolution;
    b.pixels.reserve(pixels.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (!ok[i]) {
            b.skipped.emplace_back(data.itemName(items[i]), why[i]);
            continue;
        }
        b.pixels.insert(b.pixels.end(), pixels.begin() + static_cast<std::ptrdiff_t>(i * plane),
                        pixels.begin() + static_cast<std::ptrdiff_t>((i + 1) * plane));
        b.labels.push_back(data.label(items[i]));
        b.items.push_back(items[i]);
    }
    return b;
}

}  // namespace tinyscope
