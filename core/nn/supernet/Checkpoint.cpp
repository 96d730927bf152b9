#include "nn/supernet/Checkpoint.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/ZipDirectory.h"

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
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

std::string hex32(std::uint32_t v)
{
    char b[16];
    std::snprintf(b, sizeof b, "0x%08x", v);
    return b;
}

// One tensor the pickle names, with where it appears ("state dict" or a section) for messages.
struct TensorSlot {
    std::string label;   // "key" in the state dict, "section/key" elsewhere
    const TensorRef* ref;
};

// The zip (through PyTorch's reader, which extracts) checked against our own reading of its
// central directory: sizes before anything is extracted, CRC-32s after.
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
        dir_ = bytes ? ZipDirectory::fromBytes(*bytes, path) : ZipDirectory::fromFile(path);
        // Like PyTorchStreamReader: every record lives in the folder the first entry names.
        const std::string& first = dir_.entries().front().name;
        if (first.find('/') == std::string::npos)
            throw InputError(path + ": not a PyTorch checkpoint: '" + first + "' is not in the archive's folder");
        prefix_ = first.substr(0, first.find('/') + 1);
        // Records PyTorch's reader extracts by itself (version) or we read whole (data.pkl) are
        // small in any real file; storages are bounded per read (see plan()).
        for (const ZipEntry& e : dir_.entries())
            if (e.name.compare(0, prefix_.size() + 5, prefix_ + "data/") != 0 && e.uncompressed_size > kMaxPickleBytes)
                throw InputError(path + ": record '" + e.name + "' declares " + std::to_string(e.uncompressed_size) +
                                 " bytes, more than the " + std::to_string(kMaxPickleBytes >> 20) + " MiB a checkpoint's data.pkl may have");
        if (!dir_.find(prefix_ + "data.pkl")) throw InputError(path + ": not a PyTorch checkpoint: the archive has no data.pkl");
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
            verify("data.pkl", ptr.get(), size, "");
            pkl_.assign(static_cast<const char*>(ptr.get()), size);
        } catch (const c10::Error& e) {
            throw InputError(path + ": unreadable checkpoint (truncated or corrupt zip): " + firstLine(e.what_without_backtrace()));
        } catch (const std::bad_alloc&) {
            throw InputError(path + ": out of memory reading data.pkl");
        }
    }
    const std::string& pickle() const { return pkl_; }

    // Checks every tensor before any storage is extracted: its record exists and holds exactly the
    // bytes the pickle declares, its view stays inside the storage (overflow-checked), and the
    // storages plus the copies of non-contiguous views fit in `maxBytes`.
    void plan(const std::vector<TensorSlot>& slots, std::uint64_t maxBytes, const std::string& limitReason)
    {
        std::uint64_t total = 0;
        auto add = [&](std::int64_t bytes, const std::string& label) {
            total += static_cast<std::uint64_t>(bytes);
            if (total > maxBytes)
                throw InputError(path_ + ": tensor '" + label + "': the tensors need more than " + std::to_string(maxBytes) + " bytes (" +
                                 limitReason + ")");
        };
        for (const TensorSlot& s : slots) {
            const TensorRef& t = *s.ref;
            const std::string tensor = path_ + ": tensor '" + s.label + "'";
            const std::string record = "data/" + t.storage_key;
            const ZipEntry* entry = dir_.find(prefix_ + record);
            if (!entry) throw InputError(tensor + ": storage record '" + record + "' is missing");
            const std::int64_t elem = scalarSize(t.dtype);
            std::int64_t bytes = 0;
            if (!checkedMul(t.storage_numel, elem, bytes))
                throw InputError(tensor + ": storage '" + record + "' declares " + std::to_string(t.storage_numel) + " elements, more than 2^63 bytes");
            if (entry->uncompressed_size != static_cast<std::uint64_t>(bytes))
                throw InputError(tensor + ": storage record '" + record + "' holds " + std::to_string(entry->uncompressed_size) +
                                 " bytes, the pickle declares " + std::to_string(t.storage_numel) + " " + scalarName(t.dtype) +
                                 " elements (" + std::to_string(bytes) + " bytes)");
            auto seen = storages_.find(t.storage_key);
            if (seen == storages_.end()) {
                storages_.emplace(t.storage_key, Storage{t.dtype, t.storage_numel, entry, {}});
                add(bytes, s.label);
            } else if (seen->second.dtype != t.dtype || seen->second.numel != t.storage_numel) {
                throw InputError(tensor + ": storage '" + record + "' is declared again with another type or size");
            }
            // The view: count = prod(shape); last element = offset + sum((shape-1) * stride).
            std::int64_t count = 0;
            if (!elementCount(t.shape, count))
                throw InputError(tensor + ": shape " + shapeString(t.shape) + " has more elements than 2^63");
            if (count == 0) continue;
            std::int64_t last = t.offset, expected = 1;
            bool contiguous = true;
            for (std::size_t d = t.shape.size(); d-- > 0;) {
                std::int64_t reach = 0;
                if (!checkedMul(t.shape[d] - 1, t.stride[d], reach) || __builtin_add_overflow(last, reach, &last))
                    throw InputError(tensor + ": shape " + shapeString(t.shape) + " with strides " + shapeString(t.stride) + " overflows");
                if (t.shape[d] != 1 && t.stride[d] != expected) contiguous = false;
                expected *= t.shape[d];   // <= count, cannot overflow
            }
            if (last >= t.storage_numel)
                throw InputError(tensor + " of shape " + shapeString(t.shape) + " reaches past its storage of " +
                                 std::to_string(t.storage_numel) + " elements");
            if (!contiguous) {
                std::int64_t copy = 0;
                if (!checkedMul(count, elem, copy)) throw InputError(tensor + ": shape " + shapeString(t.shape) + " needs more than 2^63 bytes");
                add(copy, s.label);   // .contiguous() copies it
            }
        }
    }

    // After plan(): the tensor, its storage extracted once (and its CRC checked) however many
    // tensors view it.
    at::Tensor tensor(const std::string& label, const TensorRef& t)
    {
        try {
            at::Tensor storage = this->storage(label, t);
            if (std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end()) return at::empty(t.shape, storage.options());
            at::Tensor view = storage.as_strided(t.shape, t.stride, t.offset);
            return view.is_contiguous() ? view : view.contiguous();
        } catch (const c10::Error& e) {
            throw InputError(path_ + ": tensor '" + label + "': " + firstLine(e.what_without_backtrace()));
        } catch (const std::bad_alloc&) {
            throw InputError(path_ + ": tensor '" + label + "': out of memory");
        }
    }

private:
    struct Storage {
        ScalarType dtype;
        std::int64_t numel;
        const ZipEntry* entry;
        at::Tensor data;
    };

    at::Tensor storage(const std::string& label, const TensorRef& t)
    {
        Storage& s = storages_.at(t.storage_key);
        if (s.data.defined()) return s.data;
        const auto options = at::TensorOptions().dtype(toAten(t.dtype));
        const std::string record = "data/" + t.storage_key;
        if (s.numel == 0) {
            verify(record, nullptr, 0, label);
            return s.data = at::empty({0}, options);
        }
        at::DataPtr data;
        std::size_t size = 0;
        try {
            std::tie(data, size) = reader_->getRecord(record);
        } catch (const c10::Error& e) {
            throw InputError(path_ + ": tensor '" + label + "': cannot read '" + record + "': " + firstLine(e.what_without_backtrace()));
        }
        verify(record, data.get(), size, label);
        // The tensor owns the extracted bytes (no second copy).
        auto holder = std::make_shared<at::DataPtr>(std::move(data));
        void* raw = holder->get();
        return s.data = at::from_blob(raw, {s.numel}, [holder](void*) mutable { holder.reset(); }, options);
    }

    // The extracted record has the size and CRC-32 the central directory declares.
    void verify(const std::string& record, const void* data, std::size_t size, const std::string& label) const
    {
        const ZipEntry* e = dir_.find(prefix_ + record);
        const std::string who = path_ + ": " + (label.empty() ? "" : "tensor '" + label + "': ") + "record '" + prefix_ + record + "'";
        if (!e || e->uncompressed_size != size)
            throw InputError(who + ": extracted " + std::to_string(size) + " bytes, the zip directory declares " +
                             (e ? std::to_string(e->uncompressed_size) : std::string("none")));
        const std::uint32_t crc = crc32Of(data, size);
        if (crc != e->crc32)
            throw InputError(who + " fails its CRC-32 check (the zip declares " + hex32(e->crc32) + ", the data gives " + hex32(crc) +
                             "): the file is damaged");
    }

    std::string path_;
    ZipDirectory dir_;
    std::string prefix_;   // "archive/"
    std::unique_ptr<std::istringstream> stream_;
    std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader_;
    std::string pkl_;
    std::map<std::string, Storage> storages_;
};

bool allTensors(const PyValue& d)
{
    if (d.kind != PyValue::Kind::Dict) return false;
    for (const auto& kv : d.dict)
        if (kv.second->kind != PyValue::Kind::Tensor) return false;
    return true;
}

// The tensors of one dict, checked to be string -> tensor.
std::vector<TensorSlot> slotsOf(const PyValue& dict, const std::string& section, const std::string& path)
{
    std::vector<TensorSlot> out;
    for (const auto& kv : dict.dict) {
        if (kv.first->kind != PyValue::Kind::Str)
            throw InputError(path + ": " + (section.empty() ? std::string("state dict") : section) + " key is a " +
                             std::string(kv.first->kindName()) + ", expected a string");
        const std::string label = section.empty() ? kv.first->s : section + "/" + kv.first->s;
        if (kv.second->kind != PyValue::Kind::Tensor)
            throw InputError(path + ": '" + label + "' is a " + kv.second->kindName() + ", expected a tensor");
        out.push_back({label, &kv.second->tensor});
    }
    return out;
}

Checkpoint readArchive(const std::string& path, const std::string* bytes, const CheckpointReadOptions& options)
{
    ArchiveReader archive(path, bytes);
    PyRef root = readPickle(archive.pickle(), path + ": data.pkl");
    Checkpoint out;
    PyRef sd = root;
    out.wrapped = false;
    std::vector<std::pair<std::string, PyRef>> sections;
    if (root->kind == PyValue::Kind::Dict) {
        if (PyRef inner = root->get("state_dict"); inner && inner->kind == PyValue::Kind::Dict) {
            sd = inner;
            out.wrapped = true;
            for (const auto& kv : root->dict) {
                if (kv.first->kind != PyValue::Kind::Str || kv.first->s == "state_dict") continue;
                if (kv.second->kind == PyValue::Kind::Str) out.strings.emplace_back(kv.first->s, kv.second->s);
                else if (options.sections && allTensors(*kv.second)) sections.emplace_back(kv.first->s, kv.second);
            }
        }
    }
    if (sd->kind != PyValue::Kind::Dict)
        throw InputError(path + ": expected a state dict (or {\"state_dict\": ...}), found a " + sd->kindName());
    std::vector<TensorSlot> slots = slotsOf(*sd, "", path);
    const std::size_t stateCount = slots.size();
    std::vector<std::size_t> sectionEnds;
    for (const auto& [name, dict] : sections) {
        for (TensorSlot& s : slotsOf(*dict, name, path)) slots.push_back(std::move(s));
        sectionEnds.push_back(slots.size());
    }
    archive.plan(slots, options.max_tensor_bytes, options.limit_reason);
    auto keyOf = [](const PyValue& dict, std::size_t i) { return dict.dict[i].first->s; };
    for (std::size_t i = 0; i < stateCount; ++i) out.state_dict.emplace_back(keyOf(*sd, i), archive.tensor(slots[i].label, *slots[i].ref));
    std::size_t begin = stateCount;
    for (std::size_t k = 0; k < sections.size(); ++k) {
        StateDict section;
        for (std::size_t i = begin; i < sectionEnds[k]; ++i)
            section.emplace_back(keyOf(*sections[k].second, i - begin), archive.tensor(slots[i].label, *slots[i].ref));
        out.sections.emplace_back(sections[k].first, std::move(section));
        begin = sectionEnds[k];
    }
    return out;
}

}  // namespace

Checkpoint readCheckpoint(const std::string& path, const CheckpointReadOptions& options)
{
    return readArchive(path, nullptr, options);
}

Checkpoint readCheckpointBytes(const std::string& bytes, const std::string& name, const CheckpointReadOptions& options)
{
    return readArchive(name, &bytes, options);
}

StateDict loadStateDict(const std::string& path, CheckpointReadOptions options)
{
    options.sections = false;
    return readCheckpoint(path, options).state_dict;
}

namespace {
// Formats element `flat` of a tensor of `shape` as "[i, j, k]".
std::string indexString(std::int64_t flat, const std::vector<std::int64_t>& shape)
{
    std::vector<std::int64_t> idx(shape.size());
    for (std::size_t d = shape.size(); d-- > 0;) {
        idx[d] = shape[d] ? flat % shape[d] : 0;
        flat = shape[d] ? flat / shape[d] : 0;
    }
    return shapeString(idx);
}
}  // namespace

void checkTensorValues(const std::string& source, const std::string& key, const at::Tensor& t)
{
    if (!at::isFloatingType(t.scalar_type()) || t.numel() == 0) return;
    const at::Tensor f = t.to(at::kFloat).contiguous();   // what the evaluator computes with
    const float* p = f.data_ptr<float>();
    const bool variance = key.size() >= 11 && key.compare(key.size() - 11, 11, "running_var") == 0;
    for (std::int64_t i = 0; i < f.numel(); ++i) {
        if (std::isfinite(p[i]) && !(variance && p[i] < 0)) continue;
        const double original = t.reshape({-1})[i].item<double>();
        char value[64];
        std::snprintf(value, sizeof value, "%.9g", original);
        const std::string where = source + ": tensor '" + key + "' element " + indexString(i, t.sizes().vec()) + " is " + value;
        if (!std::isfinite(p[i]))
            throw InputError(where + (std::isfinite(original) ? " (beyond float32's range)" : "") +
                             ": NaN or infinite weights make every output meaningless; the checkpoint is refused");
        throw InputError(where + ": a batch-norm running variance cannot be negative; the checkpoint is refused");
    }
}

std::string checkpointBytes(const Checkpoint& ck)
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
    return buffer;
}

void writeCheckpoint(const std::string& path, const Checkpoint& ck) { writeFileAtomic(path, checkpointBytes(ck)); }

void saveStateDict(const std::string& path, const StateDict& sd, bool wrap)
{
    Checkpoint ck;
    ck.state_dict = sd;
    ck.wrapped = wrap;
    writeCheckpoint(path, ck);
}

}  // namespace tinyscope
