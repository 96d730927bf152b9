#pragma once
// Progress reporting and cancellation for long jobs (evaluate, train, search, export). The GUI
// passes a callback that posts to its thread and an atomic flag its Cancel button sets; the job
// calls check() between units of work and throws CancelledError when asked to stop.
#include "Error.h"

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>

namespace tinyscope {

struct JobControl {
    std::function<void(std::size_t done, std::size_t total, const std::string& stage)> progress;
    const std::atomic<bool>* cancel = nullptr;

    void report(std::size_t done, std::size_t total, const std::string& stage) const
    {
        if (progress) progress(done, total, stage);
    }
    bool cancelled() const { return cancel && cancel->load(); }
    // A part of this job (fine-tuning inside a pruning run): its `done` reported as base + done of
    // `total`, its stage after `prefix`; the same cancel flag.
    JobControl within(std::size_t base, std::size_t total, const std::string& prefix = {}) const
    {
        JobControl part;
        part.cancel = cancel;
        if (progress)
            part.progress = [p = progress, base, total, prefix](std::size_t done, std::size_t, const std::string& stage) { p(base + done, total, prefix + stage); };
        return part;
    }
    void check() const
    {
        if (cancelled()) throw CancelledError();
    }
};

}  // namespace tinyscope
