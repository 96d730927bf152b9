#include "predict/PredictorRecipe.h"

#include "Error.h"

#include <cmath>

namespace tinyscope {

PredictorRecipe PredictorRecipe::lab()
{
    PredictorRecipe r;
    r.name = "lab";
    return r;
}

PredictorRecipe PredictorRecipe::standard()
{
    PredictorRecipe r;
    r.name = "default";
    r.schedule = "cosine";
    r.learning_rate = 2e-3;
    r.batch_size = 128;
    return r;
}

std::vector<std::string> PredictorRecipe::names() { return {"default", "lab"}; }

PredictorRecipe PredictorRecipe::named(const std::string& name)
{
    if (name == "lab") return lab();
    if (name == "default") return standard();
    throw InputError("unknown predictor recipe '" + name + "' (known: default, lab)");
}

void PredictorRecipe::validate() const
{
    auto bad = [](const std::string& what) { throw InputError("predictor recipe: " + what); };
    if (epochs < 1 || epochs > 100000) bad("epochs must be in 1..100000, got " + std::to_string(epochs));
    if (!(learning_rate > 0 && learning_rate < 10)) bad("learning rate must be in (0, 10), got " + std::to_string(learning_rate));
    if (schedule != "constant" && schedule != "cosine") bad("schedule must be constant or cosine, got '" + schedule + "'");
    if (batch_size < 1 || batch_size > 1000000) bad("batch size must be in 1..1000000, got " + std::to_string(batch_size));
    if (!(validation_fraction >= 0 && validation_fraction < 1))
        bad("validation fraction must be in [0, 1), got " + std::to_string(validation_fraction));
    if (ensemble < 1 || ensemble > 64) bad("ensemble must be in 1..64, got " + std::to_string(ensemble));
    if (threads < 1 || threads > 256) bad("threads must be in 1..256, got " + std::to_string(threads));
}

Json toJson(const PredictorRecipe& r)
{
    return Json{{"name", r.name},
                {"epochs", r.epochs},
                {"learning_rate", r.learning_rate},
                {"schedule", r.schedule},
                {"batch_size", r.batch_size},
                {"seed", r.seed},
                {"validation_fraction", r.validation_fraction},
                {"ensemble", r.ensemble},
                {"threads", r.threads},
                {"loss", "l1"},
                {"optimizer", "adam"}};
}

PredictorRecipe predictorRecipeFromJson(const JsonPath& p)
{
    PredictorRecipe r;
    r.name = p["name"].asString();
    r.epochs = p["epochs"].asInt();
    r.learning_rate = p["learning_rate"].asDouble();
    r.schedule = p["schedule"].asString();
    r.batch_size = p["batch_size"].asInt();
    r.seed = static_cast<std::uint64_t>(p["seed"].asInt64());
    r.validation_fraction = p["validation_fraction"].asDouble();
    r.ensemble = p["ensemble"].asInt();
    r.threads = p["threads"].asInt();
    return r;
}

}  // namespace tinyscope
