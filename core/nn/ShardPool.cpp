#include "nn/ShardPool.h"

#include "nn/TorchRuntime.h"

#include <c10/core/InferenceMode.h>

namespace tinyscope {

ShardPool::ShardPool(int threads)
{
    if (threads < 1) threads = 1;
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this, i] { workerLoop(i); });
}

ShardPool::~ShardPool()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
}

void ShardPool::workerLoop(int index)
{
    setTorchThreads(1);
    c10::InferenceMode noAutograd;   // shard work never records gradients
    unsigned long long seen = 0;
    while (true) {
        const std::function<void(int)>* task;
        int shards;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            task = task_;
            shards = shards_;
        }
        std::exception_ptr err;
        try {
            for (int s = index; s < shards; s += threads()) (*task)(s);
        } catch (...) {
            err = std::current_exception();
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (err && !error_) error_ = err;
            if (--pending_ == 0) done_.notify_one();
        }
    }
}

void ShardPool::run(int shards, const std::function<void(int)>& task)
{
    if (shards <= 0) return;
    std::lock_guard<std::mutex> job(runMutex_);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        task_ = &task;
        shards_ = shards;
        pending_ = static_cast<int>(workers_.size());
        error_ = nullptr;
        ++generation_;
    }
    wake_.notify_all();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
}

}  // namespace tinyscope
