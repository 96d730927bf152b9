#pragma once
// The latency of one image through a subnet on this CPU, as the pruning lab measures it
// (measure_latency: warm-up runs, then the time per run of batch 1): on our oneDNN engine, one
// thread, BatchNorm folded; LibTorch when oneDNN refuses the subnet (the engine is named). The
// median of `runs` runs, so a busy machine's outliers do not decide it. Includes LibTorch types.
#include <string>
#include <utility>

namespace tinyscope {

class Subnet;

struct Latency {
    double ms = 0;            // median per image
    std::string engine;       // "oneDNN" or "LibTorch (oneDNN refused: …)"
    int runs = 0;
};

// `sub` is folded (its BatchNorm) and left folded.
Latency subnetLatency(Subnet& sub, int runs = 50, int warmup = 10);
// Two subnets taking turns, run by run (a then b, `runs` times after `warmup` turns), so that a
// change of the machine's load between them does not decide their ratio. Both left folded.
std::pair<Latency, Latency> subnetLatencies(Subnet& a, Subnet& b, int runs = 50, int warmup = 10);

}  // namespace tinyscope
