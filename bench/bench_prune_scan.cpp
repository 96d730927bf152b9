// Lab 1's sensitivity scan (issue 50, docs/BENCHMARKS.md "Sensitivity scan"): every prunable weight
// (the lab's param.dim() > 1: convs, SE, the classifier) pruned alone at each sparsity 0.4 … 0.9,
// top-1 on the evaluation images after each, on one subnet of the shipped Fashion-MNIST supernet
// (models/supernets/mcunet-fmnist.pth, default its largest, "max") and IMAGES Fashion-MNIST test
// images, BatchNorm re-calibrated as `tinyscope prune` does (2,000 holdout images, seed 0):
// * ours: runPruning with sensitivity = true, the code path of `tinyscope prune --sensitivity`
//   (oneDNN engine, batch 100, the evaluator decoding the images for every measurement); timed by
//   PruneResult::scan_seconds, the scan loop alone;
// * PyTorch: the lab's loop in PyTorch 1.13 eager (bench/lab_sensitivity_scan.py: an nn.Module with
//   the subnet's key names, named_parameters() with dim > 1, clone / fine_grained_prune / evaluate
//   / copy_ back), on the same subnet (written after the same re-calibration, preparedSubnet), on
//   the same images (the float32 pixels our evaluator feeds its engine, written to a file, so
//   preprocessing cannot differ) in the same batches, on the same number of threads; timed from
//   the first layer's clone to the last restore.
// The dense top-1 must be equal, and every scan point is compared: counts of correct images may
// differ by float rounding at an argmax (BN folded and oneDNN's kernels against BN separate and
// PyTorch's), by at most kMaxApart images; more means the scans differ and the program fails
// (exit 1), naming the first such layer and sparsity. Ours runs first, then PyTorch, once each.
//
// usage: bench_prune_scan [IMAGES (1000)] [THREADS (2)] [CONFIG (max|min|CFG.json)]
#include "BenchTiming.h"
#include "PythonBaseline.h"
#include "SubnetForPython.h"
#include "data/BatchLoader.h"
#include "io/JsonFile.h"
#include "nn/TorchRuntime.h"
#include "nn/accuracy/PreparedSubnet.h"
#include "nn/compress/PruningJob.h"
#include "nn/measure/Evaluator.h"
#include "space/ArchSampler.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace tinyscope;

namespace {

constexpr long kMaxApart = 3;   // images; more at any point: not the same scan

// A scratch folder for the files the baseline reads, removed on every way out.
struct ScratchDir {
    std::string path;
    ScratchDir()
    {
        char tmpl[] = "/tmp/tinyscope-bench-prune-scan-XXXXXX";
        path = mkdtemp(tmpl) ? tmpl : "/tmp/tinyscope-bench-prune-scan";
        std::filesystem::create_directories(path);
    }
    ~ScratchDir() { std::filesystem::remove_all(path); }
};

template <typename T>
void writeRaw(const std::string& path, const std::vector<T>& v)
{
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

long correctOf(double top1, std::size_t images) { return std::lround(top1 * static_cast<double>(images) / 100.0); }

std::string tenths(double s)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", s);
    return buf;
}

bool torchImports()
{
    return std::system((bench::pythonExecutable() + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv)
{
    configureAllocator();
    const int images = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1000;
    const int threads = setTorchThreads(argc > 2 ? std::atoi(argv[2]) : 2);
    const std::string configName = argc > 3 ? argv[3] : "max";
    bench::printMachine();
    bench::printKernels();

    // The request `tinyscope prune --config CONFIG --images N --threads T --sensitivity` builds.
    EvaluationRequest er = shippedSupernetRequest();
    er.config = configByName(er.space, configName);
    er.images = static_cast<std::size_t>(images);
    er.threads = threads;
    PruneRequest rq;
    rq.evaluation = er;
    rq.sensitivity = true;

    // The images as our evaluator feeds them to its engine, and the re-calibrated subnet.
    const int res = er.config.image_size;
    const EvaluationData ed = evaluationData(er);
    const Batch all = loadBatch(*ed.data, ed.items, res);
    if (!all.skipped.empty()) {
        std::printf("FAIL: %zu of the evaluation images could not be read\n", all.skipped.size());
        return 1;
    }
    const std::unique_ptr<ImageDataset> calib = evaluationCalibrationData(er);
    Subnet sub = preparedSubnet(er, calib.get());
    const EvalResult dense = evaluateTop1(sub, *ed.data, ed.items, er.batch, {}, er.engine, er.dtype);
    const ScratchDir dir;
    bench::SubnetForPython files("prune-scan");
    files.write(sub);
    writeRaw(dir.path + "/images.f32", all.pixels);
    writeRaw(dir.path + "/labels.i64", std::vector<std::int64_t>(all.labels.begin(), all.labels.end()));
    std::ofstream(dir.path + "/scan.json") << Json{{"sparsities", rq.scan}, {"batch", er.batch}, {"resolution", res}}.dump();

    std::printf("subnet %s of %s, %d px, %zu Fashion-MNIST test images (%s), BN re-calibrated on %zu images of %s; batch %d, "
                "%d threads, engine %s%s\n",
                configName.c_str(), er.supernet.c_str(), res, all.size(), ed.data->source().c_str(), er.calibration.images,
                calib ? calib->source().c_str() : "(none)", er.batch, threads, dense.engine.c_str(),
                dense.engine_note.empty() ? "" : (" (" + dense.engine_note + ")").c_str());
    std::fflush(stdout);

    // Ours: the job `tinyscope prune --sensitivity` runs.
    const PruneResult ours = runPruning(rq);
    std::size_t points = 0;
    for (const SensitivityCurve& c : ours.sensitivity) points += c.top1.size();
    std::printf("ours: dense top-1 %.2f %% (%ld of %zu), %zu layers x %zu sparsities = %zu points in %.1f s (the whole job %.1f s: "
                "loading, re-calibration, dense top-1 too)\n",
                ours.dense_top1, correctOf(ours.dense_top1, ours.images), ours.images, ours.sensitivity.size(), rq.scan.size(), points,
                ours.scan_seconds, ours.seconds);
    if (correctOf(ours.dense_top1, ours.images) != static_cast<long>(dense.correct)) {
        std::printf("FAIL: the job's dense top-1 (%.2f %%) is not the prepared subnet's (%.2f %%): the baseline would start elsewhere\n",
                    ours.dense_top1, dense.top1);
        return 1;
    }
    std::fflush(stdout);

    // PyTorch: started now, so that it does not share the cores with ours.
    bench::PythonBaseline py({TINYSCOPE_SOURCE_DIR "/bench/lab_sensitivity_scan.py", files.ckpt, files.meta, dir.path, std::to_string(threads)});
    if (!py.ok()) {
        if (torchImports()) {
            std::printf("FAIL: the PyTorch baseline did not start (TINYSCOPE_BENCH_PYTHON_STDERR=1 shows its errors)\n");
            return 1;
        }
        std::printf("%s\n\n%s (at the end)\n", bench::missingPythonTorch(), bench::loadAverage().c_str());
        return 0;
    }
    const long theirDense = std::lround(py.checksum());
    std::printf("PyTorch: dense top-1 %.2f %% (%ld of %zu)\n", 100.0 * static_cast<double>(theirDense) / static_cast<double>(all.size()), theirDense,
                all.size());
    if (theirDense != static_cast<long>(dense.correct)) {
        std::printf("FAIL: the dense top-1 differs (ours %zu correct, PyTorch %ld): not the same network or images\n", dense.correct, theirDense);
        return 1;
    }
    std::fflush(stdout);
    const double theirSeconds = py.secondsPerCall(1);
    Json theirs;
    try {
        theirs = readJsonFile(dir.path + "/python-scan.json");
    } catch (const std::exception& e) {
        std::printf("FAIL: no scan from the PyTorch baseline (%s)\n", e.what());
        return 1;
    }
    std::map<std::string, std::vector<long>> theirCorrect;
    for (const Json& l : theirs["layers"]) theirCorrect[l["name"].get<std::string>()] = l["correct"].get<std::vector<long>>();
    if (theirCorrect.size() != ours.sensitivity.size()) {
        std::printf("FAIL: PyTorch scanned %zu layers, ours %zu: not the same prunable weights\n", theirCorrect.size(), ours.sensitivity.size());
        return 1;
    }

    // Every point, ours against PyTorch's, in correct images.
    std::printf("\nper layer: sparsity: ours top-1 %% (\"=\" PyTorch the same; else PyTorch's and the difference in images)\n");
    std::size_t differ = 0;
    long largest = 0;
    std::string largestAt, firstBad;
    for (const SensitivityCurve& c : ours.sensitivity) {
        const auto it = theirCorrect.find(c.layer);
        if (it == theirCorrect.end() || it->second.size() != c.top1.size()) {
            std::printf("FAIL: PyTorch's named_parameters() with dim > 1 %s %s\n", it == theirCorrect.end() ? "has no" : "scanned a different count for",
                        c.layer.c_str());
            return 1;
        }
        std::printf("%s (%lld)", c.layer.c_str(), static_cast<long long>(c.params));
        for (std::size_t i = 0; i < c.top1.size(); ++i) {
            const long o = correctOf(c.top1[i], ours.images), t = it->second[i], d = t - o;
            std::printf("  %.1f: %.2f", c.sparsity[i], c.top1[i]);
            if (d == 0) {
                std::printf(" =");
                continue;
            }
            std::printf(" PyTorch %.2f (%+ld)", 100.0 * static_cast<double>(t) / static_cast<double>(ours.images), d);
            ++differ;
            const std::string at = c.layer + " at sparsity " + tenths(c.sparsity[i]);
            if (std::labs(d) > largest) largest = std::labs(d), largestAt = at;
            if (std::labs(d) > kMaxApart && firstBad.empty()) firstBad = at + ": ours " + std::to_string(o) + " correct, PyTorch " + std::to_string(t);
        }
        std::printf("\n");
    }

    std::printf("\nagreement: %zu of %zu points the same top-1, %zu differ; largest difference %ld image%s%s%s (tolerance %ld)\n", points - differ,
                points, differ, largest, largest == 1 ? "" : "s", largestAt.empty() ? "" : ", ", largestAt.c_str(), kMaxApart);
    std::printf("\n%-8s %7s %7s %7s %12s %12s\n", "", "images", "layers", "points", "scan s", "s per point");
    std::printf("%-8s %7zu %7zu %7zu %12.1f %12.3f\n", "ours", ours.images, ours.sensitivity.size(), points, ours.scan_seconds,
                ours.scan_seconds / static_cast<double>(points));
    std::printf("%-8s %7zu %7zu %7zu %12.1f %12.3f\n", "PyTorch", all.size(), theirCorrect.size(), points, theirSeconds,
                theirSeconds / static_cast<double>(points));
    std::printf("ratio (PyTorch time / ours, >1 = ours faster): %.2fx\n", theirSeconds / ours.scan_seconds);
    std::printf("\n%s (at the end)\n", bench::loadAverage().c_str());
    if (!firstBad.empty()) {
        std::printf("FAIL: more than %ld images apart at %s: not the same scan\n", kMaxApart, firstBad.c_str());
        return 1;
    }
    return 0;
}
