#pragma once
// A PyTorch baseline process the benchmarks talk to (bench/torch_subnet_baseline.py): started
// once per configuration, it answers "run N calls" with the mean seconds per call, so ours and
// PyTorch can take turns, round after round, on the same machine state. Debian's python3-torch is
// a benchmark-only dependency (docs/BENCHMARKS.md); without it ok() is false and missingLine()
// says what to install.
#include "nn/TorchRuntime.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace tinyscope::bench {

// Runs a shell command and returns what it printed on stdout; false when it could not start.
inline bool captureOutput(const std::string& cmd, std::string& out)
{
    FILE* f = popen(cmd.c_str(), "r");
    if (!f) return false;
    out.clear();
    char buf[65536];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
    pclose(f);
    return true;
}

inline std::string pythonExecutable()
{
    if (const char* p = std::getenv("TINYSCOPE_PYTHON")) return p;
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

// The kernel sets LibTorch's libraries chose here (PyTorch's process loads the same libraries).
inline void printKernels()
{
    std::string k;
    for (const auto& [lib, set] : hostCpuAndKernels().kernels) k += " " + lib + " " + set + ";";
    std::printf("kernels:%s\n", k.c_str());
}

inline const char* missingPythonTorch()
{
    return "python3-torch not available: no PyTorch baseline (apt-get install python3-torch; docs/BENCHMARKS.md)";
}

class PythonBaseline {
public:
    explicit PythonBaseline(const std::vector<std::string>& args)
    {
        int in[2], out[2];
        if (pipe(in) != 0) return;
        if (pipe(out) != 0) {
            close(in[0]);
            close(in[1]);
            return;
        }
        pid_ = fork();
        if (pid_ == 0) {
            dup2(in[0], 0);
            dup2(out[1], 1);
            close(in[0]);
            close(in[1]);
            close(out[0]);
            close(out[1]);
            if (!std::getenv("TINYSCOPE_BENCH_PYTHON_STDERR")) freopen("/dev/null", "w", stderr);
            const std::string py = pythonExecutable();
            std::vector<char*> argv{const_cast<char*>(py.c_str())};
            for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            execvp(argv[0], argv.data());
            _exit(127);
        }
        close(in[0]);
        close(out[1]);
        to_ = fdopen(in[1], "w");
        from_ = fdopen(out[0], "r");
        char word[16] = {0};
        ok_ = pid_ > 0 && to_ && from_ && std::fscanf(from_, "%15s %lf", word, &checksum_) == 2 && std::string(word) == "ready";
    }
    ~PythonBaseline()
    {
        if (to_) std::fclose(to_);
        if (from_) std::fclose(from_);
        if (pid_ > 0) waitpid(pid_, nullptr, 0);
    }
    PythonBaseline(const PythonBaseline&) = delete;
    PythonBaseline& operator=(const PythonBaseline&) = delete;

    bool ok() const { return ok_; }
    double checksum() const { return checksum_; }

    // Mean seconds per call over `reps` calls, or -1 if the process is gone.
    double secondsPerCall(int reps)
    {
        if (!ok_) return -1;
        double s = -1;
        if (std::fprintf(to_, "%d\n", reps) < 0 || std::fflush(to_) != 0 || std::fscanf(from_, "%lf", &s) != 1) ok_ = false;
        return ok_ ? s : -1;
    }

private:
    pid_t pid_ = -1;
    FILE* to_ = nullptr;
    FILE* from_ = nullptr;
    bool ok_ = false;
    double checksum_ = 0;
};

}  // namespace tinyscope::bench
