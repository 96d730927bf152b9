#pragma once
// A safe reader and a writer for the subset of Python's pickle format that tensor checkpoints
// (torch.save) and numpy array dicts (TinyEngine params .pkl) use. Unlike Python's pickle, reading
// never runs code: only whitelisted globals are accepted, each interpreted by a fixed rule
// (OrderedDict, torch._utils._rebuild_tensor_v2, numpy's ndarray reconstruction, ...); anything
// else is refused with a message naming the global. Torch-free: tensors come back as references
// to storages that the checkpoint reader resolves.
//
// Reading is bounded: a pickle may be at most kMaxPickleBytes long, and the values it creates
// (every object, stack slot, memo entry and copied byte counted) at most kMaxPickleMemory, so a
// small file that expands (4 MB of None deflated to 4 KB inside a .pth) is refused instead of
// taking gigabytes. See docs/EVALUATOR.md, "Checkpoints".
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tinyscope {

constexpr std::size_t kMaxPickleBytes = std::size_t(64) << 20;     // 64 MiB
constexpr std::size_t kMaxPickleMemory = std::size_t(256) << 20;   // 256 MiB

enum class ScalarType { Float32, Float64, Float16, BFloat16, Int64, Int32, Int16, Int8, UInt8, Bool };
int scalarSize(ScalarType t);
const char* scalarName(ScalarType t);   // "float32", "int8", ...

// The product of `shape` (1 for a scalar); false if a dimension is negative or the product
// overflows int64 (sizes are multiplied only through this and checkedMul).
bool elementCount(const std::vector<std::int64_t>& shape, std::int64_t& count);
// a * b (both >= 0) into `out`; false on overflow.
bool checkedMul(std::int64_t a, std::int64_t b, std::int64_t& out);

// A tensor inside a torch checkpoint: a view of a storage record "data/<key>".
struct TensorRef {
    std::string storage_key;
    ScalarType dtype = ScalarType::Float32;
    std::int64_t storage_numel = 0;    // as declared in the persistent id
    std::int64_t offset = 0;           // in elements
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> stride;
};

// A numpy array (C or Fortran order) with its raw little-endian bytes.
struct NdArray {
    ScalarType dtype = ScalarType::Float32;
    std::vector<std::int64_t> shape;
    bool fortran_order = false;
    std::string data;
    std::int64_t numel() const;   // throws InputError if the shape's product overflows

};

struct PyValue;
using PyRef = std::shared_ptr<PyValue>;

struct PyValue {
    enum class Kind { None, Bool, Int, Float, Str, Bytes, List, Tuple, Dict, Storage, Tensor, Array, Global, Dtype };
    Kind kind = Kind::None;
    bool b = false;
    std::int64_t i = 0;
    double f = 0;
    std::string s;                                // Str, Bytes, Global ("module.name")
    std::vector<PyRef> items;                     // List, Tuple
    std::vector<std::pair<PyRef, PyRef>> dict;    // Dict (insertion order)
    TensorRef tensor;                             // Tensor; Storage uses key, dtype, storage_numel
    NdArray array;                                // Array; Dtype uses array.dtype
    int depth = 0;                                // nesting depth (bounded while reading)
    bool contained = false;                       // placed inside another value (no more mutation)

    static PyRef none();
    static PyRef boolean(bool v);
    static PyRef integer(std::int64_t v);
    static PyRef real(double v);
    static PyRef str(std::string v);
    static PyRef bytes(std::string v);
    static PyRef list(std::vector<PyRef> v = {});
    static PyRef tuple(std::vector<PyRef> v = {});
    static PyRef dictionary();
    static PyRef tensorRef(TensorRef t);
    static PyRef ndarray(NdArray a);

    // Dict lookup by string key; nullptr if absent or not a dict.
    PyRef get(const std::string& key) const;
    const char* kindName() const;
};

// Parses a pickle. `source` names the file in messages ("model.pth: data.pkl: ...").
// Throws InputError on malformed data, unsupported opcodes, globals outside the whitelist, or a
// pickle beyond the limits above.
PyRef readPickle(const std::string& bytes, const std::string& source);

// Writes `value` as a pickle (protocol 2 for torch.save-compatible data.pkl, 3 when bytes occur).
// Tensors are written as torch._utils._rebuild_tensor_v2 with persistent storage ids; Dicts whose
// `ordered` flag is set as collections.OrderedDict; Arrays as numpy ndarrays.
struct PickleWriteOptions {
    int protocol = 2;
    bool ordered_dicts = false;   // write dicts as collections.OrderedDict (what state_dict() returns)
};
std::string writePickle(const PyValue& value, const PickleWriteOptions& options = {});

}  // namespace tinyscope
