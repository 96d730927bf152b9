#pragma once
// Where a data-parallel rank is and whom it meets, read from the variables torchrun and Slurm set
// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID, SLURM_NODELIST). Torch-free: parsing and its messages are tested on their own;
// DistributedContext turns a DistributedEnv into a process group. docs/SUPERNET_TRAINING.md,
// "Scaling beyond one machine".
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

struct DistributedEnv {
    bool enabled = false;           // false: a single process, none of the rest matters
    int rank = 0, world_size = 1, local_rank = 0;
    std::string master_addr;        // rank 0's host (TCPStore server); empty with a file rendezvous
    int master_port = 29500;        // torchrun's default
    std::string store_file;         // non-empty: rendezvous through a FileStore on a shared file system
    double timeout_seconds = 600;   // a collective or the rendezvous waiting longer fails (Gloo timeout)
    std::string source;             // "torchrun variables" / "Slurm variables", for messages

    // `getenv` returns a variable's value or nullptr. `requested`: --distributed was given (Slurm's
    // variables are read only then; RANK / WORLD_SIZE switch it on by themselves). `rendezvous`:
    // "tcp" (default) or "file:PATH". Throws InputError naming the variable and value at fault.
    static DistributedEnv parse(const std::function<const char*(const char*)>& getenv, bool requested,
                                const std::string& rendezvous = "tcp", double timeoutSeconds = 600);
    static DistributedEnv fromProcess(bool requested, const std::string& rendezvous = "tcp", double timeoutSeconds = 600);

    std::string describe() const;   // "rank 1 of 2 (local 1) via 127.0.0.1:29500"
};

// The first host of a Slurm node list: "node[1-3],x" -> "node1", "gpu[07,9]" -> "gpu07", "a,b" -> "a".
std::string firstSlurmHost(const std::string& nodelist);

}  // namespace tinyscope
