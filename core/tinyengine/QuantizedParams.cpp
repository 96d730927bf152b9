#include "tinyengine/QuantizedParams.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/JsonFile.h"
#include "io/OutputPaths.h"
#include "tinyengine/TinyEngineNames.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <sstream>

namespace tinyscope {

namespace {

template <class T>
NdArray typed(ScalarType t, const std::vector<T>& v, std::vector<std::int64_t> shape)
{
    NdArray a;
    a.dtype = t;
    a.shape = std::move(shape);
    a.data.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    return a;
}

template <class T>
T load(const std::string& data, std::int64_t i)
{
    T v;
    std::memcpy(&v, data.data() + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    return v;
}

// Fortran-ordered arrays are rewritten in C order so element i means the same everywhere.
NdArray toCOrder(NdArray a)
{
    if (!a.fortran_order || a.shape.size() < 2) {
        a.fortran_order = false;
        return a;
    }
    const int es = scalarSize(a.dtype);
    const std::int64_t n = a.numel();
    std::string out(a.data.size(), '\0');
    const std::size_t rank = a.shape.size();
    std::vector<std::int64_t> idx(rank, 0);
    for (std::int64_t c = 0; c < n; ++c) {   // c: C-order position; f: Fortran position
        std::int64_t f = 0, stride = 1;
        for (std::size_t d = 0; d < rank; ++d) {
            f += idx[d] * stride;
            stride *= a.shape[d];
        }
        std::memcpy(&out[static_cast<std::size_t>(c * es)], &a.data[static_cast<std::size_t>(f * es)], static_cast<std::size_t>(es));
        for (std::size_t d = rank; d-- > 0;) {
            if (++idx[d] < a.shape[d]) break;
            idx[d] = 0;
        }
    }
    a.data = std::move(out);
    a.fortran_order = false;
    return a;
}

ScalarType scalarOf(DType d)
{
    switch (d) {
    case DType::Int8: return ScalarType::Int8;
    case DType::Int32: return ScalarType::Int32;
    case DType::Float32: return ScalarType::Float32;
    case DType::Bool: return ScalarType::Bool;
    }
    return ScalarType::Float32;
}

std::string shapeText(const std::vector<std::int64_t>& s)
{
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

}  // namespace

NdArray int8Array(const std::vector<std::int8_t>& v, std::vector<std::int64_t> shape) { return typed(ScalarType::Int8, v, std::move(shape)); }
NdArray int32Array(const std::vector<std::int32_t>& v, std::vector<std::int64_t> shape) { return typed(ScalarType::Int32, v, std::move(shape)); }
NdArray float32Array(const std::vector<float>& v, std::vector<std::int64_t> shape) { return typed(ScalarType::Float32, v, std::move(shape)); }

double ndValue(const NdArray& a, std::int64_t i)
{
    switch (a.dtype) {
    case ScalarType::Float32: return load<float>(a.data, i);
    case ScalarType::Float64: return load<double>(a.data, i);
    case ScalarType::Int64: return static_cast<double>(load<std::int64_t>(a.data, i));
    case ScalarType::Int32: return load<std::int32_t>(a.data, i);
    case ScalarType::Int16: return load<std::int16_t>(a.data, i);
    case ScalarType::Int8: return load<std::int8_t>(a.data, i);
    case ScalarType::UInt8: return load<std::uint8_t>(a.data, i);
    case ScalarType::Bool: return load<std::uint8_t>(a.data, i) ? 1.0 : 0.0;
    case ScalarType::Float16:
    case ScalarType::BFloat16: break;
    }
    throw InputError(std::string("arrays of dtype ") + scalarName(a.dtype) + " are not used by TinyEngine");
}

void QuantizedParams::set(const std::string& name, NdArray a)
{
    if (!arrays.count(name)) order.push_back(name);
    arrays[name] = std::move(a);
}

const NdArray& QuantizedParams::array(const std::string& name) const
{
    auto it = arrays.find(name);
    if (it == arrays.end()) throw InputError((source.empty() ? std::string("params") : source) + ": no array '" + name + "'");
    return it->second;
}

double QuantizedParams::value(const std::string& name, std::int64_t i) const { return ndValue(array(name), i); }

double QuantizedParams::scale(const std::string& key, const std::string& who, const std::string& why) const
{
    auto it = scales.find(key);
    if (it == scales.end()) throw InputError(who + ": scale.json has no '" + key + "' (" + why + ")");
    return it->second;
}

std::vector<float> QuantizedParams::floats(const std::string& name) const
{
    const NdArray& a = array(name);
    std::vector<float> v(static_cast<std::size_t>(a.numel()));
    for (std::int64_t i = 0; i < a.numel(); ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(ndValue(a, i));
    return v;
}

QuantizedParams readParamsPickle(const std::string& path)
{
    const PyRef root = readPickle(readFileBytes(path, kMaxPickleBytes, "params pickle"), path);
    if (root->kind != PyValue::Kind::Dict)
        throw InputError(path + ": expected a dict of numpy arrays, got " + root->kindName());
    QuantizedParams p;
    p.source = path;
    for (const auto& [k, v] : root->dict) {
        if (k->kind != PyValue::Kind::Str) throw InputError(path + ": a key is a " + k->kindName() + ", expected a string");
        // The name the generator writes into C is the key with TTEParser's 'v' prefix.
        const std::string name = !k->s.empty() && k->s[0] == 'v' ? k->s : "v" + k->s;   // TTEParser's rule
        requireTinyEngineName(name, true, pathForMessage(path), "key");
        if (v->kind != PyValue::Kind::Array)
            throw InputError(path + ": '" + k->s + "': expected a numpy.ndarray, got " + v->kindName());
        if (p.arrays.count(name)) throw InputError(path + ": '" + k->s + "' collides with '" + name + "' (TTEParser prefixes 'v')");
        if (static_cast<std::int64_t>(v->array.data.size()) != v->array.numel() * scalarSize(v->array.dtype))
            throw InputError(path + ": '" + k->s + "': " + std::to_string(v->array.data.size()) + " bytes for shape " +
                             shapeText(v->array.shape));
        NdArray c = toCOrder(v->array);
        if (c.dtype == ScalarType::Float32 || c.dtype == ScalarType::Float64)
            for (std::int64_t i = 0, n = c.numel(); i < n; ++i) {
                const double x = ndValue(c, i);
                if (std::isfinite(x)) continue;
                std::vector<std::int64_t> idx(c.shape.size());
                for (std::int64_t d = static_cast<std::int64_t>(idx.size()) - 1, r = i; d >= 0; --d) {
                    idx[static_cast<std::size_t>(d)] = r % c.shape[static_cast<std::size_t>(d)];
                    r /= c.shape[static_cast<std::size_t>(d)];
                }
                throw InputError(path + ": '" + k->s + "' element " + shapeText(idx) + " is " + (std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf") +
                                 ": NaN or infinite values make every output meaningless; the params pickle is refused");
            }
        p.set(name, std::move(c));
    }
    return p;
}

std::string paramsPickleBytes(const QuantizedParams& p)
{
    PyRef dict = PyValue::dictionary();
    for (const std::string& name : p.order)
        if (p.arrays.count(name)) dict->dict.emplace_back(PyValue::str(name), PyValue::ndarray(p.arrays.at(name)));
    for (const auto& [name, a] : p.arrays)
        if (std::find(p.order.begin(), p.order.end(), name) == p.order.end()) dict->dict.emplace_back(PyValue::str(name), PyValue::ndarray(a));
    return writePickle(*dict);
}

std::map<std::string, double> readScaleJson(const std::string& path)
{
    const Json j = readJsonFile(path);
    if (!j.is_object()) throw InputError(path + ": expected an object {\"<prefix>_x_scale\": number, ...}");
    std::map<std::string, double> s;
    for (auto it = j.begin(); it != j.end(); ++it) {
        requireTinyEngineName(it.key(), true, pathForMessage(path), "key");
        if (!it.value().is_number()) throw InputError(path + ": " + it.key() + ": expected a number, got " + jsonBrief(it.value()));
        const double v = it.value().get<double>();
        // QAS divides by these (TinyEngine's generated code too): zero, negative or non-finite
        // scales make every update meaningless.
        if (!std::isfinite(v) || v <= 0) throw InputError(path + ": " + it.key() + ": expected a positive scale, got " + jsonBrief(it.value()));
        s[it.key()] = v;
    }
    return s;
}

std::string scaleJsonText(const std::map<std::string, double>& scales)
{
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    // Conv order (v0, v1_conv_0, ...) reads better than std::map's; keys are sorted naturally.
    std::vector<std::pair<std::string, double>> items(scales.begin(), scales.end());
    auto natural = [](const std::string& a, const std::string& b) {
        std::size_t i = 0, k = 0;
        while (i < a.size() && k < b.size()) {
            if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[k]))) {
                std::size_t ie = i, ke = k;
                while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
                while (ke < b.size() && std::isdigit(static_cast<unsigned char>(b[ke]))) ++ke;
                const long long x = std::stoll(a.substr(i, ie - i)), y = std::stoll(b.substr(k, ke - k));
                if (x != y) return x < y;
                i = ie;
                k = ke;
            } else {
                if (a[i] != b[k]) return a[i] < b[k];
                ++i;
                ++k;
            }
        }
        return a.size() - i < b.size() - k;
    };
    std::stable_sort(items.begin(), items.end(), [&](const auto& x, const auto& y) { return natural(x.first, y.first); });
    for (const auto& [k, v] : items) j[k] = v;
    return j.dump(2) + "\n";
}

std::vector<std::string> paramsMismatches(const TrainingGraph& g, const QuantizedParams& p)
{
    std::vector<std::string> out;
    for (const Tensor& t : g.tensors) {
        if (t.kind != TensorKind::Parameter || t.name == "input" || t.name == "label") continue;
        auto it = p.arrays.find(t.name);
        if (it == p.arrays.end()) {
            out.push_back(t.name + ": missing from the params");
            continue;
        }
        const NdArray& a = it->second;
        if (a.dtype != scalarOf(t.dtype))
            out.push_back(t.name + ": dtype " + scalarName(a.dtype) + ", the graph needs " + dtypeName(t.dtype));
        std::vector<std::int64_t> want(t.shape.begin(), t.shape.end());
        if (want.empty()) want = {1};
        if (a.shape != want) out.push_back(t.name + ": shape " + shapeText(a.shape) + ", the graph needs " + shapeText(want));
    }
    return out;
}

}  // namespace tinyscope
