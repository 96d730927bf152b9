#pragma once
// Ctrl-C and SIGTERM as a cancel request for long CLI jobs (train-supernet, make-accdata, finetune):
// the job stops at its next check, writes its checkpoint and the command exits 4.
#include <atomic>

namespace tinyscope::cli {

// Installs the handlers (idempotent) and returns the flag they set, for JobControl::cancel.
const std::atomic<bool>* cancelOnSignals();

}  // namespace tinyscope::cli
