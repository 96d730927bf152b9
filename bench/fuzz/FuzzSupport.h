#pragma once
// Shared by the libFuzzer targets: run a reader and accept only the exceptions the core reports
// to users (bad input, infeasible request). Anything else — another exception type, a crash, a
// sanitizer report, a hang (libFuzzer's -timeout) — is a finding.
#include "Error.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace tinyscope::fuzz {

template <class F>
void expectOnlyInputErrors(F&& f)
{
    try {
        f();
    } catch (const InputError&) {
    } catch (const InfeasibleError&) {
    }
}

// The bytes as a file the readers can open by path (an anonymous memory file, no disk writes).
class MemoryFile {
public:
    explicit MemoryFile(const std::string& bytes) : fd_(::memfd_create("fuzz", 0))
    {
        if (fd_ < 0) return;
        for (std::size_t done = 0; done < bytes.size();) {
            const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
            if (n <= 0) break;
            done += static_cast<std::size_t>(n);
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~MemoryFile()
    {
        if (fd_ >= 0) ::close(fd_);
    }
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;
    const std::string& path() const { return path_; }

private:
    int fd_;
    std::string path_;
};

}  // namespace tinyscope::fuzz
