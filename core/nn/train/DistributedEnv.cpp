#include "nn/train/DistributedEnv.h"

#include "Error.h"

#include <cstdlib>
#include <sstream>

namespace tinyscope {

namespace {

// A whole non-negative decimal number, or an InputError naming the variable.
long long wholeNumber(const std::string& name, const char* value, long long lo, long long hi)
{
    const std::string v = value;
    std::size_t used = 0;
    long long n = -1;
    try {
        n = std::stoll(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (v.empty() || used != v.size() || n < lo || n > hi)
        throw InputError(name + "='" + v + "' is not a whole number in " + std::to_string(lo) + ".." + std::to_string(hi));
    return n;
}

}  // namespace

std::string firstSlurmHost(const std::string& nodelist)
{
    // The first entry ends at the first comma outside brackets.
    std::string first;
    int depth = 0;
    for (char c : nodelist) {
        if (c == '[') ++depth;
        if (c == ']') --depth;
        if (c == ',' && depth == 0) break;
        first += c;
    }
    const std::size_t open = first.find('['), close = first.find(']');
    if (open == std::string::npos || close == std::string::npos || close < open) return first;
    // Inside the brackets: ranges and numbers separated by commas; the first number keeps its zero padding.
    std::string range = first.substr(open + 1, close - open - 1);
    range = range.substr(0, range.find_first_of(",-"));
    return first.substr(0, open) + range + first.substr(close + 1);
}

DistributedEnv DistributedEnv::parse(const std::function<const char*(const char*)>& getenv, bool requested,
                                     const std::string& rendezvous, double timeoutSeconds)
{
    DistributedEnv e;
    e.timeout_seconds = timeoutSeconds;
    auto has = [&](const char* n) { return getenv(n) && *getenv(n); };
    if (rendezvous.rfind("file:", 0) == 0) {
        e.store_file = rendezvous.substr(5);
        if (e.store_file.empty()) throw InputError("--rendezvous file:PATH needs a path on a file system every rank sees");
    } else if (rendezvous != "tcp") {
        throw InputError("--rendezvous '" + rendezvous + "': expected tcp or file:PATH");
    }
    const bool torchrun = has("WORLD_SIZE") || has("RANK");
    const bool slurm = requested && !torchrun && has("SLURM_NTASKS");
    if (!torchrun && !slurm) {
        if (requested)
            throw InputError("--distributed: neither WORLD_SIZE/RANK (torchrun) nor SLURM_NTASKS/SLURM_PROCID (Slurm) is set");
        return e;
    }
    const char* rankVar = torchrun ? "RANK" : "SLURM_PROCID";
    const char* worldVar = torchrun ? "WORLD_SIZE" : "SLURM_NTASKS";
    const char* localVar = torchrun ? "LOCAL_RANK" : "SLURM_LOCALID";
    e.source = torchrun ? "torchrun variables" : "Slurm variables";
    if (!has(worldVar)) throw InputError(std::string(rankVar) + " is set but " + worldVar + " is not");
    if (!has(rankVar)) throw InputError(std::string(worldVar) + " is set but " + rankVar + " is not");
    e.world_size = static_cast<int>(wholeNumber(worldVar, getenv(worldVar), 1, 1 << 20));
    e.rank = static_cast<int>(wholeNumber(rankVar, getenv(rankVar), 0, e.world_size - 1 < 0 ? 0 : e.world_size - 1));
    if (has(localVar)) e.local_rank = static_cast<int>(wholeNumber(localVar, getenv(localVar), 0, 1 << 20));
    // One process needs no process group: WORLD_SIZE=1 trains (and resumes) as a plain run.
    e.enabled = e.world_size > 1;
    if (!e.enabled) return e;
    if (has("MASTER_ADDR")) {
        e.master_addr = getenv("MASTER_ADDR");
    } else if (slurm && has("SLURM_NODELIST")) {
        e.master_addr = firstSlurmHost(getenv("SLURM_NODELIST"));
    } else if (e.store_file.empty()) {
        throw InputError(std::string(worldVar) + "=" + getenv(worldVar) +
                         " but MASTER_ADDR is not set: every rank needs rank 0's host (or --rendezvous file:PATH)");
    }
    if (has("MASTER_PORT")) e.master_port = static_cast<int>(wholeNumber("MASTER_PORT", getenv("MASTER_PORT"), 1, 65535));
    return e;
}

DistributedEnv DistributedEnv::fromProcess(bool requested, const std::string& rendezvous, double timeoutSeconds)
{
    return parse([](const char* n) { return static_cast<const char*>(std::getenv(n)); }, requested, rendezvous, timeoutSeconds);
}

std::string DistributedEnv::describe() const
{
    if (!enabled) return "a single process";
    std::ostringstream s;
    s << "rank " << rank << " of " << world_size << " (local " << local_rank << ") via "
      << (store_file.empty() ? master_addr + ":" + std::to_string(master_port) : "file " + store_file);
    return s.str();
}

}  // namespace tinyscope
