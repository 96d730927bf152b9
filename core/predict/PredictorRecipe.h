#pragma once
// How an accuracy predictor is trained: the lab's recipe (MIT 6.5940 Lab 3: 10 epochs, Adam at
// 1e-3, batch 256, L1 loss, 40,000 / 10,000 split) and Tinyscope's default (see docs/SEARCH.md).
#include "io/JsonFile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

struct PredictorRecipe {
    std::string name = "custom";
    int epochs = 10;
    double learning_rate = 1e-3;
    std::string schedule = "constant";   // "constant" (the lab) or "cosine" (decay to 0 over all steps)
    int batch_size = 256;
    std::uint64_t seed = 0;              // initial weights, batch order and the data split
    double validation_fraction = 0.2;
    int ensemble = 1;                    // members averaged at prediction (each with seed + member)
    int threads = 2;                     // LibTorch intra-op threads while training

    static PredictorRecipe lab();
    static PredictorRecipe standard();                   // Tinyscope's default
    static PredictorRecipe named(const std::string& name);   // "lab" | "default"; InputError otherwise
    static std::vector<std::string> names();

    void validate() const;                               // InputError naming the bad option
};

Json toJson(const PredictorRecipe& r);
PredictorRecipe predictorRecipeFromJson(const JsonPath& p);

}  // namespace tinyscope
