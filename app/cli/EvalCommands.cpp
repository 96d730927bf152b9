// tinyscope forward | eval | classify  (the supernet evaluator)
#include "cli/Cli.h"
#include "cli/CliArgs.h"
#include "cli/EvaluationArgs.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/JsonFile.h"
#include "cost/CostModel.h"
#include "data/ImageDataset.h"
#include "io/DataPaths.h"
#include "io/Text.h"
#include "nn/accuracy/EvaluationJob.h"
#include "nn/measure/Evaluator.h"
#include "nn/quantize/Int8Measurement.h"
#include "nn/supernet/Supernet.h"
#include "space/ArchSampler.h"
#include "nn/TorchRuntime.h"
#include "space/SpacePresets.h"
#include "workspace/CalibrationData.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <unistd.h>

namespace tinyscope::cli {

namespace {

int cmdForward(const Args& argv)
{
    CliArgs a(argv, {"supernet", "config", "input", "space", "threads"}, {"json", "help"});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope forward --supernet CKPT --config CFG.json --input FILE [--space NAME|FILE] [--threads T] [--json]\n"
                     "  runs the extracted subnet (eval mode, no BN re-calibration) on FILE, a raw little-endian\n"
                     "  float32 NCHW tensor of shape 1x3xRxR (R = the config's image_size), and prints the logits\n"
                     "  --threads: LibTorch's threads (default 1)\n";
        return 0;
    }
    for (const char* req : {"supernet", "config", "input"})
        if (!a.has(req)) throw InputError(std::string("--") + req + " is required");
    setTorchThreads(a.intValue("threads", 1, 1, kMaxThreads));
    DesignSpace space = loadSpace(a.value("space", defaultSpaceName()));
    SubnetConfig config = SubnetConfig::loadFile(a.value("config"), space);
    const std::string path = a.value("input");
    std::string raw = readFileBytes(path);
    const std::int64_t r = config.image_size;
    const std::size_t want = static_cast<std::size_t>(3 * r * r) * sizeof(float);
    if (raw.size() != want)
        throw InputError(path + ": holds " + std::to_string(raw.size()) + " bytes; a 1x3x" + std::to_string(r) + "x" +
                         std::to_string(r) + " float32 tensor needs " + std::to_string(want));
    at::Tensor x = at::empty({1, 3, r, r}, at::kFloat);
    std::memcpy(x.data_ptr<float>(), raw.data(), want);

    Supernet supernet = Supernet::load(space, a.value("supernet"));
    Subnet subnet = supernet.extract(config);
    at::Tensor logits = subnet.forward(x).contiguous();
    std::vector<double> out(static_cast<std::size_t>(logits.numel()));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = logits.data_ptr<float>()[i];
    if (a.flag("json")) {
        std::cout << Json{{"logits", out}}.dump() << "\n";
    } else {
        for (double v : out) std::cout << v << "\n";
    }
    return 0;
}

Json evalJson(const EvalResult& r, const std::vector<std::string>& classNames)
{
    Json skipped = Json::array();
    for (const auto& s : r.skipped_examples) skipped.push_back({{"item", s.first}, {"reason", s.second}});
    Json perClass = Json::array(), confusion = Json::array();
    for (int c = 0; c < r.classes; ++c) {
        const std::size_t i = static_cast<std::size_t>(c);
        perClass.push_back({{"class", className(classNames, c)},
                            {"images", r.class_images[i]},
                            {"correct", r.class_correct[i]},
                            {"top1", r.classTop1(c)}});
        confusion.push_back(std::vector<std::size_t>(r.confusion.begin() + c * r.classes, r.confusion.begin() + (c + 1) * r.classes));
    }
    return {{"top1", r.top1},          {"images", r.images},
            {"correct", r.correct},    {"seconds", r.seconds},
            {"images_per_second", r.images_per_second}, {"skipped", r.skipped},
            {"skipped_examples", skipped}, {"calibration_images", r.calibration_images},
            {"calibration_engine", r.calibration_engine.empty() ? Json(nullptr) : Json(r.calibration_engine)},
            {"calibration_note", r.calibration_note.empty() ? Json(nullptr) : Json(r.calibration_note)},
            {"per_class", perClass}, {"confusion", confusion},   // confusion[true][predicted]
            {"engine", r.engine}, {"dtype", r.dtype}, {"isa", r.isa},
            {"engine_note", r.engine_note.empty() ? Json(nullptr) : Json(r.engine_note)}};
}

int cmdEval(const Args& argv)
{
    CliArgs a(argv, kEvaluationValued, kEvaluationFlags);
    if (a.flag("help")) {
        std::cout << "usage: tinyscope eval [--supernet CKPT --space NAME|FILE] [--config CFG.json|min|max] [--resolution R]\n"
                     "                      [--data DATASET] [--split 0|1] [--images N] [--calib-data DATASET] [--calib-images N]\n"
                     "                      [--calib-batch B] [--seed S] [--no-calib | --lab-calib] [--batch B] [--threads T]\n"
                     "                      [--engine onednn|libtorch]\n"
                     "                      [--dtype fp32|bf16|int8 [--int8-calib-images N]] [--json]\n"
                     "  DATASET: a folder of class sub-folders, a folder with IDX files, or fashion-mnist:test|holdout|fit|train.\n"
                     "  Defaults: the shipped Fashion-MNIST supernet, its largest subnet, BN re-calibrated on 2,000\n"
                     "  fashion-mnist:holdout images, top-1 on fashion-mnist:test.\n"
                     "  --calib-data: images of the space's task (its number of classes, colour, at least half its smallest\n"
                     "  input size; others are refused); default the space's own (fashion-mnist:holdout for the Fashion-MNIST\n"
                     "  spaces; mcunet-vww has none: give it, or --no-calib to keep the checkpoint's BatchNorm statistics).\n"
                     "  --resolution R: the config at input resolution R (one of the space's). --calib-images / --calib-batch /\n"
                     "  --seed: how many calibration images (default 2,000), in batches of B, drawn with seed S (default 0).\n"
                     "  --lab-calib reproduces the lab's swapped calib_bn arguments (128x128, batch = image size).\n"
                     "  --engine: oneDNN primitives (default; a subnet oneDNN refuses is measured by LibTorch, with a\n"
                     "  note) or LibTorch's forward (docs/ONEDNN.md); BN re-calibration runs on the same engine. The\n"
                     "  result says which engine, data type and instruction set measured it. --dtype bf16 (oneDNN only) needs AVX-512 BF16 or AMX.\n"
                     "  --dtype int8: the deployed top-1 — our PTQ calibrated on --int8-calib-images (200) images of\n"
                     "  --calib-data, then Int8Forward's exact arithmetic on oneDNN's int8 plans (as make-accdata --dtype int8).\n";
        return 0;
    }
    // The request the GUI's evaluation box builds, run by the same core job (nn/accuracy/EvaluationJob).
    const EvaluationRequest rq = evaluationFromArgs(a);
    const bool tty = isatty(2);
    JobControl job;
    job.progress = [&](std::size_t done, std::size_t total, const std::string& stage) {
        if (tty) std::fprintf(stderr, "\r%s %zu/%zu   ", stage.c_str(), done, total);
    };
    const EvalResult r = runEvaluation(rq, job);
    const int threads = torchThreads();   // what runEvaluation ran on
    const SubnetConfig& config = rq.config;
    if (tty) std::fprintf(stderr, "\r%40s\r", "");
    if (!r.calibration_note.empty()) std::fprintf(stderr, "note: %s\n", r.calibration_note.c_str());
    if (!r.engine_note.empty()) std::fprintf(stderr, "note: %s\n", r.engine_note.c_str());
    CostSummary cost = CostModel(rq.space).summary(config);
    if (a.flag("json")) {
        Json j = evalJson(r, rq.space.class_names);
        j["config"] = config.toJson();
        j["supernet"] = rq.supernet;
        j["data"] = r.data_source;
        j["threads"] = threads;
        j["cost"] = toJson(cost);
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::printf("top-1       %.2f %%  (%zu of %zu images)\n", r.top1, r.correct, r.images);
    std::printf("speed       %.1f images/s on %d thread(s), %.2f s\n", r.images_per_second, threads, r.seconds);
    std::printf("engine      %s %s, %s\n", r.engine.c_str(), r.dtype.c_str(), r.isa.c_str());
    for (int c = 0; c < r.classes; ++c) {
        const std::size_t i = static_cast<std::size_t>(c);
        std::printf("%s%6.2f %%  %s (%zu images)\n", c == 0 ? "per class   " : "            ", r.classTop1(c), className(rq.space.class_names, c).c_str(),
                    r.class_images[i]);
    }
    std::printf("BN          %s\n", r.calibration_images ? ("re-calibrated on " + std::to_string(r.calibration_images) + " images (" + r.calibration_engine + ")").c_str()
                                                       : "running statistics of the checkpoint");
    if (r.skipped) {
        std::printf("skipped     %zu unreadable images, e.g.\n", r.skipped);
        for (const auto& s : r.skipped_examples) std::printf("            %s\n", s.second.c_str());
    }
    std::printf("cost        %.3f M MACs, %.1f KB peak SRAM, %s params, %.1f KB flash\n", cost.millionMacs(), cost.peakKB(),
                groupThousands(cost.params).c_str(), cost.flashKB());
    return 0;
}

int cmdClassify(const Args& argv)
{
    CliArgs a(argv, {"supernet", "space", "config", "resolution", "top", "calib-data", "calib-images"}, {"json", "help", "no-calib"});
    if (a.flag("help") || a.positionals().size() != 1) {
        std::cout << "usage: tinyscope classify IMAGE [--supernet CKPT --space NAME|FILE] [--config CFG|min|max] [--resolution R]\n"
                     "                          [--calib-data DATASET] [--calib-images N] [--no-calib] [--top K] [--json]\n"
                     "  BatchNorm re-calibrated on --calib-images (default 500) of --calib-data (default the space's own; without\n"
                     "  any, the checkpoint's statistics, with a note), or --no-calib; --resolution R as eval's.\n";
        return a.flag("help") ? 0 : 2;
    }
    // Every number first, so that a bad one is refused before anything is loaded.
    const long long calibImages = a.int64Value("calib-images", 500, 1, kMaxImages);
    const std::size_t top = static_cast<std::size_t>(a.intValue("top", 5, 1, 1'000'000));
    // The request the GUI's "Classify image" builds, run by the same core job.
    const SupernetChoice sc = chooseSupernet(a);
    EvaluationRequest rq;
    rq.supernet = sc.path;
    rq.space = sc.space;
    rq.config = chooseConfig(a, sc.space);
    rq.calibrate = !a.flag("no-calib");
    rq.calib_data = a.value("calib-data");
    rq.calib_words = {"--calib-data DATASET", "--no-calib"};
    rq.calibration.images = static_cast<std::size_t>(calibImages);
    rq.threads = 1;
    const Classification c = runClassification(rq, a.positionals()[0]);
    if (!c.calibration_note.empty()) std::fprintf(stderr, "note: %s\n", c.calibration_note.c_str());
    const std::vector<ClassScore>& scores = c.scores;
    const std::size_t k = std::min(scores.size(), top);
    if (a.flag("json")) {
        Json out = Json::array();
        for (std::size_t i = 0; i < k; ++i) out.push_back({{"class", scores[i].name}, {"index", scores[i].index}, {"probability", scores[i].probability}});
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    for (std::size_t i = 0; i < k; ++i) std::printf("%6.2f %%  %s\n", 100.0 * scores[i].probability, scores[i].name.c_str());
    return 0;
}

}  // namespace

std::vector<Command> evalCommands()
{
    return {
        {"forward", "run an extracted subnet on a raw float32 input tensor", cmdForward},
        {"eval", "top-1 accuracy of a subnet on a dataset (BN re-calibrated)", cmdEval},
        {"classify", "ranked classes of one image", cmdClassify},
    };
}

}  // namespace tinyscope::cli
