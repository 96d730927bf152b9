#include "nn/finetune/ContributionAnalysis.h"

#include "Error.h"
#include "graph/SchemeEdit.h"

#include <filesystem>

namespace tinyscope {

FineTuneRecipe ContributionOptions::shortRecipe(const FineTuneRecipe& main)
{
    FineTuneRecipe r = main;
    r.epochs = 1;
    r.train_images = 2000;
    r.test_images = 1000;
    r.crop_scale_min = 1;
    r.jitter = 0;
    r.flip = false;
    r.evaluate_initial = false;
    return r;
}

Json ContributionResult::toJson() const
{
    Json runsJ = Json::array();
    for (const ContributionRun& r : runs)
        runsJ.push_back({{"what", r.what}, {"scheme", r.scheme}, {"top1", r.top1}, {"gain", r.gain}, {"seconds", r.seconds}});
    Json tails = Json::object(), weights = Json::array();
    for (const auto& [k, g] : contributions.bias_tail) tails[std::to_string(k)] = g;
    for (const auto& [key, g] : contributions.weight) weights.push_back({{"conv", key.first}, {"ratio", key.second}, {"gain", g}});
    return Json{{"classifier_top1", classifier_top1}, {"reference_tail", reference_tail}, {"reference_top1", reference_top1},
                {"bias_tail_gain", tails},        {"weight_gain", weights},            {"runs", runsJ}};
}

ContributionResult analyseContributions(const ContributionOptions& o, const JobControl& job,
                                        const std::function<void(const ContributionRun&, std::size_t, std::size_t)>& onRun)
{
    if (o.out.empty()) throw InputError("the contribution analysis needs an output folder (its runs are resumable)");
    FineTuneRequest base = o.base;
    if (!base.prepared) base.prepared = std::make_shared<const PreparedModel>(prepareModel(base.model, base.quantize, job));
    const Network& net = base.prepared->network;
    const int nb = net.numBackboneConvs();

    std::vector<int> tails = o.tails;
    if (tails.empty()) {
        for (int k = 4; k < nb; k += 4) tails.push_back(k);
        tails.push_back(nb);
    }
    const int reference = std::min(o.window, nb);
    struct Planned {
        std::string what, dir;
        SparseScheme scheme;
        int tail = -1;            // bias-tail runs
        int conv = -1;            // weight runs
        double ratio = 0;
    };
    std::vector<Planned> plan;
    plan.push_back({"classifier", "classifier", SparseScheme::biasOnly(0)});
    for (int k : tails) plan.push_back({"bias-only:" + std::to_string(k), "bias-" + std::to_string(k), SparseScheme::biasOnly(k), k});
    if (std::find(tails.begin(), tails.end(), reference) == tails.end())
        plan.push_back({"bias-only:" + std::to_string(reference), "bias-" + std::to_string(reference), SparseScheme::biasOnly(reference), reference});
    for (int i = nb - reference; i < nb; ++i) {
        const Layer& c = net.conv(i);
        if (c.depthwise()) continue;   // TinyEngine's code generator cannot update depthwise weights
        for (double r : o.ratios) {
            if (!ratioSelectsChannels(c, r)) continue;
            SparseScheme s = SparseScheme::biasOnly(reference);
            s.manual_weight_idx = {i};
            s.weight_update_ratio = {r};
            plan.push_back({"weight " + std::to_string(i) + " @ " + formatRatio(r),
                            "weight-" + std::to_string(i) + "-" + std::to_string(static_cast<int>(r * 8)) + "of8", s, -1, i, r});
        }
    }

    ContributionResult res;
    res.reference_tail = reference;
    std::map<std::string, double> top1;
    for (std::size_t n = 0; n < plan.size(); ++n) {
        job.check();
        const Planned& p = plan[n];
        FineTuneRequest rq = base;
        rq.out = o.out + "/" + p.dir;
        std::filesystem::create_directories(rq.out);
        rq.scheme = p.scheme;
        rq.scheme_name = rq.out + "/scheme.json";   // the run's scheme, kept as a file beside its checkpoint
        p.scheme.saveFile(rq.scheme_name);
        JobControl inner = job;
        inner.progress = [&](std::size_t done, std::size_t total, const std::string& stage) {
            job.report(done, total, p.what + " (" + std::to_string(n + 1) + "/" + std::to_string(plan.size()) + "): " + stage);
        };
        const FineTuneResult r = fineTune(rq, inner);
        ContributionRun run{p.what, rq.scheme_name, r.final_top1, 0, r.seconds};
        top1[p.what] = r.final_top1;
        if (p.what == "classifier") res.classifier_top1 = r.final_top1;
        if (p.tail == reference) res.reference_top1 = r.final_top1;
        if (p.tail > 0) {
            run.gain = r.final_top1 - res.classifier_top1;
            if (std::find(tails.begin(), tails.end(), p.tail) != tails.end()) res.contributions.bias_tail[p.tail] = run.gain;
        }
        if (p.conv >= 0) {
            run.gain = r.final_top1 - res.reference_top1;
            res.contributions.weight[{p.conv, p.ratio}] = run.gain;
        }
        res.runs.push_back(run);
        if (onRun) onRun(run, n + 1, plan.size());
    }
    return res;
}

}  // namespace tinyscope
