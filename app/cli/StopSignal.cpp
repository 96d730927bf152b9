#include "cli/StopSignal.h"

#include <csignal>

namespace tinyscope::cli {

namespace {
std::atomic<bool> g_stop{false};
}  // namespace

extern "C" void tinyscopeStopSignal(int) { g_stop = true; }

const std::atomic<bool>* cancelOnSignals()
{
    std::signal(SIGINT, tinyscopeStopSignal);
    std::signal(SIGTERM, tinyscopeStopSignal);
    return &g_stop;
}

}  // namespace tinyscope::cli
