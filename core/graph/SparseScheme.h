#pragma once
// A sparse-update scheme with tiny-training's keys (algorithm configs/default.yaml →
// backward_config, compilation/mcu_ir_gen.py): the biases of the last `n_bias_update` backbone
// convs are updated, the weights of the convs in `manual_weight_idx` with the input-channel
// ratio in `weight_update_ratio`; the classifier is always updated (bias and full weight).
// Conv index = position among all convs in module order, 0 = stem, classifier excluded.
//
// Files: JSON or YAML, the keys at the top level or under `backward_config`. Lists may be
// JSON/YAML lists or tiny-training's dash strings ("23-24-27", "0-0.25-0.5"); ratios may be
// numbers or fractions ("1/8"); n_bias_update / n_weight_update may be "all". JSON is written
// with lists (the compiler's form), YAML with dash strings (what the algorithm's parser reads).
#include "io/JsonFile.h"

#include <string>
#include <vector>

namespace tinyscope {

struct Network;

// What one conv updates under a scheme.
struct ConvUpdate {
    bool bias = false;
    double ratio = 0.0;     // weight_update_ratio (0: weight frozen)
    int k = 0;              // updated input channels: int(ratio·C_in) as tiny-training's algorithm and
                            // analytic model count them (depthwise: channels)
    int k_compiler = 0;     // round-half-even(ratio·C_in) as the reference compiler slices
    bool weight() const { return k > 0; }
};

struct ResolvedScheme {
    std::vector<ConvUpdate> convs;   // one per conv index; the last is the classifier
    int n_bias_update = 0;
    int first_updated = -1;          // smallest updated conv index (back-propagation stops there)

    const ConvUpdate& conv(int index) const { return convs[static_cast<std::size_t>(index)]; }
    int numConvs() const { return static_cast<int>(convs.size()); }
    bool anyKDiffersFromCompiler() const;
};

struct SparseScheme {
    int n_bias_update = 0;                 // -1: "all"
    std::vector<int> manual_weight_idx;
    std::vector<double> weight_update_ratio;
    int n_weight_update = 0;               // used when manual_weight_idx is empty; -1: "all"
    std::string weight_select_criteria = "magnitude+";
    bool pw1_weight_only = false;

    static SparseScheme fromJson(const Json& j, const std::string& source);
    static SparseScheme loadFile(const std::string& path);   // .json, .yaml or .yml
    Json toJson() const;                                      // {"backward_config": {...}} with lists
    std::string toYaml() const;                               // backward_config: with dash strings
    void saveFile(const std::string& path) const;             // by extension, atomically

    // Validates against `net` (messages name `source` and the offending entry) and resolves
    // "all", n_weight_update and pw1_weight_only into per-conv updates.
    ResolvedScheme resolve(const Network& net, const std::string& source = "scheme") const;

    // Patterns: biases of the last n backbone convs; the last k convs fully (bias + weight,
    // the README's "last k layers"); everything; nothing but the classifier.
    static SparseScheme biasOnly(int n);
    static SparseScheme lastLayers(const Network& net, int k);
    static SparseScheme full(const Network& net);

    bool operator==(const SparseScheme& o) const;
};

// "0.125", "1/8", "0", "1" -> value; throws InputError naming `what`.
double parseRatio(const std::string& text, const std::string& what);
std::string formatRatio(double r);   // 0.125 -> "1/8"
// The ratios TinyEngine's compiler and tiny-training accept: 0, 1/8, 1/4, 1/2, 1.
bool isAllowedRatio(double r);
// Input channels of conv `c` a weight update with `ratio` touches: int(r·C_in) as tiny-training
// counts them, or round-half-even(r·C_in) as the reference compiler slices (`compilerRounding`);
// grouped convs that are not depthwise: all of them.
struct Layer;
int updatedChannels(const Layer& c, double ratio, bool compilerRounding = false);

}  // namespace tinyscope
