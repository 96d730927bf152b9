#pragma once
// Data-parallel training on LibTorch's own distributed engine (c10d, ProcessGroupGloo): the ranks
// meet through a TCPStore (rank 0 serves it) or a FileStore, check that they run the same thing,
// start from rank 0's weights, and average their gradients every step. The trainer sees a narrow
// seam: which rows of a global batch are this rank's, a differentiable sum over ranks (for
// synchronised batch-norm statistics), and one call after the backward passes. Only
// DistributedContext.cpp includes c10d; this header needs just the tensor type.
#include "nn/train/DistributedEnv.h"

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tinyscope {

class DistributedContext {
public:
    // Meets the other ranks and creates the Gloo process group. InputError (exit 2), before c10d
    // is touched, for a host name that does not resolve, a GLOO_SOCKET_IFNAME that names no
    // interface, a port that rank 0 cannot bind, a rendezvous file tinyscope did not make; and for
    // a rank number that joins twice (two processes with one RANK, or a rendezvous file left by an
    // earlier run). DistributedError when the others do not all arrive within the timeout (one
    // deadline for connecting to rank 0's store and for the last rank to join).
    explicit DistributedContext(const DistributedEnv& env);
    ~DistributedContext();
    DistributedContext(const DistributedContext&) = delete;
    DistributedContext& operator=(const DistributedContext&) = delete;

    int rank() const { return env_.rank; }
    int worldSize() const { return env_.world_size; }
    bool isRoot() const { return env_.rank == 0; }
    const DistributedEnv& env() const { return env_; }

    // Every rank publishes `facts` (name, value) in the store; rank 0 compares every rank's with
    // its own, the others compare theirs with rank 0's. InputError naming the first fact that
    // differs, on every rank; each wait lasts at most the timeout.
    void requireSameRun(const std::vector<std::pair<std::string, std::string>>& facts);

    // Rows [first, last) of a global batch of `rows` rows: this rank's contiguous, disjoint shard.
    std::pair<std::size_t, std::size_t> shardOf(std::size_t rows) const;

    // Rank 0's values copied into every rank's tensors, in place (any dtypes; bucketed).
    void broadcastFromRoot(const std::vector<at::Tensor>& tensors);
    // Gradients averaged over ranks in place: flattened into ~25 MB buckets, every bucket's
    // all-reduce launched at once, then all waited for (after the step's last backward).
    void averageGradients(const std::vector<at::Tensor>& grads);
    // The sum over ranks of a per-rank tensor, differentiable: its backward sums the incoming
    // gradients over ranks too (synchronised batch norm, SubnetWeights.h).
    at::Tensor sumAcrossRanks(const at::Tensor& local);
    double average(double value);
    // DistributedError unless every rank passes the same value (e.g. a hash of the step's subnets).
    void requireSame(std::uint64_t value, const std::string& what);
    void barrier();

    // Communication so far: wall time waiting on collectives, payload bytes all-reduced, calls.
    struct Traffic {
        double seconds = 0;
        std::size_t bytes = 0, calls = 0;
        double gradient_seconds = 0;   // of which the gradient all-reduces
        std::size_t gradient_bytes = 0;
        double broadcast_seconds = 0;  // of which the starting state's broadcast
        std::size_t broadcast_bytes = 0;
    };
    const Traffic& traffic() const { return traffic_; }
    // The first collective failure's message (a rank died or timed out), empty if none.
    const std::string& failure() const { return failure_; }

    struct Impl;

private:
    DistributedEnv env_;
    std::unique_ptr<Impl> impl_;
    Traffic traffic_;
    std::string failure_;
    friend struct Impl;
};


}  // namespace tinyscope
