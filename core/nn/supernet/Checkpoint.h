#pragma once
// PyTorch checkpoints in the real torch.save format (zip: data.pkl + one record per storage),
// read with our own safe pickle reader (LibTorch 1.13's pickle_load fails on real state dicts)
// and written so that Python's torch.load reads them.
#include "io/Pickle.h"

#include <ATen/core/Tensor.h>

#include <cstdint>

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

// What reading may take: the storages plus the copies of non-contiguous views must fit in
// max_tensor_bytes (checked before anything is extracted); `limit_reason` says where the bound
// comes from in the message. `sections` false reads only the state dict.
constexpr std::uint64_t kMaxCheckpointTensorBytes = std::uint64_t(2) << 30;   // 2 GiB
struct CheckpointReadOptions {
    std::uint64_t max_tensor_bytes = kMaxCheckpointTensorBytes;
    std::string limit_reason = "the 2 GiB a checkpoint may hold";
    bool sections = true;
};

// Accepts a wrapped or bare state dict, whatever the zip's folder is called. Errors (not a zip,
// truncated, a record failing its CRC-32, sizes beyond the limits, missing storage, non-tensor
// values) name the file and the key. The limits are in docs/EVALUATOR.md ("Checkpoints").
Checkpoint readCheckpoint(const std::string& path, const CheckpointReadOptions& options = {});
// The same from bytes in memory (`name` appears in messages); used by the fuzz target.
Checkpoint readCheckpointBytes(const std::string& bytes, const std::string& name, const CheckpointReadOptions& options = {});
// Only the state dict (other sections are not extracted).
StateDict loadStateDict(const std::string& path, CheckpointReadOptions options = {});

// Refuses a tensor whose values make every result meaningless: a NaN or infinite element (after
// conversion to float32, what the evaluator computes with), or a negative value in a batch-norm
// running variance (a key ending in "running_var"). The InputError names `source`, the key, the
// first bad element's index and its value.
void checkTensorValues(const std::string& source, const std::string& key, const at::Tensor& t);

// The file's bytes (PyTorch's zip format, pickle protocol 2).
std::string checkpointBytes(const Checkpoint& checkpoint);
// Writes atomically, so an interrupted write leaves the previous file intact.
void writeCheckpoint(const std::string& path, const Checkpoint& checkpoint);
void saveStateDict(const std::string& path, const StateDict& sd, bool wrap = true);

const at::Tensor* findTensor(const StateDict& sd, const std::string& key);
std::string shapeString(const at::Tensor& t);   // "[32, 3, 3, 3]"
std::string shapeString(const std::vector<std::int64_t>& s);

}  // namespace tinyscope
