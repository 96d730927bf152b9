#pragma once
// A fixed set of threads that run the shards of one job in parallel, each with single-threaded
// LibTorch / BLAS kernels and without autograd (InferenceMode), and wait passively (condition
// variable) between jobs.
//
// Why not LibTorch's own threads: its OpenMP team spin-waits at every barrier; on a busy 2-core
// machine a spinning thread steals the core its partner needs, and one MLP epoch went from 1.2 s
// (1 thread) to 16-26 s (2 threads). Sharding a batch costs one hand-over per job instead of one
// barrier per kernel, and never spins (docs/BENCHMARKS.md, "Predictor").
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tinyscope {

class ShardPool {
public:
    explicit ShardPool(int threads);   // threads >= 1 workers
    ~ShardPool();
    ShardPool(const ShardPool&) = delete;
    ShardPool& operator=(const ShardPool&) = delete;

    int threads() const { return static_cast<int>(workers_.size()); }
    // Calls task(shard) for shard = 0..shards-1 on the workers (shard s on worker s mod threads)
    // and returns when all are done; the caller only waits, so its own thread settings never
    // change. Rethrows the first exception a shard threw. One job at a time: concurrent callers
    // take turns.
    void run(int shards, const std::function<void(int)>& task);

private:
    void workerLoop(int index);

    std::vector<std::thread> workers_;
    std::mutex runMutex_;   // one job at a time
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    const std::function<void(int)>* task_ = nullptr;
    int shards_ = 0;
    unsigned long long generation_ = 0;
    int pending_ = 0;
    bool stop_ = false;
    std::exception_ptr error_;
};

}  // namespace tinyscope
