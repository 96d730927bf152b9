#pragma once
// Shared by the ONNX test suites: export a prepared float model with a seeded input and our
// LibTorch logits, check files with Debian's onnx.checker (python3-onnx), and run them with ONNX
// Runtime from npm (onnxruntime-node, installed by the test into its own folder; tests/onnx_run.js).
#include "TestSupport.h"

#include "deploy/OnnxExport.h"
#include "io/AtomicFile.h"
#include "io/JsonFile.h"
#include "nn/quantize/DeployJob.h"
#include "nn/quantize/PostTrainingQuantizer.h"
#include "nn/supernet/Supernet.h"
#include "zoo/SubnetNetwork.h"

#include <ATen/ATen.h>

#include <QProcess>
#include <QProcessEnvironment>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace tinyscope::test {

// The lab's VWW supernet checkpoint (perturbed weights) in ../shared.
inline constexpr const char* kVwwCkpt = "reference/mcunet-vww/ofa_mcunet384_vww_seed0_perturbed.pth";

inline QString systemPython3()
{
    return QFileInfo::exists(QStringLiteral("/usr/bin/python3")) ? QStringLiteral("/usr/bin/python3") : QStringLiteral("python3");
}

// A model written to `dir`/`name`.onnx with a seeded N(0, 1) input and our float forward's logits.
struct OnnxCase {
    std::string name, model, input;
    std::vector<std::int64_t> shape;
    std::vector<float> expected;       // floatForward (LibTorch) logits
    std::vector<double> exact;         // the same forward in float64 (weights and input widened)
    std::map<std::string, int> ops;
};

inline OnnxCase exportOnnxCase(const PreparedModel& m, const QString& dir, const std::string& name,
                               std::uint64_t seed)
{
    OnnxCase c;
    c.name = name;
    c.model = (dir + QLatin1Char('/') + QString::fromStdString(name) + QStringLiteral(".onnx")).toStdString();
    c.input = (dir + QLatin1Char('/') + QString::fromStdString(name) + QStringLiteral(".f32")).toStdString();
    const OnnxModel om = buildOnnxModel(onnxSource(m));
    writeOnnxModel(om, c.model);
    c.shape = om.input_shape;
    c.ops = om.ops;
    at::manual_seed(seed);
    const at::Tensor x = at::randn(c.shape).contiguous();
    writeFileAtomic(c.input, std::string(reinterpret_cast<const char*>(x.data_ptr<float>()), static_cast<std::size_t>(x.numel()) * 4));
    const at::Tensor y = floatForward(*m.float_model, x).contiguous();
    c.expected.assign(y.data_ptr<float>(), y.data_ptr<float>() + y.numel());
    FloatModel wide = *m.float_model;
    for (at::Tensor& t : wide.weight)
        if (t.defined()) t = t.to(at::kDouble);
    for (at::Tensor& t : wide.bias)
        if (t.defined()) t = t.to(at::kDouble);
    const at::Tensor y64 = floatForward(wide, x.to(at::kDouble)).contiguous();
    c.exact.assign(y64.data_ptr<double>(), y64.data_ptr<double>() + y64.numel());
    return c;
}

// A subnet of `supernet` with the checkpoint's BatchNorm statistics (no re-calibration), as a
// PreparedModel the deploy code reads.
inline PreparedModel preparedSubnet(const Supernet& supernet, const SubnetConfig& config, const std::string& description)
{
    PreparedModel m;
    m.network = networkFromSubnet(supernet.space(), config, "subnet");
    const Subnet sub = supernet.extract(config);
    m.float_model = std::make_shared<FloatModel>(floatModelFromSubnet(m.network, sub));
    m.subnet = config;
    m.space = supernet.space();
    m.description = description;
    return m;
}

// onnx.checker.check_model(full_check=True) on each file, in one python3 process. Returns the
// failures ("file: message"); sets `why` and returns {} when python3-onnx is not available.
inline std::vector<std::string> onnxCheckerFailures(const std::vector<std::string>& files, QString* why)
{
    QProcess py;
    QStringList args{QStringLiteral("-c"),
                     QStringLiteral("import sys\n"
                                    "try:\n    import onnx\nexcept ImportError:\n    print('NO_ONNX'); sys.exit(0)\n"
                                    "for f in sys.argv[1:]:\n"
                                    "    try:\n        onnx.checker.check_model(onnx.load(f), full_check=True); print('OK ' + f)\n"
                                    "    except Exception as e:\n        print('FAIL ' + f + ': ' + str(e).replace('\\n', ' '))\n")};
    for (const std::string& f : files) args << QString::fromStdString(f);
    py.start(systemPython3(), args);
    if (!py.waitForFinished(300000) || py.exitCode() != 0) {
        *why = QStringLiteral("python3 failed: ") + QString::fromUtf8(py.readAllStandardError());
        return {};
    }
    const QString out = QString::fromUtf8(py.readAllStandardOutput());
    if (out.startsWith(QStringLiteral("NO_ONNX"))) {
        *why = QStringLiteral("python3-onnx is not installed (apt-get install python3-onnx): onnx.checker skipped");
        return {};
    }
    std::vector<std::string> failures;
    int ok = 0;
    for (const QString& line : out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        if (line.startsWith(QStringLiteral("OK "))) ++ok;
        else failures.push_back(line.toStdString());
    }
    if (ok + static_cast<int>(failures.size()) != static_cast<int>(files.size()))
        failures.push_back("the checker reported " + std::to_string(ok + failures.size()) + " of " + std::to_string(files.size()) + " files");
    return failures;
}

// npm's onnxruntime-node in `dir` (installed there on first use with --ignore-scripts). Empty on
// success, else why it is not available.
inline QString ensureOnnxRuntime(const QString& dir)
{
    const QString pkg = dir + QStringLiteral("/node_modules/onnxruntime-node/package.json");
    if (!QFileInfo::exists(pkg)) {
        QDir().mkpath(dir);
        QProcess npm;
        npm.setWorkingDirectory(dir);
        npm.start(QStringLiteral("npm"), {QStringLiteral("install"), QStringLiteral("--ignore-scripts"), QStringLiteral("--no-audit"),
                                          QStringLiteral("--no-fund"), QStringLiteral("--prefix"), dir, QStringLiteral("onnxruntime-node")});
        if (!npm.waitForStarted(30000)) return QStringLiteral("npm is not installed: ONNX Runtime check skipped");
        if (!npm.waitForFinished(600000) || npm.exitCode() != 0 || !QFileInfo::exists(pkg))
            return QStringLiteral("npm install --ignore-scripts onnxruntime-node failed: ") + QString::fromUtf8(npm.readAllStandardError()).left(400);
    }
    return {};
}

// Runs the cases with ONNX Runtime in one node process; one entry per case (an array of floats or
// {"error": ...}). Throws std::runtime_error when node fails.
inline Json runOnnxRuntime(const std::vector<OnnxCase>& cases, const QString& npmDir, const QString& workDir)
{
    Json manifest = Json::array();
    for (const OnnxCase& c : cases) manifest.push_back({{"model", c.model}, {"input", c.input}, {"shape", c.shape}});
    const std::string path = (workDir + QStringLiteral("/manifest.json")).toStdString();
    writeFileAtomic(path, manifest.dump());
    QProcess node;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("NODE_PATH"), npmDir + QStringLiteral("/node_modules"));
    node.setProcessEnvironment(env);
    node.start(QStringLiteral("node"), {sourceDir() + QStringLiteral("/tests/onnx_run.js"), QString::fromStdString(path)});
    if (!node.waitForFinished(900000) || node.exitCode() != 0)
        throw std::runtime_error("node onnx_run.js failed: " + QString::fromUtf8(node.readAllStandardError()).toStdString());
    return Json::parse(node.readAllStandardOutput().toStdString());
}

struct LogitDiffs {
    double ort_torch = 0;   // max |ONNX Runtime − LibTorch float32|
    double ort_exact = 0;   // max |ONNX Runtime − float64|
    double torch_exact = 0; // max |LibTorch float32 − float64|
    double scale = 0;       // max |logit| (float64)
};

// The differences over the logits of one case; throws when ORT refused it.
inline LogitDiffs logitDiffs(const OnnxCase& c, const Json& got)
{
    if (!got.is_array()) throw std::runtime_error(c.name + ": ONNX Runtime: " + got.dump());
    if (got.size() != c.expected.size())
        throw std::runtime_error(c.name + ": " + std::to_string(got.size()) + " logits from ONNX Runtime, " + std::to_string(c.expected.size()) + " from LibTorch");
    LogitDiffs d;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double o = got[i].get<double>(), t = c.expected[i], e = c.exact[i];
        d.ort_torch = std::max(d.ort_torch, std::fabs(o - t));
        d.ort_exact = std::max(d.ort_exact, std::fabs(o - e));
        d.torch_exact = std::max(d.torch_exact, std::fabs(t - e));
        d.scale = std::max(d.scale, std::fabs(e));
    }
    return d;
}

// max |ONNX Runtime − LibTorch| over the logits of one case; throws when ORT refused it.
inline double maxAbsDiff(const OnnxCase& c, const Json& got)
{
    if (!got.is_array()) throw std::runtime_error(c.name + ": ONNX Runtime: " + got.dump());
    if (got.size() != c.expected.size())
        throw std::runtime_error(c.name + ": " + std::to_string(got.size()) + " logits from ONNX Runtime, " + std::to_string(c.expected.size()) + " from LibTorch");
    double d = 0;
    for (std::size_t i = 0; i < got.size(); ++i) d = std::max(d, std::fabs(got[i].get<double>() - static_cast<double>(c.expected[i])));
    return d;
}

}  // namespace tinyscope::test
