#include "deploy/TinyEngineTfliteCodegen.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/ChildProcess.h"
#include "io/DataPaths.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <unistd.h>

namespace tinyscope {

namespace fs = std::filesystem;

namespace {

// Prints "TINYSCOPE_PEAK <bytes>" when the generator returns; an exception ends the script with its
// one-line form "TINYSCOPE_REFUSED <type>: <message>" (exit 3).
const char* kDriver = R"PY(
import sys, traceback
sys.path.insert(0, sys.argv[1])
try:
    from code_generator.CodegenUtilTFlite import GenerateSourceFilesFromTFlite
except Exception as e:
    print("TINYSCOPE_IMPORT %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    sys.exit(4)
try:
    peak = GenerateSourceFilesFromTFlite(sys.argv[2])
except Exception as e:
    traceback.print_exc()
    msg = str(e).splitlines()[0] if str(e) else ""
    print("TINYSCOPE_REFUSED %s: %s" % (type(e).__name__, msg))
    sys.exit(3)
print("TINYSCOPE_PEAK %d" % int(peak))
)PY";

}  // namespace

std::string missingTinyEngineTflitePackage() { return missingPythonPackage({{"numpy", "python3-numpy"}, {"flatbuffers", "python3-flatbuffers"}}); }

std::string tinyEngineRoot()
{
    std::string shared;
    if (const char* env = std::getenv("TINYSCOPE_SHARED"); env && *env) shared = env;
    else if (const std::string root = dataRoot(); !root.empty()) shared = root + "/../shared";
    if (shared.empty()) return "";
    const std::string te = shared + "/reference/runtimes/tinyengine";
    std::error_code ec;
    return fs::is_directory(te + "/code_generator", ec) ? fs::weakly_canonical(te, ec).string() : "";
}

TinyEngineTfliteReport runTinyEngineTfliteCodegen(const std::string& tflitePath, const JobControl& job, double timeout_s)
{
    if (const std::string pkg = missingTinyEngineTflitePackage(); !pkg.empty())
        throw InputError("TinyEngine's TFLite code generator needs the Debian package " + pkg);
    const std::string te = tinyEngineRoot();
    if (te.empty()) throw InputError("TinyEngine's sources (../shared/reference/runtimes/tinyengine) were not found (set TINYSCOPE_SHARED)");
    std::error_code ec;
    if (!fs::is_regular_file(tflitePath, ec)) throw InputError("'" + tflitePath + "' is not a file");

    const TemporaryFolder work("tinyscope-tecodegen");
    const std::string& templ = work.path();

    ProcessGroupRun run;
    run.argv = {"/usr/bin/python3", "-c", kDriver, te, fs::absolute(tflitePath).string()};
    run.extra_env = {"MPLBACKEND=Agg", "PYTHONDONTWRITEBYTECODE=1"};
    run.log_path = templ + "/codegen.log";
    run.cwd = templ;
    run.timeout_s = timeout_s;
    run.what = "TinyEngine's TFLite code generator";
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = runProcessGroup(run, job);
    TinyEngineTfliteReport r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string log = readFileBytes(run.log_path, 64u << 20);
    if (rc == 4) throw InputError("TinyEngine's TFLite code generator cannot be imported: " + lastLineAfter(log, "TINYSCOPE_IMPORT "));
    if (rc == 0) {
        const std::string peak = lastLineAfter(log, "TINYSCOPE_PEAK ");
        if (peak.empty()) throw InputError("TinyEngine's TFLite code generator printed no peak: " + lastLine(log));
        r.accepted = true;
        r.activation_bytes = std::stoll(peak);
        const std::string header = readFileBytes(templ + "/codegen/Include/genModel.h", 256u << 20);
        auto define = [&](const std::string& name) -> std::int64_t {
            const std::string key = "#define " + name + " ";
            const auto at = header.find(key);
            if (at == std::string::npos) throw InputError("TinyEngine's generated genModel.h has no " + name);
            return std::stoll(header.substr(at + key.size(), 24));
        };
        r.peak_bytes = define("PEAK_MEM");
        r.model_bytes = define("MODEL_SIZE");
        for (const char* sub : {"/codegen/Include", "/codegen/Source"})
            for (const auto& e : fs::directory_iterator(templ + sub, ec)) r.generated_files += e.is_regular_file() ? 1 : 0;
        return r;
    }
    r.refusal = rc == 3 ? lastLineAfter(log, "TINYSCOPE_REFUSED ") : "exit " + std::to_string(rc) + ": " + lastLine(log);
    return r;
}

}  // namespace tinyscope
