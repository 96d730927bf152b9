#include "predict/AccuracyDataset.h"

#include "Error.h"
#include "io/DataPaths.h"
#include "io/Text.h"
#include "space/PyRandom.h"

#include <algorithm>
#include <cmath>
#include <dirent.h>
#include <set>
#include <sys/stat.h>

namespace tinyscope {

namespace {

std::vector<std::string> accTables(const std::string& folder)
{
    std::vector<std::string> names;
    if (DIR* d = ::opendir(folder.c_str())) {
        while (dirent* e = ::readdir(d)) {
            std::string n = e->d_name;
            if (endsWith(n, "acc_table.json")) names.push_back(n);
        }
        ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    for (std::string& n : names) n = folder + "/" + n;
    return names;
}

double readTop1(const JsonPath& p)
{
    double v = p.asDouble();
    if (!std::isfinite(v) || v < 0 || v > 100)
        p.fail("top-1 accuracy must be a percentage in 0..100, got " + jsonBrief(p.node()));
    return v;
}

}  // namespace

AccuracyDataset AccuracyDataset::fromJson(const Json& doc, const DesignSpace& space, const std::string& source)
{
    AccuracyDataset ds;
    ds.origin_ = source;
    ds.files_.push_back(source);
    JsonPath root(source, doc);
    if (doc.is_array()) {
        ds.samples_.reserve(doc.size());
        for (std::size_t i = 0; i < doc.size(); ++i) {
            JsonPath entry = root[i];
            if (!entry.node().is_array() || entry.node().size() != 2)
                entry.fail("expected a pair [config, top1], got " + std::string(entry.node().type_name()) +
                           (entry.node().is_array() ? " of " + std::to_string(entry.node().size()) + " elements" : ""));
            AccuracySample s;
            s.config = SubnetConfig::fromJson(entry.node()[0], space, entry[std::size_t(0)].where());
            s.top1 = readTop1(entry[std::size_t(1)]);
            ds.samples_.push_back(std::move(s));
        }
    } else if (doc.is_object()) {
        // once-for-all's acc.dict: {"<json of config>": top1, ...}
        std::size_t i = 0;
        for (auto it = doc.begin(); it != doc.end(); ++it, ++i) {
            const std::string where = source + ": entry " + std::to_string(i) + " (key " + it.key().substr(0, 40) +
                                      (it.key().size() > 40 ? "…" : "") + ")";
            Json cfg;
            try {
                cfg = parseJson(it.key(), where);
            } catch (const InputError& e) {
                throw InputError(where + ": the key is not a JSON subnet config (" + std::string(e.what()).substr(where.size() + 2) + ")");
            }
            AccuracySample s;
            s.config = SubnetConfig::fromJson(cfg, space, where);
            s.top1 = readTop1(JsonPath(where, it.value()));
            ds.samples_.push_back(std::move(s));
        }
    } else {
        root.fail("expected a list of [config, top1] pairs or an acc.dict object, got " + std::string(doc.type_name()));
    }
    return ds;
}

AccuracyDataset AccuracyDataset::load(const std::string& path, const DesignSpace& space)
{
    if (!isDirectory(path)) {
        if (!fileExists(path)) throw InputError(path + ": no such accuracy dataset (a folder with src/*_acc_table.json, or a file)");
        return fromJson(readJsonFile(path), space, path);
    }
    AccuracyDataset ds;
    ds.origin_ = path;
    std::string dict = path + "/acc.dict";
    if (fileExists(dict)) {
        ds.append(fromJson(readJsonFile(dict), space, dict));
    } else {
        std::vector<std::string> tables = accTables(path + "/src");
        if (tables.empty()) tables = accTables(path);
        if (tables.empty())
            throw InputError(path + ": no accuracy data: expected acc.dict or src/*_acc_table.json files");
        for (const std::string& t : tables) ds.append(fromJson(readJsonFile(t), space, t));
    }
    if (ds.samples_.empty()) throw InputError(path + ": the accuracy dataset holds no pairs");
    return ds;
}

void AccuracyDataset::append(const AccuracyDataset& other)
{
    samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
    files_.insert(files_.end(), other.files_.begin(), other.files_.end());
    if (origin_.empty()) origin_ = other.origin_;
}

double AccuracyDataset::meanLabel() const
{
    if (samples_.empty()) return 0;
    // Neumaier's compensated sum: the mean does not depend on the order of 50,000 additions
    // (numpy's pairwise mean in the lab gives the same 0.9025509749960894).
    double s = 0, c = 0;
    for (const AccuracySample& a : samples_) {
        const double v = a.top1 / 100.0, t = s + v;
        c += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
        s = t;
    }
    return (s + c) / static_cast<double>(samples_.size());
}

DatasetSplit AccuracyDataset::split(double validationFraction, std::uint64_t seed) const
{
    if (!(validationFraction >= 0 && validationFraction < 1))
        throw InputError("validation fraction must be in [0, 1), got " + std::to_string(validationFraction));
    const std::size_t n = samples_.size();
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    PyRandom(seed).shuffle(order);   // random.shuffle
    const std::size_t nVal = static_cast<std::size_t>(std::llround(static_cast<double>(n) * validationFraction));
    DatasetSplit s;
    s.seed = seed;
    s.validation_fraction = validationFraction;
    s.train.assign(order.begin(), order.end() - static_cast<std::ptrdiff_t>(nVal));
    s.validation.assign(order.end() - static_cast<std::ptrdiff_t>(nVal), order.end());
    return s;
}

void AccuracyDataset::requireTrainable(const DatasetSplit& split) const
{
    auto distinct = [&](const std::vector<std::size_t>& rows, std::size_t& configs, std::size_t& labels) {
        std::set<std::string> c;
        std::set<double> l;
        for (std::size_t r : rows) {
            c.insert(samples_[r].config.toJson().dump());
            l.insert(samples_[r].top1);
        }
        configs = c.size();
        labels = l.size();
    };
    const std::string where = origin_ + ": ";
    if (split.train.size() < kMinTrainingPairs)
        throw InputError(where + std::to_string(split.train.size()) + " training pairs (of " + std::to_string(size()) +
                         "); a predictor needs at least " + std::to_string(kMinTrainingPairs));
    std::size_t configs = 0, labels = 0;
    distinct(split.train, configs, labels);
    if (configs < 2) throw InputError(where + "every training pair is the same subnet: there is nothing to learn");
    if (labels < 2)
        throw InputError(where + "every training pair has the same accuracy (" + formatFixed(samples_[split.train.front()].top1, 2) +
                         " %): there is nothing to learn");
    if (split.validation.empty()) return;
    if (split.validation.size() < 2)
        throw InputError(where + "the validation part holds " + std::to_string(split.validation.size()) +
                         " pair; MAE, r and tau need at least 2 (more data, or validation fraction 0 for none)");
    distinct(split.validation, configs, labels);
    if (labels < 2)
        throw InputError(where + "every validation pair has the same accuracy: r and tau are undefined (more data, or validation fraction 0)");
}

std::vector<float> AccuracyDataset::features(const ArchEncoder& encoder, const std::vector<std::size_t>& rows) const
{
    const std::size_t dims = static_cast<std::size_t>(encoder.dims());
    std::vector<float> x(rows.size() * dims);
    for (std::size_t r = 0; r < rows.size(); ++r) encoder.encodeInto(samples_[rows[r]].config, x.data() + r * dims);
    return x;
}

std::vector<float> AccuracyDataset::labels(const std::vector<std::size_t>& rows) const
{
    std::vector<float> y(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) y[r] = static_cast<float>(samples_[rows[r]].top1 / 100.0);
    return y;
}

std::vector<int> AccuracyDataset::unseenFeatures(const ArchEncoder& encoder, const std::vector<std::size_t>& rows) const
{
    std::vector<char> seen(static_cast<std::size_t>(encoder.dims()), 0);
    for (std::size_t r : rows)
        for (int i : encoder.oneHotIndices(samples_[r].config)) seen[static_cast<std::size_t>(i)] = 1;
    std::vector<int> unseen;
    for (std::size_t i = 0; i < seen.size(); ++i)
        if (!seen[i]) unseen.push_back(static_cast<int>(i));
    return unseen;
}

}  // namespace tinyscope
