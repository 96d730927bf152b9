// The safe pickle reader and the writer: real numpy and torch pickles, the global whitelist,
// malformed input, and files Python's numpy reads back.
#include "TestSupport.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/Pickle.h"
#include "space/PyRandom.h"

#include <QProcess>
#include <QTemporaryDir>

#include <cstring>

using namespace tinyscope;
using test::errorOf;

namespace {

template <class T>
std::int64_t sumAs(const NdArray& a)
{
    std::int64_t s = 0;
    for (std::int64_t i = 0; i < a.numel(); ++i) {
        T v;
        std::memcpy(&v, a.data.data() + i * sizeof(T), sizeof(T));
        s += v;
    }
    return s;
}
}  // namespace

class TestPickle : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;

private Q_SLOTS:
    void readsTheRealTinyEngineParamsPickle()
    {
        REQUIRE_SHARED();
        const std::string path = test::sharedPath("reference/tinyengine/full-int8-params.pkl");
        PyRef root = readPickle(readFileBytes(path), path);
        QCOMPARE(root->kind, PyValue::Kind::Dict);
        QCOMPARE(root->dict.size(), std::size_t(257));
        PyRef w = root->get("v0_weight");
        QVERIFY(w && w->kind == PyValue::Kind::Array);
        QCOMPARE(w->array.dtype, ScalarType::Int8);
        QCOMPARE(w->array.shape, (std::vector<std::int64_t>{16, 3, 3, 3}));
        QCOMPARE(sumAs<std::int8_t>(w->array), std::int64_t(1644));    // numpy: v0_weight.sum()
        PyRef b = root->get("v0_bias");
        QCOMPARE(b->array.dtype, ScalarType::Int32);
        QCOMPARE(sumAs<std::int32_t>(b->array), std::int64_t(-4294514643LL));
        QCOMPARE(root->get("v0_zero_y")->array.shape, (std::vector<std::int64_t>{1}));
        QCOMPARE(sumAs<std::int8_t>(root->get("v0_zero_y")->array), std::int64_t(-128));
        QCOMPARE(root->get("v0_scale")->array.dtype, ScalarType::Float32);
        // Sum of every integer array, as numpy computes it.
        std::int64_t total = 0;
        for (const auto& kv : root->dict) {
            const NdArray& a = kv.second->array;
            if (a.dtype == ScalarType::Int8) total += sumAs<std::int8_t>(a);
            if (a.dtype == ScalarType::Int32) total += sumAs<std::int32_t>(a);
        }
        QCOMPARE(total, std::int64_t(-74527294917LL));
    }

    void refusesGlobalsOutsideTheWhitelist()
    {
        // pickle.dumps of an object whose __reduce__ is (os.system, ('echo pwned',)), protocol 2.
        const std::string evil = std::string("\x80\x02" "cposix\nsystem\nq\x00X\x0a\x00\x00\x00echo pwnedq\x01\x85q\x02Rq\x03.", 40);
        std::string msg = errorOf([&] { readPickle(evil, "evil.pkl"); });
        QVERIFY2(msg.find("refusing global 'posix.system'") != std::string::npos, msg.c_str());
        QVERIFY(msg.find("evil.pkl") != std::string::npos);
        const std::string builtin = std::string("\x80\x02" "cbuiltins\neval\n.", 18);
        msg = errorOf([&] { readPickle(builtin, "b.pkl"); });
        QVERIFY2(msg.find("refusing global 'builtins.eval'") != std::string::npos, msg.c_str());
    }

    void malformedDataIsAnErrorNotACrash()
    {
        QVERIFY(errorOf([] { readPickle("", "e"); }).find("truncated") != std::string::npos);
        QVERIFY(errorOf([] { readPickle(std::string("\x80\x02}q\x00", 5), "e"); }).find("truncated") != std::string::npos);
        QVERIFY(errorOf([] { readPickle("\x80\x02\xff", "e"); }).find("unsupported pickle opcode 0xff") != std::string::npos);
        QVERIFY(errorOf([] { readPickle("\x80\x02h\x05.", "e"); }).find("memo entry 5") != std::string::npos);
        QVERIFY(errorOf([] { readPickle("\x80\x02X\xff\xff\xff\x7f", "e"); }).find("runs past the end") != std::string::npos);
        // A list that contains itself: ] q0 h0 a .
        QVERIFY(errorOf([] { readPickle(std::string("\x80\x02]q\x00h\x00" "a.", 8), "e"); }).find("recursive") != std::string::npos);
        // Deep nesting is bounded.
        std::string deep = "\x80\x02";
        for (int i = 0; i < 1000; ++i) deep += "]";
        for (int i = 0; i < 999; ++i) deep += "a";
        deep += ".";
        QVERIFY(errorOf([&] { readPickle(deep, "e"); }).find("nesting deeper") != std::string::npos);
    }

    void randomCorruptionNeverCrashes()
    {
        REQUIRE_SHARED();
        const std::string path = test::sharedPath("reference/tinyengine/full-int8-params.pkl");
        const std::string good = readFileBytes(path).substr(0, 4000);
        PyRandom rng(5);
        int errors = 0;
        for (int i = 0; i < 3000; ++i) {
            std::string bad = good;
            const int flips = 1 + static_cast<int>(rng.randbelow(8));
            for (int f = 0; f < flips; ++f)
                bad[rng.randbelow(static_cast<std::uint32_t>(bad.size()))] = static_cast<char>(rng.randbelow(256));
            bad.resize(rng.randbelow(static_cast<std::uint32_t>(bad.size())) + 1);
            try {
                readPickle(bad, "fuzz");
            } catch (const InputError&) {
                ++errors;
            }
        }
        QVERIFY(errors > 2900);   // truncated pickles cannot parse
    }

    void writerRoundTripsAndNumpyReadsIt()
    {
        PyRef d = PyValue::dictionary();
        NdArray w;
        w.dtype = ScalarType::Int8;
        w.shape = {2, 3};
        w.data = std::string("\x01\xff\x02\x80\x7f\x00", 6);
        NdArray s;
        s.dtype = ScalarType::Float32;
        s.shape = {2};
        float sv[2] = {0.5f, -1.25f};
        s.data.assign(reinterpret_cast<const char*>(sv), 8);
        NdArray b;
        b.dtype = ScalarType::Int32;
        b.shape = {1};
        std::int32_t bv = -70000;
        b.data.assign(reinterpret_cast<const char*>(&bv), 4);
        d->dict.emplace_back(PyValue::str("w"), PyValue::ndarray(w));
        d->dict.emplace_back(PyValue::str("scale"), PyValue::ndarray(s));
        d->dict.emplace_back(PyValue::str("bias"), PyValue::ndarray(b));
        for (int protocol : {2, 3}) {
            PickleWriteOptions o;
            o.protocol = protocol;
            std::string bytes = writePickle(*d, o);
            PyRef back = readPickle(bytes, "roundtrip");
            QCOMPARE(back->dict.size(), std::size_t(3));
            QCOMPARE(back->get("w")->array.data, w.data);
            QCOMPARE(back->get("w")->array.shape, w.shape);
            QCOMPARE(back->get("scale")->array.data, s.data);
            QCOMPARE(back->get("bias")->array.dtype, ScalarType::Int32);
            const QString path = tmp.path() + QStringLiteral("/p%1.pkl").arg(protocol);
            writeFileAtomic(path.toStdString(), bytes);
            QProcess py;
            const QString python = QFileInfo::exists(QStringLiteral("/usr/bin/python3")) ? QStringLiteral("/usr/bin/python3") : QStringLiteral("python3");
            py.start(python, {QStringLiteral("-c"), QStringLiteral(
                "import sys, pickle\n"
                "try:\n import numpy\nexcept ImportError:\n print('NO_NUMPY'); sys.exit(0)\n"
                "d = pickle.load(open(sys.argv[1], 'rb'))\n"
                "print(list(d), d['w'].dtype, d['w'].shape, d['w'].tolist(), d['scale'].tolist(), d['bias'].dtype, int(d['bias'][0]))"),
                path});
            QVERIFY(py.waitForFinished(60000));
            const QString out = QString::fromUtf8(py.readAllStandardOutput()).trimmed();
            if (out == QStringLiteral("NO_NUMPY")) QSKIP("python3-numpy is not installed");
            QCOMPARE(out, QStringLiteral("['w', 'scale', 'bias'] int8 (2, 3) [[1, -1, 2], [-128, 127, 0]] [0.5, -1.25] int32 -70000"));
        }
    }
};

QTEST_GUILESS_MAIN(TestPickle)
#include "test_pickle.moc"
