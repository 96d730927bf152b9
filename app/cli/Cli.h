#pragma once
// The `tinyscope <command>` front end. Each command is a thin reader of the core; errors from
// the core are printed as one line on stderr with exit code 2 (bad input) or 3 (infeasible).
#include <functional>
#include <string>
#include <vector>

namespace tinyscope::cli {

using Args = std::vector<std::string>;

struct Command {
    const char* name;
    const char* summary;
    std::function<int(const Args&)> run;
};

// Registered by each command group; add a group to allCommands() in Cli.cpp.
std::vector<Command> costCommands();   // CostCommands.cpp: cost, encode, decode, space
std::vector<Command> evalCommands();   // EvalCommands.cpp: forward, eval, classify
std::vector<Command> trainCommands();  // TrainCommands.cpp: train-supernet, make-accdata
std::vector<Command> graphCommands();  // GraphCommands.cpp: zoo, train-graph, memory
std::vector<Command> exportCommands(); // ExportCommands.cpp: quantize, export, inspect
std::vector<Command> searchCommands(); // SearchCommands.cpp: train-predictor, predict, search
std::vector<Command> deviceCommands(); // DeviceCommands.cpp: device-run
std::vector<Command> deployCommands(); // DeployCommands.cpp: deploy
std::vector<Command> fineTuneCommands(); // FineTuneCommands.cpp: finetune, finetune-table
std::vector<Command> tourCommands();   // TourCommands.cpp: tour
std::vector<Command> compressCommands(); // CompressCommands.cpp: prune
// `tinyscope quantize --bits …` (Lab 2's n-bit weights, CompressCommands.cpp): cmdQuantize hands
// over when --bits is given.
int quantizeBits(const Args& args);
bool wantsBits(const Args& args);

int runCli(const Args& args);   // args[0] is the command name
void printUsage();

}  // namespace tinyscope::cli
