#pragma once
// PyTorch checkpoints in the real torch.save format (zip: data.pkl + one record per storage),
// read with our own safe pickle reader (LibTorch 1.13's pickle_load fails on real state dicts)
// and written so that Python's torch.load reads them.
#include "io/Pickle.h"

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

namespace tinyscope {

// Ordered like the file (state_dict() order).
using StateDict = std::vector<std::pair<std::string, at::Tensor>>;

// A checkpoint file: {"state_dict": sd, <other tensor dicts>, <text entries>} as the lab wraps its
// supernets, or a bare state dict. Extra sections (e.g. optimizer state) and text entries (e.g. a
// JSON training state) ride along without disturbing readers that only take ["state_dict"].
struct Checkpoint {
    StateDict state_dict;
    std::vector<std::pair<std::string, StateDict>> sections;
    std::vector<std::pair<std::string, std::string>> strings;
    bool wrapped = true;

    const StateDict* section(const std::string& name) const;
    const std::string* text(const std::string& name) const;
};

// Accepts a wrapped or bare state dict, whatever the zip's folder is called. Errors (not a zip,
// truncated, missing storage, non-tensor values) name the file and the key.
Checkpoint readCheckpoint(const std::string& path);
// The same from bytes in memory (`name` appears in messages); used by the fuzz target.
Checkpoint readCheckpointBytes(const std::string& bytes, const std::string& name);
StateDict loadStateDict(const std::string& path);

// Writes atomically, so an interrupted write leaves the previous file intact.
void writeCheckpoint(const std::string& path, const Checkpoint& checkpoint);
void saveStateDict(const std::string& path, const StateDict& sd, bool wrap = true);

const at::Tensor* findTensor(const StateDict& sd, const std::string& key);
std::string shapeString(const at::Tensor& t);   // "[32, 3, 3, 3]"
std::string shapeString(const std::vector<std::int64_t>& s);

}  // namespace tinyscope
