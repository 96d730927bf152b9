#include "nn/train/DistributedEnv.h"

#include "Error.h"
#include "io/Text.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace tinyscope {

namespace {

// NAME='value' as messages quote a variable.
std::string quoted(const std::string& name, const std::string& value) { return name + "='" + escapedForMessage(value) + "'"; }

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
        throw InputError(quoted(name, v) + " is not a whole number in " + std::to_string(lo) + ".." + std::to_string(hi));
    return n;
}

// Rank 0's host as messages name it: MASTER_ADDR='h', or the first host of SLURM_NODELIST, 'h'.
std::string masterQuoted(const DistributedEnv& e)
{
    if (e.master_variable == "SLURM_NODELIST") return "the first host of SLURM_NODELIST, '" + escapedForMessage(e.master_addr) + "'";
    return quoted(e.master_variable, e.master_addr);
}

bool hostNameChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

}  // namespace

std::string firstSlurmHost(const std::string& nodelist)
{
    auto bad = [&](const std::string& why) { return InputError(quoted("SLURM_NODELIST", nodelist) + ": " + why); };
    auto at = [](std::size_t i) { return " at character " + std::to_string(i + 1); };
    auto number = [](const std::string& d) { return !d.empty() && d.size() <= 18 && d.find_first_not_of("0123456789") == std::string::npos; };
    // Entries separated by commas; an entry is host-name text and bracket groups of numbers and
    // ranges ("rack[1-2]-n[04,7-9]"); its first host takes each group's first number as written.
    std::string first;
    std::size_t i = 0, entries = 0;
    for (;;) {
        const std::size_t start = i;
        while (i < nodelist.size() && nodelist[i] != ',') {
            const char c = nodelist[i];
            if (c == ']') throw bad("']'" + at(i) + " closes no '['");
            if (c != '[') {
                if (!hostNameChar(c)) throw bad("character " + std::to_string(i + 1) + " cannot be part of a host name");
                if (entries == 0) first += c;
                ++i;
                continue;
            }
            const std::size_t close = nodelist.find_first_of("[]", i + 1);
            if (close == std::string::npos || nodelist[close] == '[') throw bad("'['" + at(i) + " is not closed");
            // Inside: "N" or "LO-HI" (LO <= HI), separated by commas.
            const std::string group = nodelist.substr(i + 1, close - i - 1);
            std::size_t from = 0;
            do {
                const std::size_t comma = std::min(group.find(',', from), group.size());
                const std::string item = group.substr(from, comma - from);
                const std::size_t dash = item.find('-');
                const std::string lo = item.substr(0, dash), hi = dash == std::string::npos ? lo : item.substr(dash + 1);
                if (!number(lo) || !number(hi))
                    throw bad("'" + escapedForMessage(item) + "' in the brackets" + at(i) + " is not a number or a range N-M");
                if (std::stoll(lo) > std::stoll(hi)) throw bad("the range " + item + at(i) + " runs backwards");
                if (from == 0 && entries == 0) first += lo;
                from = comma + 1;
            } while (from <= group.size());
            i = close + 1;
        }
        if (i == start) throw bad("an empty host name" + at(i));
        ++entries;
        if (i == nodelist.size()) return first;
        ++i;   // the comma
    }
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
        throw InputError("--rendezvous '" + escapedForMessage(rendezvous) + "': expected tcp or file:PATH");
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
    e.world_size = static_cast<int>(wholeNumber(worldVar, getenv(worldVar), 1, kMaxWorldSize));
    e.rank = static_cast<int>(wholeNumber(rankVar, getenv(rankVar), 0, e.world_size - 1));
    if (has(localVar)) e.local_rank = static_cast<int>(wholeNumber(localVar, getenv(localVar), 0, kMaxWorldSize - 1));
    // One process needs no process group: WORLD_SIZE=1 trains (and resumes) as a plain run.
    e.enabled = e.world_size > 1;
    if (!e.enabled) return e;
    if (has("MASTER_ADDR")) {
        e.master_addr = getenv("MASTER_ADDR");
        e.master_variable = "MASTER_ADDR";
    } else if (slurm && has("SLURM_NODELIST")) {
        e.master_addr = firstSlurmHost(getenv("SLURM_NODELIST"));
        e.master_variable = "SLURM_NODELIST";
    } else if (e.store_file.empty()) {
        throw InputError(std::string(worldVar) + "=" + std::to_string(e.world_size) +
                         " but MASTER_ADDR is not set: every rank needs rank 0's host (or --rendezvous file:PATH)");
    }
    if (e.master_addr.size() > kMaxHostName)
        throw InputError(masterQuoted(e) + ": not a host name (longer than " + std::to_string(kMaxHostName) + " characters)");
    if (has("MASTER_PORT")) e.master_port = static_cast<int>(wholeNumber("MASTER_PORT", getenv("MASTER_PORT"), 1, 65535));
    return e;
}

DistributedEnv DistributedEnv::fromProcess(bool requested, const std::string& rendezvous, double timeoutSeconds)
{
    return parse([](const char* n) { return static_cast<const char*>(std::getenv(n)); }, requested, rendezvous, timeoutSeconds);
}

void DistributedEnv::requireResolvableMaster() const
{
    if (!enabled || !store_file.empty()) return;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(master_addr.c_str(), nullptr, &hints, &found);
    if (found) ::freeaddrinfo(found);
    if (rc == 0) return;
    throw InputError(masterQuoted(*this) + ": cannot resolve rank 0's host name (" + ::gai_strerror(rc) + ")");
}

std::string DistributedEnv::describe() const
{
    if (!enabled) return "a single process";
    std::ostringstream s;
    s << "rank " << rank << " of " << world_size << " (local " << local_rank << ") via "
      << (store_file.empty() ? escapedForMessage(master_addr) + ":" + std::to_string(master_port) : "file " + escapedForMessage(store_file));
    return s.str();
}

}  // namespace tinyscope
