#include "nn/predictor/AccuracyTableBuilder.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "nn/TorchRuntime.h"
#include "nn/quantize/Int8Measurement.h"
#include "space/ArchSampler.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

namespace tinyscope {

std::vector<std::pair<std::size_t, SubnetConfig>> accuracyTableSamples(const DesignSpace& space, const AccuracyTableOptions& o)
{
    if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
        throw InputError("--shard " + std::to_string(o.shard) + "/" + std::to_string(o.shards) + " is not a valid shard (i/N with 0 <= i < N)");
    ArchSampler sampler(space);
    PyRandom rng(o.seed);
    std::vector<std::pair<std::size_t, SubnetConfig>> out;
    for (std::size_t i = 0; i < o.count; ++i) {
        SubnetConfig c = sampler.random(rng);
        if (static_cast<int>(i % static_cast<std::size_t>(o.shards)) == o.shard) out.emplace_back(i, c);
    }
    return out;
}

namespace {
// fp32 tables keep the keys they had (their state files still match); int8 and bf16 ones add theirs.
Json optionsJson(const AccuracyTableOptions& o, const std::string& space)
{
    Json j = {{"space", space},         {"count", o.count},           {"seed", o.seed},
              {"shard", o.shard},       {"shards", o.shards},         {"eval_data", o.eval_data},
              {"eval_split", o.eval_split}, {"calib_split", o.calib_split}, {"calib_images", o.calib_images}};
    if (o.int8) {
        j["dtype"] = "int8";
        j["int8_calib_images"] = o.int8_calib_images;
    } else if (o.dtype == EvalDtype::Bf16) {
        j["dtype"] = "bf16";
    }
    return j;
}
}  // namespace

std::size_t buildAccuracyTable(const Supernet& supernet, const AccuracyTableOptions& o, const std::string& path,
                               const JobControl& job, const std::function<void(const AccuracyTableProgress&)>& onProgress)
{
    const DesignSpace& space = supernet.space();
    const auto samples = accuracyTableSamples(space, o);
    const std::string statePath = path + ".state.json";
    const Json want = optionsJson(o, space.name);

    std::map<std::size_t, std::pair<SubnetConfig, double>> done;   // sample index -> result
    double earlierSeconds = 0;                                     // measuring time of earlier runs
    bool secondsKnown = true;
    removeStaleTemporaries(path);
    removeStaleTemporaries(statePath);
    if (fileExists(statePath)) {
        Json st = readJsonFile(statePath);
        if (st.contains("seconds") && st["seconds"].is_number()) earlierSeconds = st["seconds"].get<double>();
        else secondsKnown = st["indices"].empty();   // written before the state kept its time
        // Sample i is the same draw for every count, so a larger --count extends a table; any other
        // option, or a count that would drop measured samples, is refused.
        Json had = st["options"], wanted = want;
        if (had.is_object()) had.erase("count");
        wanted.erase("count");
        if (had != wanted)
            throw InputError(statePath + ": the existing table was built with other options; remove it or use another --out");
        std::vector<std::size_t> idx;
        const JsonPath indices = JsonPath(statePath, st)["indices"];
        for (std::size_t k = 0; k < indices.size(); ++k) {
            const long long i = indices[k].asInt64();
            if (i < 0 || (k > 0 && static_cast<std::size_t>(i) <= idx.back())) indices[k].fail("expected increasing sample numbers >= 0");
            idx.push_back(static_cast<std::size_t>(i));
        }
        if (!idx.empty() && *std::max_element(idx.begin(), idx.end()) >= o.count)
            throw InputError(path + ": holds samples up to number " + std::to_string(*std::max_element(idx.begin(), idx.end())) +
                             " of " + std::to_string(st["options"].value("count", std::size_t(0))) +
                             "; --count " + std::to_string(o.count) + " would drop some (a table is extended, never cut)");
        if (st.contains("top1")) {
            // The state holds the results and is written before the table, so it is never behind
            // it; the table is rewritten from it.
            const std::vector<double> top1 = JsonPath(statePath, st)["top1"].asDoubleList();
            if (top1.size() != idx.size())
                throw InputError(statePath + ": top1 has " + std::to_string(top1.size()) + " entries for " + std::to_string(idx.size()) + " indices");
            std::map<std::size_t, const SubnetConfig*> byIndex;
            for (const auto& s : samples) byIndex[s.first] = &s.second;
            for (std::size_t k = 0; k < idx.size(); ++k) {
                if (!byIndex.count(idx[k]))
                    throw InputError(statePath + ": indices[" + std::to_string(k) + "] = " + std::to_string(idx[k]) + " is not a sample of shard " +
                                     std::to_string(o.shard) + "/" + std::to_string(o.shards));
                done[idx[k]] = {*byIndex[idx[k]], top1[k]};
            }
        } else if (fileExists(path)) {
            // Written by an earlier version: the results are in the table, which was written before
            // the state, so it may hold rows the state does not list yet (killed between the two).
            const Json table = readJsonFile(path);
            if (!table.is_array()) throw InputError(path + ": expected an array of [config, top1] rows");
            std::vector<std::size_t> rowIdx = idx;
            if (table.size() > idx.size()) {
                // Rows are in sample order: match each to the next sample with its config.
                rowIdx.clear();
                std::size_t j = 0;
                for (std::size_t k = 0; k < table.size(); ++k) {
                    const SubnetConfig c = SubnetConfig::fromJson(table[k].at(0), space, path);
                    while (j < samples.size() && samples[j].second.toJson() != c.toJson()) ++j;
                    if (j == samples.size()) break;
                    rowIdx.push_back(samples[j++].first);
                }
            }
            if (rowIdx.size() != table.size() || !std::includes(rowIdx.begin(), rowIdx.end(), idx.begin(), idx.end()))
                throw InputError(path + ": does not match " + statePath + " (" + std::to_string(table.size()) + " rows, " +
                                 std::to_string(idx.size()) + " indices)");
            for (std::size_t k = 0; k < rowIdx.size(); ++k)
                done[rowIdx[k]] = {SubnetConfig::fromJson(table[k][0], space, path), table[k][1].get<double>()};
        }
    }

    std::unique_ptr<ImageDataset> data = openDataset(o.eval_data);
    const std::vector<std::size_t> evalItems = splitIndices(data->size(), o.eval_split);
    std::vector<std::size_t> calibIdx = splitIndices(data->size(), o.calib_split);
    auto calibData = std::make_unique<SubsetDataset>(std::shared_ptr<const ImageDataset>(openDataset(o.eval_data)), calibIdx,
                                                     o.eval_data + " (calibration split)");

    std::mutex mu;
    const auto t0 = std::chrono::steady_clock::now();
    auto save = [&]() {   // caller holds mu
        Json table = Json::array();
        std::vector<std::size_t> idx;
        std::vector<double> top1;
        for (const auto& kv : done) {
            table.push_back(Json::array({kv.second.first.toJson(), kv.second.second}));
            idx.push_back(kv.first);
            top1.push_back(kv.second.second);
        }
        // The state (with the results) first, then the table: killed between the two, the state
        // is ahead and the next run rewrites the table from it.
        const double seconds = earlierSeconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        writeJsonFile(statePath, {{"options", want}, {"indices", idx}, {"top1", top1}, {"seconds", secondsKnown ? Json(seconds) : Json(nullptr)}});
        writeJsonFile(path, table, -1);
    };

    std::vector<std::pair<std::size_t, SubnetConfig>> todo;
    for (const auto& s : samples)
        if (!done.count(s.first)) todo.push_back(s);
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    auto worker = [&]() {
        at::set_num_threads(1);
        try {
            for (std::size_t k = next++; k < todo.size() && !failed; k = next++) {
                job.check();
                Subnet sub = supernet.extract(todo[k].second);
                CalibrationOptions co;
                co.images = o.calib_images;
                co.seed = o.seed + todo[k].first;
                co.engine = o.engine;
                calibrateBn(sub, *calibData, co);
                double top1 = 0;
                if (o.int8) {
                    top1 = measureInt8Top1(space, sub, *calibData, o.int8_calib_images, *data, evalItems, 1).top1;
                } else {
                    sub.setFolded(true);
                    top1 = evaluateTop1(sub, *data, evalItems, o.batch, {}, o.engine, o.dtype).top1;
                }
                std::lock_guard<std::mutex> lock(mu);
                done[todo[k].first] = {todo[k].second, top1};
                if (done.size() % 10 == 0) save();
                AccuracyTableProgress p;
                p.total = samples.size();
                p.resumed = samples.size() - todo.size();
                p.last_top1 = top1;
                p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                p.done = 0;
                for (const auto& s : samples) p.done += done.count(s.first);
                if (onProgress) onProgress(p);
                job.report(p.done, p.total, "measuring subnets");
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(mu);
            if (!error) error = std::current_exception();
            failed = true;
        }
    };
    std::vector<std::thread> pool;
    for (int w = 0; w < std::max(1, o.workers); ++w) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    {
        std::lock_guard<std::mutex> lock(mu);
        save();
    }
    if (error) std::rethrow_exception(error);
    return done.size();
}

}  // namespace tinyscope
