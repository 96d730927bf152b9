#pragma once
// A frozen teacher's predictions stored once per (augmentation draw, training image) and reused
// for distillation, as TinyViT stores them: sparse, the k largest probabilities (16-bit fixed point, steps of
// 1/65535) and
// their class indices; the rest of the probability mass is spread evenly over the other classes
// when a target is rebuilt. With k = number of classes the targets are exact to 1.5e-5.
// The file is one atomic write: a JSON header line (what the cache was computed from) and the
// rows. See docs/SUPERNET_TRAINING.md, "Frozen teacher and logit cache".
#include "io/JsonFile.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

class TeacherLogitCache {
public:
    TeacherLogitCache(int classes, int topK, std::size_t images, int draws);

    int classes() const { return classes_; }
    int topK() const { return k_; }
    std::size_t images() const { return images_; }
    int draws() const { return draws_; }

    // Stores the top-k of one full probability row (`classes` values).
    void put(int draw, std::size_t image, const float* probabilities);
    // Dense soft targets, row after row (n × classes), for the given images of one draw.
    std::vector<float> targets(int draw, const std::vector<std::size_t>& images) const;
    bool filled(int draw, std::size_t image) const;

    // `header` says what the cache was computed from; load() returns false (and leaves the cache
    // untouched) when the file is absent or was computed from something else, and throws
    // InputError when it is truncated or corrupt.
    void save(const std::string& path, const Json& header) const;
    bool load(const std::string& path, const Json& header);

    std::size_t bytes() const { return values_.size() * sizeof(std::uint16_t) + classes_idx_.size(); }

private:
    std::size_t row(int draw, std::size_t image) const;
    int classes_, k_;
    std::size_t images_;
    int draws_;
    std::vector<std::uint16_t> values_;       // probability · 65535, rounded; k per row
    std::vector<std::uint8_t> classes_idx_;   // class indices, k per row
    std::vector<std::uint8_t> filled_;
};

}  // namespace tinyscope
