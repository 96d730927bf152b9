// Damaged and hostile checkpoints (torch.save zips), made by the test itself: records failing their
// CRC-32, deflated records that expand, sizes the zip or the pickle forge, views that overflow or
// multiply their storage, NaN / Inf weights and negative BN variances, pickles that would run
// code. Each is an InputError naming the file and the place, and exit code 2 in the CLI.
#include "HostilePickles.h"
#include "TestSupport.h"

#include "io/AtomicFile.h"
#include "io/Pickle.h"
#include "nn/supernet/Checkpoint.h"
#include "nn/supernet/Supernet.h"
#include "space/SpacePresets.h"

#include <ATen/ATen.h>

#include <QImage>
#include <QProcess>
#include <QTemporaryDir>

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace tinyscope;

namespace {

std::string le(std::uint64_t v, int n)
{
    std::string s;
    for (int k = 0; k < n; ++k) s += static_cast<char>((v >> (8 * k)) & 0xFF);
    return s;
}

std::string rawDeflate(const std::string& in)
{
    z_stream z{};
    QTEST_ASSERT(deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out(deflateBound(&z, in.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    QTEST_ASSERT(deflate(&z, Z_FINISH) == Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

// A zip as torch.save lays it out (every record in one folder), stored or deflated per entry;
// `declared` overrides the uncompressed size the headers claim.
struct ZipFile {
    struct Entry {
        std::string name, data;
        bool deflate = false;
        std::int64_t declared = -1;
    };
    std::vector<Entry> entries;

    ZipFile& add(std::string name, std::string data, bool deflate = false, std::int64_t declared = -1)
    {
        entries.push_back({"archive/" + std::move(name), std::move(data), deflate, declared});
        return *this;
    }
    std::string bytes() const
    {
        std::string out, central;
        for (const Entry& e : entries) {
            const std::string body = e.deflate ? rawDeflate(e.data) : e.data;
            const std::uint32_t crc = static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(e.data.data()), static_cast<uInt>(e.data.size())));
            const std::uint64_t size = e.declared >= 0 ? static_cast<std::uint64_t>(e.declared) : e.data.size();
            const std::string common = le(20, 2) + le(0, 2) + le(e.deflate ? 8 : 0, 2) + le(0, 4) + le(crc, 4) + le(body.size(), 4) + le(size, 4) +
                                       le(e.name.size(), 2) + le(0, 2);
            central += le(0x02014b50, 4) + le(20, 2) + common + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(out.size(), 4) + e.name;
            out += le(0x04034b50, 4) + common + e.name + body;
        }
        return out + central + le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(entries.size(), 2) + le(entries.size(), 2) +
               le(central.size(), 4) + le(out.size(), 4) + le(0, 2);
    }
};

TensorRef tensorRef(const std::string& key, std::int64_t storageNumel, std::vector<std::int64_t> shape, std::vector<std::int64_t> stride,
              std::int64_t offset = 0)
{
    TensorRef t;
    t.storage_key = key;
    t.storage_numel = storageNumel;
    t.shape = std::move(shape);
    t.stride = std::move(stride);
    t.offset = offset;
    return t;
}

// A bare state dict {name: tensor} with the given storage records (float32).
std::string checkpointOf(const std::vector<std::pair<std::string, TensorRef>>& tensors, const std::vector<std::pair<std::string, std::string>>& records)
{
    PyRef dict = PyValue::dictionary();
    for (const auto& [k, t] : tensors) dict->dict.emplace_back(PyValue::str(k), PyValue::tensorRef(t));
    PickleWriteOptions o;
    o.ordered_dicts = true;
    ZipFile z;
    z.add("data.pkl", writePickle(*dict, o));
    for (const auto& [key, data] : records) z.add("data/" + key, data);
    z.add("version", "3\n");
    return z.bytes();
}

std::string floats(std::initializer_list<float> v) { return std::string(reinterpret_cast<const char*>(v.begin()), v.size() * sizeof(float)); }

using test::errorOf;

}  // namespace

class TestCheckpoint : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;
    QString supernet, folder, cfg, input;
    StateDict sd;

    std::string path(const char* name) const { return tmp.path().toStdString() + "/" + name; }

private Q_SLOTS:
    void initTestCase()
    {
        Supernet net = Supernet::initialize(presetSpace("mcunet-fmnist"), 3);
        supernet = tmp.path() + QStringLiteral("/init.pth");
        net.save(supernet.toStdString());
        sd = net.stateDict();
        // What eval and forward need besides the checkpoint.
        folder = tmp.path() + QStringLiteral("/images");
        for (int c = 0; c < 10; ++c) {
            const QString d = folder + QStringLiteral("/class%1").arg(c);
            QDir().mkpath(d);
            QImage img(28, 28, QImage::Format_Grayscale8);
            img.fill(20 * c);
            QVERIFY(img.save(d + QStringLiteral("/0.png")));
        }
        cfg = tmp.path() + QStringLiteral("/cfg.json");
        writeFileAtomic(cfg.toStdString(),
                        R"({"wid": 0, "ks": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "e": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "d": [0,0,0,0,0,0], "image_size": 28})");
        input = tmp.path() + QStringLiteral("/x.bin");
        writeFileAtomic(input.toStdString(), std::string(3 * 28 * 28 * sizeof(float), '\0'));
    }

    void deflatedPickleBombIsRefusedWithBoundedMemory()
    {
        // 4 MB of None deflated to a few KB: 1.6 GB of values before.
        const std::string bomb = ZipFile().add("data.pkl", "\x80\x02" + std::string(4'000'000, 'N') + ".", true).add("version", "3\n").bytes();
        QVERIFY(bomb.size() < 10'000);
        int exitCode = -1;
        const long kb = test::peakGrowthKB([&] { readCheckpointBytes(bomb, "bomb.pth"); }, &exitCode);
        const std::string msg = errorOf([&] { readCheckpointBytes(bomb, "bomb.pth"); });
        QVERIFY2(msg.find("bomb.pth: data.pkl: pickle byte") != std::string::npos && msg.find("more than 256 MiB") != std::string::npos, msg.c_str());
        QCOMPARE(exitCode, 0);
        qInfo("peak memory growth: %ld KiB", kb);
        QVERIFY2(kb >= 0 && kb < 450 * 1024, qPrintable(QStringLiteral("peak grew by %1 KiB").arg(kb)));
    }

    void zipSizesAreCheckedBeforeExtraction()
    {
        const TensorRef four = tensorRef("0", 4, {4}, {1});
        // A storage record that declares 1 GiB from a deflated kilobyte.
        std::string z = ZipFile().add("data.pkl", "\x80\x02}.").add("data/0", std::string(1000, 'x'), true, std::int64_t(1) << 30).add("version", "3\n").bytes();
        std::string msg = errorOf([&] { readCheckpointBytes(z, "inflated.pth"); });
        QVERIFY2(msg.find("inflated.pth") != std::string::npos && msg.find("'archive/data/0' declares 1073741824 bytes") != std::string::npos &&
                     msg.find("more than deflate can expand") != std::string::npos, msg.c_str());
        // A data.pkl beyond 64 MiB (deflated zeros: 65 KB on disk).
        z = ZipFile().add("data.pkl", std::string((std::size_t(64) << 20) + 1, '\0'), true).add("version", "3\n").bytes();
        msg = errorOf([&] { readCheckpointBytes(z, "hugepkl.pth"); });
        QVERIFY2(msg.find("hugepkl.pth: record 'archive/data.pkl' declares 67108865 bytes, more than the 64 MiB") != std::string::npos, msg.c_str());
        // A record holding more bytes than the pickle declares for its storage (before: accepted).
        z = checkpointOf({{"w", four}}, {{"0", floats({1, 2, 3, 4, 5, 6, 7, 8})}});
        msg = errorOf([&] { readCheckpointBytes(z, "long.pth"); });
        QVERIFY2(msg.find("long.pth: tensor 'w': storage record 'data/0' holds 32 bytes, the pickle declares 4 float32 elements (16 bytes)") !=
                     std::string::npos, msg.c_str());
        // And the matching file reads.
        Checkpoint ok = readCheckpointBytes(checkpointOf({{"w", four}}, {{"0", floats({1, 2, 3, 4})}}), "ok.pth");
        QCOMPARE(ok.state_dict[0].second.sum().item<float>(), 10.0f);
    }

    void forgedTensorHeadersAreInputErrors()
    {
        const std::string one = floats({7});
        struct Case {
            TensorRef t;
            const char* expect;
        } cases[] = {
            // A view of 2^60 elements over one float (stride 0): .contiguous() would need 4 EiB.
            {tensorRef("0", 1, {std::int64_t(1) << 40, std::int64_t(1) << 20}, {0, 0}), "the tensors need more than 2147483648 bytes"},
            // shape x stride products beyond int64 (signed overflow before).
            {tensorRef("0", 1, {std::int64_t(1) << 40, std::int64_t(1) << 40}, {std::int64_t(1) << 40, 1}), "has more elements than 2^63"},
            {tensorRef("0", 1, {2, 2}, {std::int64_t(1) << 40, std::int64_t(1) << 40}), "reaches past its storage of 1 elements"},
            {tensorRef("0", 1, {std::int64_t(1) << 30, 3}, {std::int64_t(1) << 40, std::int64_t(1) << 40}), "overflows"},
            // A storage declaring 2^62 float32 elements: 2^64 bytes.
            {tensorRef("0", std::int64_t(1) << 62, {1}, {1}), "more than 2^63 bytes"},
        };
        for (const Case& c : cases) {
            const std::string z = checkpointOf({{"head.weight", c.t}}, {{"0", one}});
            const QString msg = test::inputErrorOf([&] { readCheckpointBytes(z, "forged.pth"); });
            QVERIFY2(msg.contains(QStringLiteral("forged.pth: tensor 'head.weight'")) && msg.contains(QLatin1String(c.expect)), qPrintable(msg));
        }
        // Two tensors viewing one storage (tied weights) read, each its part.
        Checkpoint tied = readCheckpointBytes(checkpointOf({{"a", tensorRef("0", 4, {2}, {1})}, {"b", tensorRef("0", 4, {2}, {1}, 2)}, {"c", tensorRef("0", 4, {2, 2}, {1, 2})}},
                                                           {{"0", floats({1, 2, 3, 4})}}),
                                              "tied.pth");
        QCOMPARE(tied.state_dict[1].second[1].item<float>(), 4.0f);
        QCOMPARE(tied.state_dict[2].second[0][1].item<float>(), 3.0f);   // transposed view, copied
    }

    void recordsFailingTheirCrcAreRefused()
    {
        StateDict small = {{"conv.weight", at::arange(64, at::kFloat).reshape({4, 16})}, {"bn.running_var", at::ones({4})}};
        saveStateDict(path("good.pth"), small, false);
        const std::string good = readFileBytes(path("good.pth"));
        QCOMPARE(readCheckpoint(path("good.pth")).state_dict.size(), std::size_t(2));
        // One weight changed in place (37.0 -> 38.0): a silent wrong value before.
        std::string bad = good;
        const float from = 37.0f, to = 38.0f;
        const auto at = bad.find(std::string(reinterpret_cast<const char*>(&from), 4));
        QVERIFY(at != std::string::npos);
        bad.replace(at, 4, std::string(reinterpret_cast<const char*>(&to), 4));
        writeFileAtomic(path("bitrot.pth"), bad);
        std::string msg = errorOf([&] { readCheckpoint(path("bitrot.pth")); });
        QVERIFY2(msg.find("bitrot.pth: tensor 'conv.weight': record '") != std::string::npos && msg.find("/data/0' fails its CRC-32 check") != std::string::npos,
                 msg.c_str());
        // A key renamed inside data.pkl.
        bad = good;
        const auto key = bad.find("conv.weight");
        QVERIFY(key != std::string::npos);
        bad[key + 10] = 'T';
        msg = errorOf([&] { readCheckpointBytes(bad, "renamed.pth"); });
        QVERIFY2(msg.find("renamed.pth: record '") != std::string::npos && msg.find("/data.pkl' fails its CRC-32 check") != std::string::npos, msg.c_str());
    }

    void nanInfAndNegativeVarianceAreRefused()
    {
        const DesignSpace space = presetSpace("mcunet-fmnist");
        auto withValue = [&](const std::string& key, std::vector<std::int64_t> index, double v, at::ScalarType type = at::kFloat) {
            StateDict copy;
            for (const auto& kv : sd) {
                at::Tensor t = kv.second.detach().clone();
                if (kv.first == key) {
                    t = t.to(type);
                    at::Tensor e = t;
                    for (std::int64_t i : index) e = e[i];
                    e.fill_(v);
                }
                copy.emplace_back(kv.first, t);
            }
            const std::string file = path("values.pth");
            saveStateDict(file, copy, true);
            return errorOf([&] { Supernet::load(space, file); });
        };
        const std::string conv = sd.front().first;
        QCOMPARE(sd.front().second.dim(), std::int64_t(4));
        std::string msg = withValue(conv, {1, 0, 2, 1}, std::nan(""));
        QVERIFY2(msg.find("values.pth: tensor '" + conv + "' element [1, 0, 2, 1] is nan") != std::string::npos, msg.c_str());
        msg = withValue(conv, {0, 2, 0, 0}, -std::numeric_limits<double>::infinity());
        QVERIFY2(msg.find("element [0, 2, 0, 0] is -inf") != std::string::npos, msg.c_str());
        // A float64 value beyond float32's range turns infinite in the evaluator.
        msg = withValue(conv, {0, 0, 0, 1}, 1e300, at::kDouble);
        QVERIFY2(msg.find("element [0, 0, 0, 1] is 1e+300 (beyond float32's range)") != std::string::npos, msg.c_str());
        std::string var;
        for (const auto& kv : sd)
            if (kv.first.size() > 11 && kv.first.compare(kv.first.size() - 11, 11, "running_var") == 0) var = kv.first;
        QVERIFY(!var.empty());
        msg = withValue(var, {3}, -0.5);
        QVERIFY2(msg.find("values.pth: tensor '" + var + "' element [3] is -0.5: a batch-norm running variance cannot be negative") != std::string::npos,
                 msg.c_str());
        // Zero variance (a dead channel) is legitimate.
        QCOMPARE(withValue(var, {3}, 0.0), std::string("<no error>"));
    }

    void hostileDataPklNeverRunsCode()
    {
        const std::string marker = path("pwned");
        for (const test::HostilePickle& p : test::hostilePickles(marker)) {
            const std::string z = ZipFile().add("data.pkl", p.bytes).add("version", "3\n").bytes();
            const QString msg = test::inputErrorOf([&] { readCheckpointBytes(z, "hostile.pth"); });
            QVERIFY2(msg.startsWith(QStringLiteral("hostile.pth: data.pkl: pickle byte")), qPrintable(QString::fromStdString(p.kind) + QStringLiteral(": ") + msg));
            QVERIFY2(!QFileInfo::exists(QString::fromStdString(marker)), p.kind.c_str());
        }
    }

    void checkpointsRepackedByPythonZipfileRead()
    {
        // Deflated records and zip64 local headers (Python's zipfile) go through the same checks.
        const QString repacked = tmp.path() + QStringLiteral("/repacked.pth");
        QProcess py;
        py.start(QFileInfo::exists(QStringLiteral("/usr/bin/python3")) ? QStringLiteral("/usr/bin/python3") : QStringLiteral("python3"),
                 {QStringLiteral("-c"), QStringLiteral("import sys, zipfile\n"
                                                       "src = zipfile.ZipFile(sys.argv[1])\n"
                                                       "with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as dst:\n"
                                                       "    for i in src.infolist():\n"
                                                       "        with dst.open(i.filename, 'w', force_zip64=True) as f: f.write(src.read(i.filename))\n"),
                  supernet, repacked});
        QVERIFY(py.waitForFinished(120000));
        if (py.exitCode() != 0 || !QFileInfo::exists(repacked)) QSKIP("python3 is not available to repack the checkpoint");
        QVERIFY(QFileInfo(repacked).size() < QFileInfo(supernet).size());   // really deflated
        const Supernet back = Supernet::load(presetSpace("mcunet-fmnist"), repacked.toStdString());
        for (const auto& kv : sd) QVERIFY2(at::equal(kv.second, back.tensor(kv.first)), kv.first.c_str());
    }

    void cliExitsWith2NamingTheFile()
    {
        const std::string marker = path("cli-pwned");
        // Bad checkpoints: a CRC failure, NaN weights, a forged header, a deflated bomb, hostile code.
        std::string good = readFileBytes(supernet.toStdString());
        {
            std::string bad = good;
            bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x40);
            writeFileAtomic(path("crc.pth"), bad);
        }
        {
            StateDict copy = sd;
            copy.front().second = copy.front().second.detach().clone();
            copy.front().second.view({-1})[5] = std::numeric_limits<float>::quiet_NaN();
            saveStateDict(path("nan.pth"), copy, true);
        }
        writeFileAtomic(path("forged.pth"), checkpointOf({{sd.front().first, tensorRef("0", 1, {std::int64_t(1) << 40, std::int64_t(1) << 20}, {0, 0})}},
                                                         {{"0", floats({1})}}));
        writeFileAtomic(path("bomb.pth"), ZipFile().add("data.pkl", "\x80\x02" + std::string(4'000'000, 'N') + ".", true).add("version", "3\n").bytes());
        writeFileAtomic(path("hostile.pth"), ZipFile().add("data.pkl", test::hostilePickles(marker).front().bytes).add("version", "3\n").bytes());
        writeFileAtomic(path("hostile.pkl"), test::hostilePickles(marker)[1].bytes);
        struct Case {
            const char* file;
            const char* expect;
        } cases[] = {
            {"crc.pth", "fails its CRC-32 check"},
            {"nan.pth", "is nan: NaN or infinite weights"},
            {"forged.pth", "the tensors need more than"},
            {"bomb.pth", "more than 256 MiB"},
            {"hostile.pth", "refusing global 'os.system'"},
        };
        auto check = [&](const QStringList& args, const std::string& file, const char* expect) {
            const test::CliRun r = test::runTinyscope(args);
            const QString what = args.join(QLatin1Char(' ')) + QStringLiteral(" -> %1: ").arg(r.code) + QString::fromStdString(r.err);
            QVERIFY2(r.code == 2, qPrintable(what));
            QVERIFY2(r.err.find(file) != std::string::npos && r.err.find(expect) != std::string::npos, qPrintable(what));
            QVERIFY2(test::lineCount(r.err) == 1, qPrintable(what));
            QVERIFY(!QFileInfo::exists(QString::fromStdString(marker)));
        };
        for (const Case& c : cases) {
            const QString f = QString::fromStdString(path(c.file));
            check({QStringLiteral("eval"), QStringLiteral("--supernet"), f, QStringLiteral("--data"), folder, QStringLiteral("--no-calib")}, path(c.file), c.expect);
            check({QStringLiteral("forward"), QStringLiteral("--supernet"), f, QStringLiteral("--space"), QStringLiteral("mcunet-fmnist"), QStringLiteral("--config"),
                   cfg, QStringLiteral("--input"), input},
                  path(c.file), c.expect);
        }
        // Params pickles: inspect and quantize --params.
        const QString pkl = QString::fromStdString(path("hostile.pkl"));
        check({QStringLiteral("quantize"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"), pkl}, path("hostile.pkl"),
              "refusing global 'posix.system'");
        if (test::haveShared()) {
            const QString graph = QString::fromStdString(test::sharedPath("reference/tinyengine/49kb-int8-graph.json"));
            check({QStringLiteral("inspect"), graph, QStringLiteral("--params"), pkl}, path("hostile.pkl"), "refusing global 'posix.system'");
            NdArray a;
            a.dtype = ScalarType::Int8;
            a.shape = {2};
            a.data = "ab";
            PyRef d = PyValue::dictionary();
            d->dict.emplace_back(PyValue::str("v0_weight"), PyValue::ndarray(a));
            std::string wrap = writePickle(*d);
            const std::string from = "(K\x02t", to = "(\x8a\x08" + le(std::uint64_t(1) << 32, 8) + "\x8a\x08" + le(std::uint64_t(1) << 32, 8) + "t";
            wrap.replace(wrap.find(from), from.size(), to);
            wrap.replace(wrap.find(std::string("X\x02\x00\x00\x00" "ab", 7)), 7, std::string("X\x00\x00\x00\x00", 5));
            writeFileAtomic(path("wrap.pkl"), wrap);
            check({QStringLiteral("inspect"), graph, QStringLiteral("--params"), QString::fromStdString(path("wrap.pkl"))}, path("wrap.pkl"),
                  "more elements than 2^63");
        }
    }
};

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
