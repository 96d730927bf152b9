#pragma once
// Where a data-parallel rank is and whom it meets, read from the variables torchrun and Slurm set
// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID, SLURM_NODELIST). Torch-free: parsing and its messages are tested on their own;
// DistributedContext turns a DistributedEnv into a process group. docs/SUPERNET_TRAINING.md,
// "Scaling beyond one machine".
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>

namespace tinyscope {

// A rank that died or stopped answering, a rendezvous that never completed: the run cannot go on
// (exit 1), unlike a bad environment (InputError, exit 2).
class DistributedError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The most ranks a run accepts (WORLD_SIZE, SLURM_NTASKS). Gloo connects every pair of ranks, so
// each rank holds a socket per peer; a supernet of this size gains nothing from more. A larger
// value is a typo, and would make rank 0 open a socket per missing peer before finding them absent.
constexpr int kMaxWorldSize = 1024;

// The longest host name (RFC 1035); longer values are refused before any lookup.
constexpr std::size_t kMaxHostName = 253;

struct DistributedEnv {
    bool enabled = false;           // false: a single process, none of the rest matters
    int rank = 0, world_size = 1, local_rank = 0;
    std::string master_addr;        // rank 0's host (TCPStore server); empty with a file rendezvous
    std::string master_variable;    // where master_addr came from: "MASTER_ADDR" or "SLURM_NODELIST"
    int master_port = 29500;        // torchrun's default
    std::string store_file;         // non-empty: rendezvous through a FileStore on a shared file system
    double timeout_seconds = 600;   // a collective or the rendezvous waiting longer fails (Gloo timeout)
    std::string source;             // "torchrun variables" / "Slurm variables", for messages

    // `getenv` returns a variable's value or nullptr. `requested`: --distributed was given (Slurm's
    // variables are read only then; RANK / WORLD_SIZE switch it on by themselves). `rendezvous`:
    // "tcp" (default) or "file:PATH". Throws InputError naming the variable and value at fault
    // (values quoted through escapedForMessage).
    static DistributedEnv parse(const std::function<const char*(const char*)>& getenv, bool requested,
                                const std::string& rendezvous = "tcp", double timeoutSeconds = 600);
    static DistributedEnv fromProcess(bool requested, const std::string& rendezvous = "tcp", double timeoutSeconds = 600);

    // InputError naming the variable unless rank 0's host resolves (getaddrinfo, once; nothing to
    // do with a file rendezvous). c10d would retry a name that cannot resolve once a second, with
    // a log line each time, until the timeout.
    void requireResolvableMaster() const;

    std::string describe() const;   // "rank 1 of 2 (local 1) via 127.0.0.1:29500"
};

// The first host of a Slurm node list: "node[1-3],x" -> "node1", "gpu[07,9]" -> "gpu07", "a,b" -> "a",
// "rack[1-2]-n[4-5]" -> "rack1-n4". The whole list is checked (Slurm's hostlist syntax: brackets
// closed, numbers and ascending ranges inside, host-name characters outside); InputError naming
// SLURM_NODELIST otherwise.
std::string firstSlurmHost(const std::string& nodelist);

}  // namespace tinyscope
