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

const StateDict* Checkpoint::section(const std::string& name) const
{
    for (const auto& kv : sections)
        if (kv.first == name) return &kv.second;
    return nullptr;
}

const std::string* Checkpoint::text(const std::string& name) const
{
    for (const auto& kv : strings)
        if (kv.first == name) return &kv.second;
    return nullptr;
}

namespace {

class ArchiveReader {
public:
    // From a file, or (bytes != nullptr) from memory.
    ArchiveReader(const std::string& path, const std::string* bytes) : path_(path)
    {
        char magic[4] = {};
        if (bytes) {
            if (bytes->size() >= 4) std::memcpy(magic, bytes->data(), 4);
        } else {
            std::ifstream probe(path, std::ios::binary);
            if (!probe) throw InputError(path + ": cannot open: " + std::strerror(errno));
            probe.read(magic, 4);
        }
        if (std::memcmp(magic, "PK\x03\x04", 4) != 0)
            throw InputError(path + ": not a PyTorch checkpoint (expected the zip format torch.save writes)");
        try {
            if (bytes) {
                stream_ = std::make_unique<std::istringstream>(*bytes);
                reader_ = std::make_unique<caffe2::serialize::PyTorchStreamReader>(stream_.get());
            } else {
                reader_ = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
            }
            if (!reader_->hasRecord("data.pkl"))
                throw InputError(path + ": not a PyTorch checkpoint: the archive has no data.pkl");
            auto [ptr, size] = reader_->getRecord("data.pkl");
            pkl_.assign(static_cast<const char*>(ptr.get()), size);
        } catch (const c10::Error& e) {
            throw InputError(path + ": unreadable checkpoint (truncated or corrupt zip): " + firstLine(e.what_without_backtrace()));
        }
    }
    const std::string& pickle() const { return pkl_; }

    StateDict tensors(const PyValue& dict, const std::string& where)
    {
        StateDict out;
        for (const auto& kv : dict.dict) {
            if (kv.first->kind != PyValue::Kind::Str)
                throw InputError(path_ + ": " + where + " key is a " + std::string(kv.first->kindName()) + ", expected a string");
            const std::string& key = kv.first->s;
            if (kv.second->kind != PyValue::Kind::Tensor)
                throw InputError(path_ + ": '" + key + "' is a " + kv.second->kindName() + ", expected a tensor");
            out.emplace_back(key, tensor(key, kv.second->tensor));
        }
        return out;
    }

private:
    at::Tensor tensor(const std::string& key, const TensorRef& t)
    {
        at::DataPtr data;
        std::size_t size = 0;
        const std::string record = "data/" + t.storage_key;
        try {
            if (!reader_->hasRecord(record))
                throw InputError(path_ + ": tensor '" + key + "': storage record '" + record + "' is missing");
            std::tie(data, size) = reader_->getRecord(record);
        } catch (const c10::Error& e) {
            throw InputError(path_ + ": tensor '" + key + "': cannot read '" + record + "': " + firstLine(e.what_without_backtrace()));
        }
        const std::int64_t elem = scalarSize(t.dtype);
        const std::int64_t numel = static_cast<std::int64_t>(size) / elem;
        if (static_cast<std::int64_t>(size) < t.storage_numel * elem)
            throw InputError(path_ + ": tensor '" + key + "': storage holds " + std::to_string(size) + " bytes, " +
                             std::to_string(t.storage_numel * elem) + " declared");
        // The view must stay inside the storage.
        std::int64_t last = t.offset, count = 1;
        for (std::size_t d = 0; d < t.shape.size(); ++d) {
            count *= t.shape[d];
            if (t.shape[d] > 0) last += (t.shape[d] - 1) * t.stride[d];
        }
        if (count > 0 && last >= numel)
            throw InputError(path_ + ": tensor '" + key + "' of shape " + shapeString(t.shape) +
                             " reaches past its storage of " + std::to_string(numel) + " elements");
        at::Tensor storage = at::empty({numel}, at::TensorOptions().dtype(toAten(t.dtype)));
        std::memcpy(storage.data_ptr(), data.get(), static_cast<std::size_t>(numel * elem));
        return count == 0 ? at::empty(t.shape, storage.options()) : storage.as_strided(t.shape, t.stride, t.offset).contiguous();
    }

    std::string path_;
    std::unique_ptr<std::istringstream> stream_;
    std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader_;
    std::string pkl_;
};

bool allTensors(const PyValue& d)
{
    if (d.kind != PyValue::Kind::Dict) return false;
    for (const auto& kv : d.dict)
        if (kv.second->kind != PyValue::Kind::Tensor) return false;
    return true;
}

}  // namespace

namespace {
Checkpoint readArchive(const std::string& path, const std::string* bytes)
{
    ArchiveReader archive(path, bytes);
    PyRef root = readPickle(archive.pickle(), path + ": data.pkl");
    Checkpoint out;
    PyRef sd = root;
    out.wrapped = false;
    if (root->kind == PyValue::Kind::Dict) {
        if (PyRef inner = root->get("state_dict"); inner && inner->kind == PyValue::Kind::Dict) {
            sd = inner;
            out.wrapped = true;
            for (const auto& kv : root->dict) {
                if (kv.first->kind != PyValue::Kind::Str || kv.first->s == "state_dict") continue;
                if (kv.second->kind == PyValue::Kind::Str) out.strings.emplace_back(kv.first->s, kv.second->s);
                else if (allTensors(*kv.second)) out.sections.emplace_back(kv.first->s, archive.tensors(*kv.second, kv.first->s));
            }
        }
    }
    if (sd->kind != PyValue::Kind::Dict)
        throw InputError(path + ": expected a state dict (or {\"state_dict\": ...}), found a " + sd->kindName());
    out.state_dict = archive.tensors(*sd, "state dict");
    return out;
}
}  // namespace

Checkpoint readCheckpoint(const std::string& path)
{
    return readArchive(path, nullptr);
}

Checkpoint readCheckpointBytes(const std::string& bytes, const std::string& name)
{
    return readArchive(name, &bytes);
}

StateDict loadStateDict(const std::string& path)
{
    return readCheckpoint(path).state_dict;
}

void writeCheckpoint(const std::string& path, const Checkpoint& ck)
{
    std::string buffer;
    caffe2::serialize::PyTorchStreamWriter writer([&buffer](const void* p, std::size_t n) {
        buffer.append(static_cast<const char*>(p), n);
        return n;
    });
    std::size_t next = 0;
    auto dictOf = [&](const StateDict& sd) {
        PyRef dict = PyValue::dictionary();
        for (const auto& kv : sd) {
            at::Tensor t = kv.second.contiguous().cpu();
            TensorRef ref;
            ref.storage_key = std::to_string(next++);
            ref.dtype = fromAten(t.scalar_type(), kv.first);
            ref.storage_numel = t.numel();
            ref.shape = t.sizes().vec();
            ref.stride = t.strides().vec();
            dict->dict.emplace_back(PyValue::str(kv.first), PyValue::tensorRef(ref));
            writer.writeRecord("data/" + ref.storage_key, t.data_ptr(), static_cast<std::size_t>(t.nbytes()));
        }
        return dict;
    };
    PyRef root;
    if (ck.wrapped) {
        root = PyValue::dictionary();
        root->dict.emplace_back(PyValue::str("state_dict"), dictOf(ck.state_dict));
        for (const auto& s : ck.sections) root->dict.emplace_back(PyValue::str(s.first), dictOf(s.second));
        for (const auto& s : ck.strings) root->dict.emplace_back(PyValue::str(s.first), PyValue::str(s.second));
    } else {
        root = dictOf(ck.state_dict);
    }
    PickleWriteOptions opt;
    opt.protocol = 2;
    opt.ordered_dicts = true;   // state_dict() is an OrderedDict
    std::string pkl = writePickle(*root, opt);
    writer.writeRecord("data.pkl", pkl.data(), pkl.size());
    writer.writeEndOfFile();
    writeFileAtomic(path, buffer);
}

void saveStateDict(const std::string& path, const StateDict& sd, bool wrap)
{
    Checkpoint ck;
    ck.state_dict = sd;
    ck.wrapped = wrap;
    writeCheckpoint(path, ck);
}

}  // namespace tinyscope
