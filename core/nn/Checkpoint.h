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

struct CheckpointContents {
    StateDict tensors;          // the state dict
    bool wrapped = false;       // the file held {"state_dict": ...}
    PyRef extra;                // other top-level entries of a wrapped file (a dict), or nullptr
};

// Accepts {"state_dict": sd, ...} and a bare state dict, whatever the zip's folder is called.
// Errors (not a zip, truncated, missing storage, non-tensor values) name the file and the key.
CheckpointContents readCheckpoint(const std::string& path);
StateDict loadStateDict(const std::string& path);

// Writes atomically. `wrap` writes {"state_dict": sd} (plus `extra`'s entries, a Dict) as the lab does.
void saveStateDict(const std::string& path, const StateDict& sd, bool wrap = true, const PyRef& extra = nullptr);

const at::Tensor* findTensor(const StateDict& sd, const std::string& key);
std::string shapeString(const at::Tensor& t);   // "[32, 3, 3, 3]"
std::string shapeString(const std::vector<std::int64_t>& s);

}  // namespace tinyscope
