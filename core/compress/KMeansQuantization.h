#pragma once
// k-means weight quantization as Lab 2 of MIT 6.5940 defines it (issue 50, docs/COMPRESSION.md):
// a codebook of 2^n centroids per tensor and an n-bit label per weight; the reconstructed tensor
// holds at most 2^n distinct values. Torch-free and Qt-free.
//
// The lab clusters with fast_pytorch_kmeans (random initial centroids, Lloyd's iterations). k-means
// depends on its start, so a particular clustering is not the specification; ours is deterministic:
// k-means++ seeding from a seeded 64-bit Mersenne Twister (std::mt19937_64, its draws turned into
// doubles by hand, so every platform gives the same centroids), then Lloyd's iterations until no
// label changes (at most `maxIterations`). What holds at the end, and what the tests check: at most
// 2^n distinct values, every weight labelled with its nearest centroid (ties: the lower index), and
// every non-empty cluster's centroid the mean of its weights. A cluster left empty keeps its centroid.
//
// Quantization-aware training (update_codebook): after an optimizer step each centroid becomes
// the mean of the float weights labelled with it; the labels are kept.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tinyscope {

struct Codebook {
    std::vector<float> centroids;   // 2^bits (fewer only when the tensor has fewer distinct values)
    std::vector<std::uint8_t> labels;   // one per weight
    int bits = 0;
    int iterations = 0;             // Lloyd's iterations run
    bool converged = false;         // no label changed in the last iteration
};

Codebook kmeansQuantize(const float* w, std::size_t n, int bits, std::uint64_t seed = 0, int maxIterations = 300);
// centroids[labels[i]] for every weight.
std::vector<float> reconstruct(const Codebook& c);
// update_codebook: each centroid the mean of the weights labelled with it (an empty one kept).
void updateCodebook(Codebook& c, const float* w, std::size_t n);
// The codebook's storage in bits (2^bits float32 centroids), reported beside the weights' n · bits.
std::int64_t codebookBits(const Codebook& c);

}  // namespace tinyscope
