#include "predict/PredictorCard.h"

#include "Error.h"
#include "io/Text.h"

#include <cstdio>

namespace tinyscope {

std::string spaceFingerprint(const DesignSpace& s)
{
    Json j;
    j["n_classes"] = s.n_classes;
    j["resolutions"] = s.resolutions;
    Json widths = Json::array();
    for (const WidthSet& w : s.widths) widths.push_back({w.first_conv, w.block0, w.stages, w.feature_mix});
    j["widths"] = widths;
    j["ks"] = s.ks_list;
    j["e"] = s.expand_list;
    j["d"] = s.depth_list;
    Json stages = Json::array();
    for (const StageSpec& st : s.stages) stages.push_back({st.stride, st.base_depth, st.elastic_depth, st.se, st.max_blocks});
    j["stages"] = stages;
    const std::string text = j.dump();
    const std::uint64_t h = fnv1a64(text);
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

std::string featureName(const ArchEncoder& enc, int pos)
{
    const DesignSpace& s = enc.space();
    const int nr = static_cast<int>(s.resolutions.size()), nk = static_cast<int>(s.ks_list.size()),
              ne = static_cast<int>(s.expand_list.size());
    if (pos >= 0 && pos < nr) return "image_size=" + std::to_string(s.resolutions[static_cast<std::size_t>(pos)]);
    if (pos >= enc.widthOffset() && pos < enc.widthOffset() + s.numWidths()) return "wid=" + std::to_string(pos - enc.widthOffset());
    for (int b = 0; b < s.maxBlocks(); ++b) {
        if (pos >= enc.kernelOffset(b) && pos < enc.kernelOffset(b) + nk)
            return "ks[" + std::to_string(b) + "]=" + std::to_string(s.ks_list[static_cast<std::size_t>(pos - enc.kernelOffset(b))]);
        if (pos >= enc.expandOffset(b) && pos < enc.expandOffset(b) + ne)
            return "e[" + std::to_string(b) + "]=" + std::to_string(s.expand_list[static_cast<std::size_t>(pos - enc.expandOffset(b))]);
    }
    return "feature " + std::to_string(pos);
}

Json toJson(const PredictorCard& c)
{
    Json history = Json::array();
    for (const EpochRecord& e : c.history)
        history.push_back({{"epoch", e.epoch}, {"train_loss", e.train_loss}, {"validation", toJson(e.validation)},
                           {"seconds", e.seconds}});
    Json j{{"format", PredictorCard::kFormat},
           {"format_version", c.format_version},
           {"space", {{"name", c.space_name}, {"fingerprint", c.space_fingerprint}}},
           {"encoder_dims", c.encoder_dims},
           {"hidden", c.hidden},
           {"base_accuracy", c.base_accuracy},
           {"recipe", toJson(c.recipe)},
           {"data",
            {{"origin", c.data_origin},
             {"pairs", c.data_pairs},
             {"train_pairs", c.train_pairs},
             {"validation_pairs", c.validation_pairs},
             {"unseen_features", c.unseen_features}}},
           {"validation", toJson(c.validation)},
           {"history", history},
           {"training_seconds", c.training_seconds},
           {"validation_seconds", c.validation_seconds},
           {"weights", {{"file", c.weights_file}, {"bytes", c.weights_bytes}, {"crc32", c.weights_crc32}}},
           {"created_by", c.created_by}};
    if (!c.cpu.model.empty()) j["cpu"] = toJson(c.cpu);
    return j;
}

PredictorCard predictorCardFromJson(const Json& j, const std::string& source)
{
    JsonPath p(source, j);
    if (!j.is_object() || !j.contains("format") || j["format"] != PredictorCard::kFormat)
        p.fail(std::string("not a Tinyscope predictor card (expected \"format\": \"") + PredictorCard::kFormat + "\")");
    PredictorCard c;
    c.format_version = p["format_version"].asInt();
    if (c.format_version != 1) p["format_version"].fail("unsupported version " + std::to_string(c.format_version) + " (this build reads 1)");
    c.space_name = p["space"]["name"].asString();
    c.space_fingerprint = p["space"]["fingerprint"].asString();
    c.encoder_dims = p["encoder_dims"].asInt();
    c.hidden = p["hidden"].asIntList();
    if (c.hidden.empty()) p["hidden"].fail("needs at least one hidden layer");
    for (int h : c.hidden)
        if (h < 1 || h > 65536) p["hidden"].fail("layer width " + std::to_string(h) + " out of range 1..65536");
    if (c.encoder_dims < 1 || c.encoder_dims > 65536) p["encoder_dims"].fail("out of range: " + std::to_string(c.encoder_dims));
    c.base_accuracy = p["base_accuracy"].asDouble();
    c.recipe = predictorRecipeFromJson(p["recipe"]);
    c.recipe.validate();
    c.data_origin = p["data"]["origin"].asString();
    c.data_pairs = static_cast<std::size_t>(p["data"]["pairs"].asInt64());
    c.train_pairs = static_cast<std::size_t>(p["data"]["train_pairs"].asInt64());
    c.validation_pairs = static_cast<std::size_t>(p["data"]["validation_pairs"].asInt64());
    c.unseen_features = p["data"]["unseen_features"].asIntList();
    c.validation = predictionMetricsFromJson(p["validation"]);
    JsonPath h = p["history"];
    for (std::size_t i = 0; i < h.size(); ++i) {
        EpochRecord e;
        e.epoch = h[i]["epoch"].asInt();
        e.train_loss = h[i]["train_loss"].asDouble();
        e.validation = predictionMetricsFromJson(h[i]["validation"]);
        e.seconds = h[i]["seconds"].asDouble();
        c.history.push_back(e);
    }
    c.training_seconds = p["training_seconds"].asDouble();
    if (p.has("validation_seconds")) c.validation_seconds = p["validation_seconds"].asDouble();
    c.weights_file = p["weights"]["file"].asString();
    c.weights_bytes = p["weights"]["bytes"].asInt64();
    c.weights_crc32 = static_cast<std::uint32_t>(p["weights"]["crc32"].asInt64());
    if (p.has("created_by")) c.created_by = p["created_by"].asString();
    if (p.has("cpu")) c.cpu = cpuInfoFromJson(p["cpu"]);
    return c;
}

void requireCardMatchesSpace(const PredictorCard& card, const DesignSpace& space, const std::string& source)
{
    const std::string fp = spaceFingerprint(space);
    const int dims = ArchEncoder(space).dims();
    if (card.space_fingerprint != fp || card.encoder_dims != dims)
        throw InputError(source + ": this predictor was made for space '" + card.space_name + "' (fingerprint " +
                         card.space_fingerprint + ", " + std::to_string(card.encoder_dims) +
                         "-dim encoding), not for space '" + space.name + "' (fingerprint " + fp + ", " +
                         std::to_string(dims) + "-dim encoding); train one for this space with "
                         "`tinyscope train-predictor --space " + space.name + "`");
}

}  // namespace tinyscope
