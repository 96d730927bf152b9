// Data-parallel supernet training on this machine (issue 23): images/s of one process with 2
// threads against two ranks (c10d + Gloo over loopback) with 1 thread each, the same global
// batch and recipe (demo2's width phase: the sandwich of 4 subnets per step); per step, the
// time spent waiting on all-reduces (gradients; batch-norm statistics and checks) and the
// bytes all-reduced; with synchronised and with local batch norm. Every configuration runs in fresh processes (fork before LibTorch starts).
//   bench_distributed [--steps N] [--batch B]
#include "BenchTiming.h"

#include "Error.h"
#include "JobControl.h"
#include "nn/supernet/Supernet.h"
#include "nn/train/DistributedContext.h"
#include "nn/train/SupernetTrainer.h"
#include "space/SpacePresets.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

using namespace tinyscope;

namespace {

struct Result {
    double images_per_second = 0;
    DistributedContext::Traffic traffic;
    std::int64_t parameter_bytes = 0;
    int ok = 0;
};

TrainRecipe benchRecipe(int batch, int steps, int threads)
{
    TrainRecipe r = TrainRecipe::preset("demo2");
    r.phases = {r.phases.back()};   // width: largest, smallest and two random subnets per step
    r.batch = batch;
    r.phases[0].images_per_epoch = static_cast<std::size_t>(batch) * static_cast<std::size_t>(steps + 2);
    r.monitor_images = 0;
    r.checkpoint_every = 1 << 30;
    r.warmup_steps = 0;
    r.threads = threads;
    return r;
}

// One process's share of a configuration, run in a forked child; the result comes back through a pipe.
Result runRank(int rank, int world, int port, int threads, int batch, int steps, bool syncBn, const std::string& out)
{
    Result res;
    DesignSpace space = presetSpace("mcunet-fmnist");
    SupernetTrainer trainer(space, benchRecipe(batch, steps, threads), out);
    std::unique_ptr<DistributedContext> dist;
    if (world > 1) {
        DistributedEnv env;
        env.enabled = true;
        env.rank = rank;
        env.world_size = world;
        env.master_addr = "127.0.0.1";
        env.master_port = port;
        env.timeout_seconds = 120;
        dist = std::make_unique<DistributedContext>(env);
        trainer.setDistributed(dist.get(), syncBn);
    }
    trainer.run(JobControl{}, [&](const TrainStatus& s) {
        if (s.event == "step") res.images_per_second = s.images_per_second;
    }, static_cast<std::size_t>(steps));
    if (dist) res.traffic = dist->traffic();
    res.parameter_bytes = Supernet::initialize(space, 0).parameterBytes();
    res.ok = 1;
    return res;
}

std::vector<Result> runConfig(int world, int threads, int batch, int steps, bool syncBn = true)
{
    const int port = 29600 + static_cast<int>(getpid() % 300) + (syncBn ? 0 : 1);
    std::vector<int> fds;
    std::vector<pid_t> pids;
    for (int rank = 0; rank < world; ++rank) {
        int fd[2];
        if (pipe(fd) != 0) std::exit(1);
        const pid_t pid = fork();
        if (pid == 0) {
            close(fd[0]);
            Result r;
            try {
                const std::string out = std::filesystem::temp_directory_path().string() + "/bench_distributed_" +
                                        std::to_string(getppid()) + "_" + std::to_string(world) + "_" + std::to_string(rank);
                std::filesystem::remove_all(out);
                std::filesystem::create_directories(out);
                r = runRank(rank, world, port, threads, batch, steps, syncBn, out);
                std::filesystem::remove_all(out);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
            }
            if (write(fd[1], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) _exit(1);
            _exit(0);
        }
        close(fd[1]);
        fds.push_back(fd[0]);
        pids.push_back(pid);
    }
    std::vector<Result> rs(static_cast<std::size_t>(world));
    for (int rank = 0; rank < world; ++rank) {
        if (read(fds[static_cast<std::size_t>(rank)], &rs[static_cast<std::size_t>(rank)], sizeof(Result)) != static_cast<ssize_t>(sizeof(Result)))
            rs[static_cast<std::size_t>(rank)].ok = 0;
        waitpid(pids[static_cast<std::size_t>(rank)], nullptr, 0);
    }
    return rs;
}

}  // namespace

int main(int argc, char** argv)
{
    int steps = 8, batch = 64;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--batch")) batch = std::atoi(argv[i + 1]);
    }
    bench::printMachine();
    std::printf("supernet mcunet-fmnist, demo2 width phase (4 subnets per step), global batch %d, %d steps\n", batch, steps);
    const std::vector<Result> one = runConfig(1, 2, batch, steps);
    const std::vector<Result> two = runConfig(2, 1, batch, steps);
    const std::vector<Result> local = runConfig(2, 1, batch, steps, false);
    if (!one[0].ok || !two[0].ok || !two[1].ok || !local[0].ok || !local[1].ok) {
        std::fprintf(stderr, "a configuration failed\n");
        return 1;
    }
    const double perStep = 1.0 / steps;
    std::printf("supernet parameters: %.2f MB (fp32)\n", static_cast<double>(one[0].parameter_bytes) / 1e6);
    std::printf("1 rank x 2 threads : %.1f images/s\n", one[0].images_per_second);
    for (const auto& [name, rs] : {std::pair<const char*, const std::vector<Result>*>{"2 ranks x 1 thread, synchronised BN", &two},
                                   {"2 ranks x 1 thread, local BN (--local-bn)", &local}}) {
        const DistributedContext::Traffic& t = (*rs)[0].traffic;
        std::printf("%s: %.1f images/s (%.2fx)\n", name, (*rs)[0].images_per_second, (*rs)[0].images_per_second / one[0].images_per_second);
        std::printf("  per step, rank 0: gradient all-reduce %.1f ms for %.2f MB; batch-norm statistics and checks %.1f ms for %.3f MB "
                    "(%.0f collectives per step in all)\n",
                    1e3 * t.gradient_seconds * perStep, static_cast<double>(t.gradient_bytes) * perStep / 1e6,
                    1e3 * (t.seconds - t.gradient_seconds - t.broadcast_seconds) * perStep,
                    static_cast<double>(t.bytes - t.gradient_bytes - t.broadcast_bytes) * perStep / 1e6,
                    static_cast<double>(t.calls) * perStep);
        std::printf("  once at start: broadcast of rank 0's state %.2f MB in %.1f ms\n", static_cast<double>(t.broadcast_bytes) / 1e6,
                    1e3 * t.broadcast_seconds);
    }
    return 0;
}
