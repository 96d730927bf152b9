// tinyscope train-supernet
#include "cli/Cli.h"
#include "cli/CliArgs.h"

#include "Error.h"
#include "nn/SupernetTrainer.h"
#include "space/SpacePresets.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace tinyscope::cli {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void onSignal(int) { g_stop = true; }

std::string hms(double s)
{
    const long t = static_cast<long>(s + 0.5);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    return buf;
}

int cmdTrainSupernet(const Args& argv)
{
    CliArgs a(argv, {"space", "out", "preset", "recipe", "seed", "threads", "max-steps", "print-every"}, {"help", "show-recipe"});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope train-supernet --out DIR [--space NAME|FILE] [--preset demo|tiny | --recipe FILE.json]\n"
                     "                               [--seed S] [--threads N] [--max-steps N] [--show-recipe]\n"
                     "  Once-for-all training with progressive shrinking and the sandwich rule. DIR/supernet.pth is a\n"
                     "  real-format checkpoint written after every epoch and every few hundred steps; running the same\n"
                     "  command again resumes from it. Ctrl-C writes a checkpoint and stops.\n";
        return 0;
    }
    DesignSpace space = loadSpace(a.value("space", "mcunet-fmnist"));
    TrainRecipe recipe = a.has("recipe") ? TrainRecipe::fromJson(readJsonFile(a.value("recipe")), a.value("recipe"))
                                         : TrainRecipe::preset(a.value("preset", "demo"));
    if (a.has("seed")) recipe.seed = static_cast<std::uint64_t>(a.int64Value("seed", 0));
    if (a.has("threads")) recipe.threads = a.intValue("threads", 2);
    if (a.flag("show-recipe")) {
        std::cout << recipe.toJson().dump(2) << "\n";
        return 0;
    }
    if (!a.has("out")) throw InputError("--out DIR is required");
    const std::string out = a.value("out");
    ::mkdir(out.c_str(), 0755);
    const int every = a.intValue("print-every", isatty(1) ? 1 : 20);
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    JobControl job;
    job.cancel = &g_stop;
    SupernetTrainer trainer(space, recipe, out);
    const bool tty = isatty(1);
    auto onStatus = [&](const TrainStatus& s) {
        if (s.event == "step" && (s.global_step % static_cast<std::size_t>(every) == 0 || s.step + 1 == s.steps_per_epoch)) {
            std::printf("%s[%s %d/%d] epoch %d/%d step %zu/%zu  loss %.4f  lr %.4f  %.0f img/s  elapsed %s  ETA %s%s",
                        tty ? "\r" : "", s.phase.c_str(), s.phase_index + 1, s.phases, s.epoch + 1, s.epochs, s.step + 1,
                        s.steps_per_epoch, s.loss, s.lr, s.images_per_second, hms(s.elapsed_seconds).c_str(),
                        hms(s.eta_seconds).c_str(), tty ? "   " : "\n");
            std::fflush(stdout);
        } else if (s.event == "epoch") {
            std::printf("%sepoch done: %s epoch %d, holdout top-1 %s (elapsed %s)\n", tty ? "\n" : "", s.phase.c_str(), s.epoch + 1,
                        s.monitor.is_null() ? "n/a" : s.monitor.dump().c_str(), hms(s.elapsed_seconds).c_str());
        } else if (s.event == "resumed") {
            std::printf("resuming %s at phase %s, epoch %d, step %zu (global step %zu of %zu, %s already spent)\n", out.c_str(),
                        s.phase.c_str(), s.epoch + 1, s.step, s.global_step, s.total_steps, hms(s.elapsed_seconds).c_str());
        } else if (s.event == "checkpoint") {
            if (!tty) std::printf("checkpoint at global step %zu\n", s.global_step);
        } else if (s.event == "done") {
            std::printf("%straining finished in %s; supernet: %s/supernet.pth\n", tty ? "\n" : "", hms(s.elapsed_seconds).c_str(),
                        out.c_str());
        }
        std::fflush(stdout);
    };
    const bool finished = trainer.run(job, onStatus, static_cast<std::size_t>(a.int64Value("max-steps", 0)));
    if (!finished) std::printf("stopped after --max-steps; run the same command again to continue\n");
    return 0;
}

}  // namespace

std::vector<Command> trainCommands()
{
    return {
        {"train-supernet", "once-for-all training of a supernet (resumable)", cmdTrainSupernet},
    };
}

}  // namespace tinyscope::cli
