#include "io/Pickle.h"

#include "Error.h"

#include <cstdio>
#include <cstring>
#include <functional>
#include <unordered_map>

namespace tinyscope {

int scalarSize(ScalarType t)
{
    switch (t) {
    case ScalarType::Float64: case ScalarType::Int64: return 8;
    case ScalarType::Float32: case ScalarType::Int32: return 4;
    case ScalarType::Float16: case ScalarType::BFloat16: case ScalarType::Int16: return 2;
    default: return 1;
    }
}

const char* scalarName(ScalarType t)
{
    switch (t) {
    case ScalarType::Float32: return "float32";
    case ScalarType::Float64: return "float64";
    case ScalarType::Float16: return "float16";
    case ScalarType::BFloat16: return "bfloat16";
    case ScalarType::Int64: return "int64";
    case ScalarType::Int32: return "int32";
    case ScalarType::Int16: return "int16";
    case ScalarType::Int8: return "int8";
    case ScalarType::UInt8: return "uint8";
    case ScalarType::Bool: return "bool";
    }
    return "?";
}

bool checkedMul(std::int64_t a, std::int64_t b, std::int64_t& out)
{
    return a >= 0 && b >= 0 && !__builtin_mul_overflow(a, b, &out);
}

bool elementCount(const std::vector<std::int64_t>& shape, std::int64_t& count)
{
    std::int64_t n = 1;
    for (std::int64_t d : shape)
        if (!checkedMul(n, d, n)) return false;
    count = n;
    return true;
}

std::int64_t NdArray::numel() const
{
    std::int64_t n = 0;
    if (!elementCount(shape, n)) throw InputError("an array's shape has more elements than 2^63");
    return n;
}

namespace {
PyRef make(PyValue::Kind k)
{
    auto v = std::make_shared<PyValue>();
    v->kind = k;
    return v;
}
}  // namespace

PyRef PyValue::none() { return make(Kind::None); }
PyRef PyValue::boolean(bool x) { auto v = make(Kind::Bool); v->b = x; return v; }
PyRef PyValue::integer(std::int64_t x) { auto v = make(Kind::Int); v->i = x; return v; }
PyRef PyValue::real(double x) { auto v = make(Kind::Float); v->f = x; return v; }
PyRef PyValue::str(std::string x) { auto v = make(Kind::Str); v->s = std::move(x); return v; }
PyRef PyValue::bytes(std::string x) { auto v = make(Kind::Bytes); v->s = std::move(x); return v; }
PyRef PyValue::list(std::vector<PyRef> x) { auto v = make(Kind::List); v->items = std::move(x); return v; }
PyRef PyValue::tuple(std::vector<PyRef> x) { auto v = make(Kind::Tuple); v->items = std::move(x); return v; }
PyRef PyValue::dictionary() { return make(Kind::Dict); }
PyRef PyValue::tensorRef(TensorRef t) { auto v = make(Kind::Tensor); v->tensor = std::move(t); return v; }
PyRef PyValue::ndarray(NdArray a) { auto v = make(Kind::Array); v->array = std::move(a); return v; }

PyRef PyValue::get(const std::string& key) const
{
    if (kind != Kind::Dict) return nullptr;
    for (const auto& kv : dict)
        if (kv.first->kind == Kind::Str && kv.first->s == key) return kv.second;
    return nullptr;
}

const char* PyValue::kindName() const
{
    switch (kind) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Str: return "str";
    case Kind::Bytes: return "bytes";
    case Kind::List: return "list";
    case Kind::Tuple: return "tuple";
    case Kind::Dict: return "dict";
    case Kind::Storage: return "storage";
    case Kind::Tensor: return "tensor";
    case Kind::Array: return "numpy.ndarray";
    case Kind::Global: return "global";
    case Kind::Dtype: return "numpy.dtype";
    }
    return "?";
}

// ---------------------------------------------------------------------------------------------
// Reader: a pickle virtual machine without arbitrary calls.

namespace {

constexpr int kMaxDepth = 256;

class Unpickler {
public:
    Unpickler(const std::string& data, const std::string& source) : d_(data), src_(source) {}
    PyRef run();

private:
    [[noreturn]] void fail(const std::string& why) const
    {
        throw InputError(src_ + ": pickle byte " + std::to_string(opPos_) + ": " + why);
    }
    // Memory the values take, counted as they are created and never refunded, so that the reader's
    // memory is bounded whatever the opcodes do (memo references, repeated copies of one bytes).
    void charge(std::size_t bytes)
    {
        used_ += bytes;
        if (used_ > kMaxPickleMemory)
            fail("the values of this pickle need more than " + std::to_string(kMaxPickleMemory >> 20) +
                 " MiB (a pickle that expands far beyond its size is refused)");
    }
    PyRef fresh(PyRef v)
    {
        charge(sizeof(PyValue) + v->s.size() + v->array.data.size());
        return v;
    }
    std::uint8_t u8()
    {
        if (pos_ >= d_.size()) fail("truncated data");
        return static_cast<std::uint8_t>(d_[pos_++]);
    }
    std::uint64_t uint(int n)
    {
        if (pos_ + static_cast<std::size_t>(n) > d_.size()) fail("truncated data");
        std::uint64_t v = 0;
        for (int k = 0; k < n; ++k) v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(d_[pos_ + k])) << (8 * k);
        pos_ += static_cast<std::size_t>(n);
        return v;
    }
    std::string take(std::uint64_t n)
    {
        if (n > d_.size() - pos_) fail("length " + std::to_string(n) + " runs past the end of the data");
        std::string s = d_.substr(pos_, static_cast<std::size_t>(n));
        pos_ += static_cast<std::size_t>(n);
        return s;
    }
    std::string line()
    {
        auto nl = d_.find('\n', pos_);
        if (nl == std::string::npos) fail("truncated data (missing newline)");
        std::string s = d_.substr(pos_, nl - pos_);
        pos_ = nl + 1;
        return s;
    }
    PyRef pop()
    {
        if (stack_.size() <= markBase()) fail("stack underflow");
        PyRef v = std::move(stack_.back());
        stack_.pop_back();
        return v;
    }
    PyRef& top()
    {
        if (stack_.size() <= markBase()) fail("stack underflow");
        return stack_.back();
    }
    std::size_t markBase() const { return marks_.empty() ? 0 : marks_.back(); }
    std::vector<PyRef> popMark()
    {
        if (marks_.empty()) fail("no MARK on the stack");
        std::size_t m = marks_.back();
        marks_.pop_back();
        std::vector<PyRef> out(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
                               std::make_move_iterator(stack_.end()));
        stack_.resize(m);
        return out;
    }
    void push(PyRef v)
    {
        charge(sizeof(PyRef));
        stack_.push_back(std::move(v));
    }
    // Marks `child` as placed in `parent` and updates the nesting depth.
    void adopt(PyValue& parent, const PyRef& child)
    {
        if (!child) fail("missing value");
        if (child.get() == &parent) fail("recursive structures are not supported");
        child->contained = true;
        if (child->depth + 1 > parent.depth) parent.depth = child->depth + 1;
        if (parent.depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    void checkMutable(const PyValue& v)
    {
        if (v.contained) fail("recursive structures are not supported");
    }
    PyRef makeTuple(std::vector<PyRef> items)
    {
        PyRef t = fresh(PyValue::tuple());
        charge(items.size() * sizeof(PyRef));
        for (const PyRef& c : items) adopt(*t, c);
        t->items = std::move(items);
        return t;
    }
    void setItems(const PyRef& dictRef, std::vector<PyRef>& kv)
    {
        PyValue& dict = *dictRef;
        if (dict.kind != PyValue::Kind::Dict) fail(std::string("SETITEM on a ") + dict.kindName());
        checkMutable(dict);
        if (kv.size() % 2) fail("odd number of items for a dict");
        charge(kv.size() * sizeof(PyRef));
        // A later value for the same string key replaces the earlier one, as in Python; found through
        // an index so that a dict of many keys costs linear time, not quadratic.
        auto& entry = dictKeys_[&dict];
        entry.first = dictRef;   // kept alive, so that its address is never reused for another dict
        auto& index = entry.second;
        for (std::size_t k = 0; k < kv.size(); k += 2) {
            adopt(dict, kv[k]);
            adopt(dict, kv[k + 1]);
            if (kv[k]->kind == PyValue::Kind::Str) {
                auto [it, added] = index.emplace(kv[k]->s, dict.dict.size());
                if (!added) {
                    dict.dict[it->second].second = kv[k + 1];
                    continue;
                }
                charge(64 + kv[k]->s.size());
            }
            dict.dict.emplace_back(kv[k], kv[k + 1]);
        }
    }
    void append(PyValue& list, std::vector<PyRef>& items)
    {
        if (list.kind != PyValue::Kind::List) fail(std::string("APPEND on a ") + list.kindName());
        checkMutable(list);
        charge(items.size() * sizeof(PyRef));
        for (PyRef& c : items) {
            adopt(list, c);
            list.items.push_back(std::move(c));
        }
    }
    PyRef global(const std::string& module, const std::string& name);
    PyRef reduce(const PyRef& callable, const PyRef& args);
    void build(PyValue& obj, const PyRef& state);
    PyRef persistent(const PyRef& pid);
    void memoPut(std::uint64_t idx)
    {
        if (stack_.empty()) fail("memo put on an empty stack");
        charge(64);   // a hash-map node
        memo_[idx] = stack_.back();
    }
    PyRef memoGet(std::uint64_t idx)
    {
        auto it = memo_.find(idx);
        if (it == memo_.end()) fail("memo entry " + std::to_string(idx) + " is not defined");
        return it->second;
    }

    const std::string& d_;
    std::string src_;
    std::size_t pos_ = 0, opPos_ = 0;
    std::vector<PyRef> stack_;
    std::vector<std::size_t> marks_;
    std::unordered_map<std::uint64_t, PyRef> memo_;
    // Per dict: string key -> position in PyValue::dict.
    std::unordered_map<const PyValue*, std::pair<PyRef, std::unordered_map<std::string, std::size_t>>> dictKeys_;
    std::size_t used_ = 0;
};

// Whitelist: the only globals a file may name, each with a fixed meaning.
PyRef Unpickler::global(const std::string& module, const std::string& name)
{
    static const char* allowed[] = {
        "collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor",
        "torch._utils._rebuild_parameter", "torch.FloatStorage", "torch.DoubleStorage", "torch.HalfStorage",
        "torch.BFloat16Storage", "torch.LongStorage", "torch.IntStorage", "torch.ShortStorage", "torch.CharStorage",
        "torch.ByteStorage", "torch.BoolStorage", "numpy.core.multiarray._reconstruct", "numpy._core.multiarray._reconstruct",
        "numpy.ndarray", "numpy.dtype", "numpy.core.multiarray.scalar", "numpy._core.multiarray.scalar", "_codecs.encode",
        "numpy.core.numeric._frombuffer", "numpy._core.numeric._frombuffer", "__builtin__.bytes", "builtins.bytes",
    };
    const std::string full = module + "." + name;
    for (const char* a : allowed)
        if (full == a) {
            PyRef g = make(PyValue::Kind::Global);
            g->s = full;
            return g;
        }
    fail("refusing global '" + full + "': only tensor and array pickles are read (loading never runs code)");
}

namespace {
bool storageDtype(const std::string& g, ScalarType& t)
{
    static const std::pair<const char*, ScalarType> map[] = {
        {"torch.FloatStorage", ScalarType::Float32}, {"torch.DoubleStorage", ScalarType::Float64},
        {"torch.HalfStorage", ScalarType::Float16},  {"torch.BFloat16Storage", ScalarType::BFloat16},
        {"torch.LongStorage", ScalarType::Int64},    {"torch.IntStorage", ScalarType::Int32},
        {"torch.ShortStorage", ScalarType::Int16},   {"torch.CharStorage", ScalarType::Int8},
        {"torch.ByteStorage", ScalarType::UInt8},    {"torch.BoolStorage", ScalarType::Bool},
    };
    for (const auto& m : map)
        if (g == m.first) { t = m.second; return true; }
    return false;
}

bool numpyDtype(const std::string& code, ScalarType& t)
{
    // numpy's dtype descr without byte order: i1 u1 i2 i4 i8 f2 f4 f8 b1
    static const std::pair<const char*, ScalarType> map[] = {
        {"i1", ScalarType::Int8},   {"u1", ScalarType::UInt8},   {"i2", ScalarType::Int16},
        {"i4", ScalarType::Int32},  {"i8", ScalarType::Int64},   {"f2", ScalarType::Float16},
        {"f4", ScalarType::Float32}, {"f8", ScalarType::Float64}, {"b1", ScalarType::Bool},
    };
    for (const auto& m : map)
        if (code == m.first) { t = m.second; return true; }
    return false;
}

std::vector<std::int64_t> intTuple(const PyRef& v, const char* what, const std::function<void(const std::string&)>& fail)
{
    if (!v || (v->kind != PyValue::Kind::Tuple && v->kind != PyValue::Kind::List)) fail(std::string(what) + " is not a tuple");
    std::vector<std::int64_t> out;
    for (const PyRef& e : v->items) {
        if (e->kind != PyValue::Kind::Int) fail(std::string(what) + " holds a " + e->kindName());
        if (e->i < 0 || e->i > (std::int64_t(1) << 40)) fail(std::string(what) + " value out of range: " + std::to_string(e->i));
        out.push_back(e->i);
    }
    return out;
}

// The array's bytes must be exactly what its shape and dtype need.
void checkArrayBytes(const NdArray& a, const std::function<void(const std::string&)>& fail)
{
    std::int64_t n = 0, bytes = 0;
    if (!elementCount(a.shape, n) || !checkedMul(n, scalarSize(a.dtype), bytes))
        fail("array shape " + [&] {
            std::string s;
            for (std::int64_t d : a.shape) s += (s.empty() ? "" : ", ") + std::to_string(d);
            return "[" + s + "]";
        }() + " has more elements than 2^63");
    if (static_cast<std::uint64_t>(bytes) != a.data.size())
        fail("array data holds " + std::to_string(a.data.size()) + " bytes, shape needs " + std::to_string(bytes));
}

// UTF-8 (how Str holds text) to latin-1 bytes, as _codecs.encode(s, 'latin1') does.
bool utf8ToLatin1(const std::string& in, std::string& out)
{
    out.clear();
    for (std::size_t i = 0; i < in.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(in[i]);
        if (c < 0x80) out += static_cast<char>(c);
        else if ((c & 0xE0) == 0xC0 && i + 1 < in.size()) {
            unsigned cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(in[i + 1]) & 0x3Fu);
            if (cp > 0xFF) return false;
            out += static_cast<char>(cp);
            ++i;
        } else {
            return false;
        }
    }
    return true;
}
}  // namespace

PyRef Unpickler::persistent(const PyRef& pid)
{
    auto bad = [&](const std::string& w) { fail("persistent id: " + w); };
    // ('storage', torch.<Type>Storage, key, location, numel)
    if (!pid || pid->kind != PyValue::Kind::Tuple || pid->items.size() < 5) bad("expected ('storage', type, key, location, size)");
    const auto& it = pid->items;
    if (it[0]->kind != PyValue::Kind::Str || it[0]->s != "storage") bad("only 'storage' ids are supported");
    if (it[1]->kind != PyValue::Kind::Global) bad("storage type is not a global");
    ScalarType t;
    if (!storageDtype(it[1]->s, t)) bad("unsupported storage type " + it[1]->s);
    if (it[2]->kind != PyValue::Kind::Str) bad("storage key is not a string");
    if (it[4]->kind != PyValue::Kind::Int || it[4]->i < 0) bad("storage size is not a non-negative integer");
    PyRef s = make(PyValue::Kind::Storage);
    s->tensor.storage_key = it[2]->s;
    s->tensor.dtype = t;
    s->tensor.storage_numel = it[4]->i;
    return s;
}

PyRef Unpickler::reduce(const PyRef& callable, const PyRef& args)
{
    if (callable->kind != PyValue::Kind::Global) fail(std::string("REDUCE on a ") + callable->kindName());
    if (args->kind != PyValue::Kind::Tuple) fail("REDUCE arguments are not a tuple");
    const std::string& g = callable->s;
    const auto& a = args->items;
    auto failf = [this](const std::string& w) { fail(w); };
    if (g == "collections.OrderedDict") {
        if (!a.empty()) fail("OrderedDict with arguments is not supported");
        return PyValue::dictionary();
    }
    if (g == "torch._utils._rebuild_tensor_v2" || g == "torch._utils._rebuild_tensor") {
        if (a.size() < 4) fail(g + " needs (storage, offset, size, stride)");
        if (a[0]->kind != PyValue::Kind::Storage) fail(g + ": first argument is not a storage");
        if (a[1]->kind != PyValue::Kind::Int || a[1]->i < 0) fail(g + ": bad storage offset");
        TensorRef t = a[0]->tensor;
        t.offset = a[1]->i;
        t.shape = intTuple(a[2], "tensor size", failf);
        t.stride = intTuple(a[3], "tensor stride", failf);
        if (t.shape.size() != t.stride.size()) fail(g + ": size and stride differ in length");
        return PyValue::tensorRef(std::move(t));
    }
    if (g == "torch._utils._rebuild_parameter") {
        if (a.empty() || a[0]->kind != PyValue::Kind::Tensor) fail("_rebuild_parameter needs a tensor");
        return a[0];
    }
    if (g == "numpy.core.multiarray._reconstruct" || g == "numpy._core.multiarray._reconstruct") {
        if (a.size() != 3 || a[0]->kind != PyValue::Kind::Global || a[0]->s != "numpy.ndarray")
            fail("_reconstruct is only accepted for numpy.ndarray");
        return PyValue::ndarray(NdArray{});
    }
    if (g == "numpy.dtype") {
        if (a.empty() || a[0]->kind != PyValue::Kind::Str) fail("numpy.dtype needs a type code");
        PyRef d = make(PyValue::Kind::Dtype);
        if (!numpyDtype(a[0]->s, d->array.dtype)) fail("unsupported numpy dtype '" + a[0]->s + "'");
        return d;
    }
    if (g == "_codecs.encode") {
        if (a.size() != 2 || a[0]->kind != PyValue::Kind::Str || a[1]->kind != PyValue::Kind::Str ||
            (a[1]->s != "latin1" && a[1]->s != "latin-1"))
            fail("_codecs.encode is only accepted as (str, 'latin1')");
        std::string out;
        if (!utf8ToLatin1(a[0]->s, out)) fail("_codecs.encode: text is not latin-1");
        return PyValue::bytes(std::move(out));
    }
    if (g == "__builtin__.bytes" || g == "builtins.bytes") {
        // Python 3 writes b'' as bytes() under protocol 2 (non-empty bytes as _codecs.encode).
        if (!a.empty()) fail(g + " is only accepted without arguments (b'')");
        return PyValue::bytes("");
    }
    if (g == "numpy.core.numeric._frombuffer" || g == "numpy._core.numeric._frombuffer") {
        // numpy's protocol-5 reduction of a contiguous array: frombuffer(buffer, dtype).reshape(shape,
        // order=order); the buffer holds the elements in that order (NdArray's fortran_order).
        if (a.size() != 4 || a[0]->kind != PyValue::Kind::Bytes || a[1]->kind != PyValue::Kind::Dtype ||
            a[3]->kind != PyValue::Kind::Str || (a[3]->s != "C" && a[3]->s != "F"))
            fail(g + " needs (buffer, dtype, shape, 'C' or 'F')");
        NdArray arr;
        arr.dtype = a[1]->array.dtype;
        arr.shape = intTuple(a[2], "array shape", failf);
        arr.fortran_order = a[3]->s == "F";
        arr.data = a[0]->s;
        checkArrayBytes(arr, failf);
        return PyValue::ndarray(std::move(arr));
    }
    if (g == "numpy.core.multiarray.scalar" || g == "numpy._core.multiarray.scalar") {
        if (a.size() != 2 || a[0]->kind != PyValue::Kind::Dtype || a[1]->kind != PyValue::Kind::Bytes)
            fail("numpy scalar needs (dtype, bytes)");
        NdArray arr;
        arr.dtype = a[0]->array.dtype;
        arr.data = a[1]->s;
        if (static_cast<int>(arr.data.size()) != scalarSize(arr.dtype)) fail("numpy scalar has the wrong byte count");
        return PyValue::ndarray(std::move(arr));
    }
    fail("'" + g + "' cannot be called");
}

void Unpickler::build(PyValue& obj, const PyRef& state)
{
    checkMutable(obj);
    switch (obj.kind) {
    case PyValue::Kind::Dict:
        // OrderedDict attributes such as state_dict()'s _metadata: kept out of the value.
        return;
    case PyValue::Kind::Dtype: {
        // (version, byteorder, subarray, names, fields, elsize, alignment, flags)
        if (state->kind != PyValue::Kind::Tuple || state->items.size() < 2 || state->items[1]->kind != PyValue::Kind::Str)
            fail("unexpected numpy dtype state");
        const std::string& order = state->items[1]->s;
        if (order == ">" && scalarSize(obj.array.dtype) > 1) fail("big-endian numpy arrays are not supported");
        return;
    }
    case PyValue::Kind::Array: {
        // (version, shape, dtype, is_fortran, rawdata)
        if (state->kind != PyValue::Kind::Tuple || state->items.size() != 5) fail("unexpected numpy array state");
        const auto& it = state->items;
        auto failf = [this](const std::string& w) { fail(w); };
        obj.array.shape = intTuple(it[1], "array shape", failf);
        if (it[2]->kind != PyValue::Kind::Dtype) fail("array dtype is not a numpy.dtype");
        obj.array.dtype = it[2]->array.dtype;
        if (it[3]->kind != PyValue::Kind::Bool) fail("array order flag is not a bool");
        obj.array.fortran_order = it[3]->b;
        if (it[4]->kind != PyValue::Kind::Bytes && it[4]->kind != PyValue::Kind::Str)
            fail("array data is not bytes (object arrays are not supported)");
        charge(it[4]->s.size());
        obj.array.data = it[4]->s;
        checkArrayBytes(obj.array, failf);
        return;
    }
    default:
        fail(std::string("BUILD on a ") + obj.kindName() + " is not supported");
    }
}

PyRef Unpickler::run()
{
    while (true) {
        opPos_ = pos_;
        const std::uint8_t op = u8();
        switch (op) {
        case 0x80: u8(); break;                                  // PROTO
        case 0x95: uint(8); break;                               // FRAME
        case '.': {                                              // STOP
            if (stack_.size() != 1 || !marks_.empty()) fail("STOP with " + std::to_string(stack_.size()) + " values on the stack");
            return stack_.back();
        }
        case '(': charge(sizeof(std::size_t)); marks_.push_back(stack_.size()); break;   // MARK
        case ')': push(fresh(PyValue::tuple())); break;
        case ']': push(fresh(PyValue::list())); break;
        case '}': push(fresh(PyValue::dictionary())); break;
        case 't': push(makeTuple(popMark())); break;
        case 0x85: { PyRef a = pop(); push(makeTuple({a})); break; }
        case 0x86: { PyRef b = pop(), a = pop(); push(makeTuple({a, b})); break; }
        case 0x87: { PyRef c = pop(), b = pop(), a = pop(); push(makeTuple({a, b, c})); break; }
        case 'l': { auto items = popMark(); PyRef l = fresh(PyValue::list()); append(*l, items); push(l); break; }
        case 'd': { auto kv = popMark(); PyRef dct = fresh(PyValue::dictionary()); setItems(dct, kv); push(dct); break; }
        case 'a': { std::vector<PyRef> v{pop()}; append(*top(), v); break; }
        case 'e': { auto items = popMark(); append(*top(), items); break; }
        case 's': { PyRef v = pop(), k = pop(); std::vector<PyRef> kv{k, v}; setItems(top(), kv); break; }
        case 'u': { auto kv = popMark(); setItems(top(), kv); break; }
        case 'q': memoPut(u8()); break;
        case 'r': memoPut(uint(4)); break;
        case 0x94: memoPut(memo_.size()); break;
        case 'h': push(memoGet(u8())); break;
        case 'j': push(memoGet(uint(4))); break;
        case 'p': {
            std::string l = line();
            try { memoPut(std::stoull(l)); } catch (const std::exception&) { fail("bad PUT index"); }
            break;
        }
        case 'g': {
            std::string l = line();
            std::uint64_t idx = 0;
            try { idx = std::stoull(l); } catch (const std::exception&) { fail("bad GET index"); }
            push(memoGet(idx));
            break;
        }
        case 'N': push(fresh(PyValue::none())); break;
        case 0x88: push(fresh(PyValue::boolean(true))); break;
        case 0x89: push(fresh(PyValue::boolean(false))); break;
        case 'K': push(fresh(PyValue::integer(u8()))); break;
        case 'M': push(fresh(PyValue::integer(static_cast<std::int64_t>(uint(2))))); break;
        case 'J': push(fresh(PyValue::integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(uint(4)))))); break;
        case 0x8a: {                                             // LONG1
            std::uint8_t n = u8();
            if (n > 8) fail("integer wider than 64 bits");
            std::uint64_t v = n ? uint(n) : 0;
            if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~std::uint64_t(0) << (8 * n);
            push(fresh(PyValue::integer(static_cast<std::int64_t>(v))));
            break;
        }
        case 'I': case 'L': {
            std::string l = line();
            if (!l.empty() && l.back() == 'L') l.pop_back();
            if (l == "00") { push(fresh(PyValue::boolean(false))); break; }
            if (l == "01") { push(fresh(PyValue::boolean(true))); break; }
            try {
                std::size_t used = 0;
                long long v = std::stoll(l, &used);
                if (used != l.size()) throw std::invalid_argument(l);
                push(fresh(PyValue::integer(v)));
            } catch (const std::exception&) {
                fail("bad integer literal");
            }
            break;
        }
        case 'G': {
            std::uint64_t bits = 0;
            for (int k = 0; k < 8; ++k) bits = (bits << 8) | u8();
            double v;
            std::memcpy(&v, &bits, 8);
            push(fresh(PyValue::real(v)));
            break;
        }
        case 'X': push(fresh(PyValue::str(take(uint(4))))); break;
        case 0x8c: push(fresh(PyValue::str(take(u8())))); break;
        case 0x8d: push(fresh(PyValue::str(take(uint(8))))); break;
        case 'T': push(fresh(PyValue::str(take(uint(4))))); break;
        case 'U': push(fresh(PyValue::str(take(u8())))); break;
        case 'B': push(fresh(PyValue::bytes(take(uint(4))))); break;
        case 'C': push(fresh(PyValue::bytes(take(u8())))); break;
        case 0x8e: push(fresh(PyValue::bytes(take(uint(8))))); break;
        case 0x96: push(fresh(PyValue::bytes(take(uint(8))))); break;   // BYTEARRAY8: an in-band PickleBuffer (protocol 5)
        case 0x97: fail("out-of-band buffer (NEXT_BUFFER): only pickles with their data in-band are read");
        case 0x98:                                               // READONLY_BUFFER
            if (top()->kind != PyValue::Kind::Bytes) fail(std::string("READONLY_BUFFER on a ") + top()->kindName());
            break;
        case 'c': {
            std::string module = line(), name = line();
            push(fresh(global(module, name)));
            break;
        }
        case 0x93: {
            PyRef name = pop(), module = pop();
            if (name->kind != PyValue::Kind::Str || module->kind != PyValue::Kind::Str) fail("STACK_GLOBAL needs two strings");
            push(fresh(global(module->s, name->s)));
            break;
        }
        case 'R': {
            PyRef args = pop(), callable = pop();
            push(fresh(reduce(callable, args)));
            break;
        }
        case 'b': {
            PyRef state = pop();
            build(*top(), state);
            break;
        }
        case 'Q': push(fresh(persistent(pop()))); break;
        default: {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", op);
            fail(std::string("unsupported pickle opcode ") + hex);
        }
        }
    }
}

}  // namespace

PyRef readPickle(const std::string& bytes, const std::string& source)
{
    if (bytes.size() > kMaxPickleBytes)
        throw InputError(source + ": the pickle is " + std::to_string(bytes.size()) + " bytes, more than the " +
                         std::to_string(kMaxPickleBytes >> 20) + " MiB this reader accepts");
    try {
        return Unpickler(bytes, source).run();
    } catch (const std::bad_alloc&) {
        throw InputError(source + ": out of memory while reading the pickle");
    }
}

// ---------------------------------------------------------------------------------------------
// Writer.

namespace {

class Pickler {
public:
    explicit Pickler(const PickleWriteOptions& o) : opt_(o) {}
    std::string finish(const PyValue& v)
    {
        out_ += '\x80';
        out_ += static_cast<char>(opt_.protocol);
        write(v);
        out_ += '.';
        return out_;
    }

private:
    void u32(std::uint32_t v)
    {
        for (int k = 0; k < 4; ++k) out_ += static_cast<char>((v >> (8 * k)) & 0xFF);
    }
    void memo() { out_ += 'r'; u32(next_++); }
    void str(const std::string& s)
    {
        out_ += 'X';
        u32(static_cast<std::uint32_t>(s.size()));
        out_ += s;
    }
    void bytes(const std::string& s)
    {
        if (opt_.protocol >= 3) {
            out_ += 'B';
            u32(static_cast<std::uint32_t>(s.size()));
            out_ += s;
        } else {
            // Protocol 2 has no bytes type: Python 3 writes _codecs.encode(latin-1 text, 'latin1').
            global("_codecs", "encode");
            std::string text;
            for (unsigned char c : s) {
                if (c < 0x80) text += static_cast<char>(c);
                else { text += static_cast<char>(0xC0 | (c >> 6)); text += static_cast<char>(0x80 | (c & 0x3F)); }
            }
            str(text);
            str("latin1");
            out_ += '\x86';
            out_ += 'R';
        }
    }
    void integer(std::int64_t v)
    {
        if (v >= 0 && v < 256) { out_ += 'K'; out_ += static_cast<char>(v); }
        else if (v >= 0 && v < 65536) { out_ += 'M'; out_ += static_cast<char>(v & 0xFF); out_ += static_cast<char>(v >> 8); }
        else if (v >= INT32_MIN && v <= INT32_MAX) { out_ += 'J'; u32(static_cast<std::uint32_t>(static_cast<std::int32_t>(v))); }
        else {
            out_ += '\x8a';
            out_ += '\x08';
            for (int k = 0; k < 8; ++k) out_ += static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * k)) & 0xFF);
        }
    }
    void global(const std::string& module, const std::string& name)
    {
        std::string key = module + "\n" + name + "\n";
        auto it = globals_.find(key);
        if (it != globals_.end()) {
            out_ += 'j';
            u32(it->second);
            return;
        }
        out_ += 'c';
        out_ += key;
        globals_[key] = next_;
        memo();
    }
    void intTuple(const std::vector<std::int64_t>& v)
    {
        out_ += '(';
        for (std::int64_t x : v) integer(x);
        out_ += 't';
    }
    void tensor(const TensorRef& t)
    {
        static const char* storageNames[] = {"FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage",
                                             "LongStorage", "IntStorage", "ShortStorage", "CharStorage",
                                             "ByteStorage", "BoolStorage"};
        global("torch._utils", "_rebuild_tensor_v2");
        out_ += '(';
        out_ += '(';
        str("storage");
        global("torch", storageNames[static_cast<int>(t.dtype)]);
        str(t.storage_key);
        str("cpu");
        integer(t.storage_numel);
        out_ += 't';
        out_ += 'Q';
        integer(t.offset);
        intTuple(t.shape);
        intTuple(t.stride);
        out_ += '\x89';
        global("collections", "OrderedDict");
        out_ += ')';
        out_ += 'R';
        out_ += 't';
        out_ += 'R';
    }
    void array(const NdArray& a)
    {
        static const char* codes[] = {"f4", "f8", "f2", "?", "i8", "i4", "i2", "i1", "u1", "b1"};
        global("numpy.core.multiarray", "_reconstruct");
        global("numpy", "ndarray");
        integer(0);
        out_ += '\x85';
        bytes("b");
        out_ += '\x87';
        out_ += 'R';
        out_ += '(';
        integer(1);
        intTuple(a.shape);
        global("numpy", "dtype");
        str(codes[static_cast<int>(a.dtype)]);
        out_ += '\x89';
        out_ += '\x88';
        out_ += '\x87';
        out_ += 'R';
        out_ += '(';
        integer(3);
        str(scalarSize(a.dtype) == 1 ? "|" : "<");
        out_ += 'N';
        out_ += 'N';
        out_ += 'N';
        integer(-1);
        integer(-1);
        integer(0);
        out_ += 't';
        out_ += 'b';
        out_ += a.fortran_order ? '\x88' : '\x89';
        bytes(a.data);
        out_ += 't';
        out_ += 'b';
    }
    void write(const PyValue& v)
    {
        switch (v.kind) {
        case PyValue::Kind::None: out_ += 'N'; break;
        case PyValue::Kind::Bool: out_ += v.b ? '\x88' : '\x89'; break;
        case PyValue::Kind::Int: integer(v.i); break;
        case PyValue::Kind::Float: {
            out_ += 'G';
            std::uint64_t bits;
            std::memcpy(&bits, &v.f, 8);
            for (int k = 7; k >= 0; --k) out_ += static_cast<char>((bits >> (8 * k)) & 0xFF);
            break;
        }
        case PyValue::Kind::Str: str(v.s); break;
        case PyValue::Kind::Bytes: bytes(v.s); break;
        case PyValue::Kind::List:
            out_ += ']';
            if (!v.items.empty()) {
                out_ += '(';
                for (const PyRef& e : v.items) write(*e);
                out_ += 'e';
            }
            break;
        case PyValue::Kind::Tuple:
            out_ += '(';
            for (const PyRef& e : v.items) write(*e);
            out_ += 't';
            break;
        case PyValue::Kind::Dict:
            if (opt_.ordered_dicts) {
                global("collections", "OrderedDict");
                out_ += ')';
                out_ += 'R';
            } else {
                out_ += '}';
            }
            if (!v.dict.empty()) {
                out_ += '(';
                for (const auto& kv : v.dict) {
                    write(*kv.first);
                    write(*kv.second);
                }
                out_ += 'u';
            }
            break;
        case PyValue::Kind::Tensor: tensor(v.tensor); break;
        case PyValue::Kind::Array: array(v.array); break;
        default: throw InputError(std::string("cannot pickle a ") + v.kindName());
        }
    }

    PickleWriteOptions opt_;
    std::string out_;
    std::uint32_t next_ = 0;
    std::unordered_map<std::string, std::uint32_t> globals_;
};

}  // namespace

std::string writePickle(const PyValue& value, const PickleWriteOptions& options)
{
    return Pickler(options).finish(value);
}

}  // namespace tinyscope
