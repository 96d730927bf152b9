#include "nn/Checkpoint.h"

#include "Error.h"
#include "io/AtomicFile.h"

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace tinyscope {

namespace {

at::ScalarType toAten(ScalarType t)
{
    switch (t) {
    case ScalarType::Float32: return at::kFloat;
    case ScalarType::Float64: return at::kDouble;
    case ScalarType::Float16: return at::kHalf;
    case ScalarType::BFloat16: return at::kBFloat16;
    case ScalarType::Int64: return at::kLong;
    case ScalarType::Int32: return at::kInt;
    case ScalarType::Int16: return at::kShort;
    case ScalarType::Int8: return at::kChar;
    case ScalarType::UInt8: return at::kByte;
    case ScalarType::Bool: return at::kBool;
    }
    return at::kFloat;
}

ScalarType fromAten(at::ScalarType t, const std::string& key)
{
    switch (t) {
    case at::kFloat: return ScalarType::Float32;
    case at::kDouble: return ScalarType::Float64;
    case at::kHalf: return ScalarType::Float16;
    case at::kBFloat16: return ScalarType::BFloat16;
    case at::kLong: return ScalarType::Int64;
    case at::kInt: return ScalarType::Int32;
    case at::kShort: return ScalarType::Int16;
    case at::kChar: return ScalarType::Int8;
    case at::kByte: return ScalarType::UInt8;
    case at::kBool: return ScalarType::Bool;
    default: throw InputError("cannot save tensor '" + key + "' of type " + std::string(c10::toString(t)));
    }
}

std::string firstLine(const std::string& s)
{
    std::string l = s.substr(0, s.find('\n'));
    return l;
}

}  // namespace

std::string shapeString(const std::vector<std::int64_t>& s)
{
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

std::string shapeString(const at::Tensor& t)
{
    return shapeString(t.sizes().vec());
}

const at::Tensor* findTensor(const StateDict& sd, const std::string& key)
{
    for (const auto& kv : sd)
        if (kv.first == key) return &kv.second;
    return nullptr;
}

CheckpointContents readCheckpoint(const std::string& path)
{
    {
        std::ifstream probe(path, std::ios::binary);
        if (!probe) throw InputError(path + ": cannot open: " + std::strerror(errno));
        char magic[4] = {};
        probe.read(magic, 4);
        if (probe.gcount() < 4 || std::memcmp(magic, "PK\x03\x04", 4) != 0)
            throw InputError(path + ": not a PyTorch checkpoint (expected the zip format torch.save writes)");
    }
    std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
    std::string pkl;
    try {
        reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
        if (!reader->hasRecord("data.pkl"))
            throw InputError(path + ": not a PyTorch checkpoint: the archive has no data.pkl");
        auto [ptr, size] = reader->getRecord("data.pkl");
        pkl.assign(static_cast<const char*>(ptr.get()), size);
    } catch (const c10::Error& e) {
        throw InputError(path + ": unreadable checkpoint (truncated or corrupt zip): " + firstLine(e.what_without_backtrace()));
    }
    PyRef root = readPickle(pkl, path + ": data.pkl");

    CheckpointContents out;
    PyRef sd = root;
    if (root->kind == PyValue::Kind::Dict) {
        if (PyRef inner = root->get("state_dict"); inner && inner->kind == PyValue::Kind::Dict) {
            sd = inner;
            out.wrapped = true;
            out.extra = PyValue::dictionary();
            for (const auto& kv : root->dict)
                if (!(kv.first->kind == PyValue::Kind::Str && kv.first->s == "state_dict")) out.extra->dict.push_back(kv);
        }
    }
    if (sd->kind != PyValue::Kind::Dict)
        throw InputError(path + ": expected a state dict (or {\"state_dict\": ...}), found a " + sd->kindName());

    for (const auto& kv : sd->dict) {
        if (kv.first->kind != PyValue::Kind::Str)
            throw InputError(path + ": state dict key is a " + std::string(kv.first->kindName()) + ", expected a string");
        const std::string& key = kv.first->s;
        if (kv.second->kind != PyValue::Kind::Tensor)
            throw InputError(path + ": '" + key + "' is a " + kv.second->kindName() + ", expected a tensor");
        const TensorRef& t = kv.second->tensor;
        at::DataPtr data;
        std::size_t size = 0;
        const std::string record = "data/" + t.storage_key;
        try {
            if (!reader->hasRecord(record))
                throw InputError(path + ": tensor '" + key + "': storage record '" + record + "' is missing");
            std::tie(data, size) = reader->getRecord(record);
        } catch (const c10::Error& e) {
            throw InputError(path + ": tensor '" + key + "': cannot read '" + record + "': " + firstLine(e.what_without_backtrace()));
        }
        const std::int64_t elem = scalarSize(t.dtype);
        const std::int64_t numel = static_cast<std::int64_t>(size) / elem;
        if (static_cast<std::int64_t>(size) < t.storage_numel * elem)
            throw InputError(path + ": tensor '" + key + "': storage holds " + std::to_string(size) + " bytes, " +
                             std::to_string(t.storage_numel * elem) + " declared");
        // The view must stay inside the storage.
        std::int64_t last = t.offset, count = 1;
        for (std::size_t d = 0; d < t.shape.size(); ++d) {
            count *= t.shape[d];
            if (t.shape[d] > 0) last += (t.shape[d] - 1) * t.stride[d];
        }
        if (count > 0 && last >= numel)
            throw InputError(path + ": tensor '" + key + "' of shape " + shapeString(t.shape) +
                             " reaches past its storage of " + std::to_string(numel) + " elements");
        at::Tensor storage = at::empty({numel}, at::TensorOptions().dtype(toAten(t.dtype)));
        std::memcpy(storage.data_ptr(), data.get(), static_cast<std::size_t>(numel * elem));
        at::Tensor view = count == 0 ? at::empty(t.shape, storage.options())
                                     : storage.as_strided(t.shape, t.stride, t.offset).contiguous();
        out.tensors.emplace_back(key, view);
    }
    return out;
}

StateDict loadStateDict(const std::string& path)
{
    return readCheckpoint(path).tensors;
}

void saveStateDict(const std::string& path, const StateDict& sd, bool wrap, const PyRef& extra)
{
    std::string buffer;
    caffe2::serialize::PyTorchStreamWriter writer([&buffer](const void* p, std::size_t n) {
        buffer.append(static_cast<const char*>(p), n);
        return n;
    });
    PyRef dict = PyValue::dictionary();
    std::vector<at::Tensor> keep;
    for (std::size_t i = 0; i < sd.size(); ++i) {
        at::Tensor t = sd[i].second.contiguous().cpu();
        keep.push_back(t);
        TensorRef ref;
        ref.storage_key = std::to_string(i);
        ref.dtype = fromAten(t.scalar_type(), sd[i].first);
        ref.storage_numel = t.numel();
        ref.shape = t.sizes().vec();
        ref.stride = t.strides().vec();
        dict->dict.emplace_back(PyValue::str(sd[i].first), PyValue::tensorRef(ref));
        writer.writeRecord("data/" + ref.storage_key, t.data_ptr(), static_cast<std::size_t>(t.nbytes()));
    }
    PyRef root = dict;
    if (wrap) {
        root = PyValue::dictionary();
        root->dict.emplace_back(PyValue::str("state_dict"), dict);
        if (extra && extra->kind == PyValue::Kind::Dict)
            for (const auto& kv : extra->dict) root->dict.push_back(kv);
    }
    PickleWriteOptions opt;
    opt.protocol = 2;
    opt.ordered_dicts = true;   // state_dict() is an OrderedDict
    std::string pkl = writePickle(*root, opt);
    writer.writeRecord("data.pkl", pkl.data(), pkl.size());
    writer.writeEndOfFile();
    writeFileAtomic(path, buffer);
}

}  // namespace tinyscope
