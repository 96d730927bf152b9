// The safe pickle reader and the writer: real numpy and torch pickles, the global whitelist,
// malformed input, and files Python's numpy reads back.
#include "HostilePickles.h"
#include "TestSupport.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/Pickle.h"
#include "space/PyRandom.h"
#include "tinyengine/QuantizedParams.h"

#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <cstring>
#include <limits>
#include <unistd.h>

using namespace tinyscope;
using test::errorOf;

namespace {

QString systemPython() { return QFileInfo::exists(QStringLiteral("/usr/bin/python3")) ? QStringLiteral("/usr/bin/python3") : QStringLiteral("python3"); }

// Runs `script` with python3 (argv[1] = `arg`); its stdout, or "NO_NUMPY" when numpy is missing.
QString python(const QString& script, const QString& arg)
{
    QProcess py;
    py.start(systemPython(), {QStringLiteral("-c"), QStringLiteral("import sys\ntry:\n import numpy as np\nexcept ImportError:\n print('NO_NUMPY'); sys.exit(0)\n") + script, arg});
    if (!py.waitForFinished(60000)) return QStringLiteral("TIMEOUT");
    return QString::fromUtf8(py.readAllStandardOutput()).trimmed() + QString::fromUtf8(py.readAllStandardError()).trimmed();
}

// A protocol-2 numpy array pickle whose state declares `shape` and holds `data` (our writer, so
// the test needs no numpy).
std::string arrayPickle(std::vector<std::int64_t> shape, std::string data, ScalarType t = ScalarType::Int8)
{
    NdArray a;
    a.dtype = t;
    a.shape = {static_cast<std::int64_t>(data.size()) / scalarSize(t)};
    a.data = std::move(data);
    PyRef d = PyValue::dictionary();
    d->dict.emplace_back(PyValue::str("v0_weight"), PyValue::ndarray(a));
    std::string bytes = writePickle(*d);
    // Patch the shape tuple "(K<n>t" the writer emits for a 1-D array into the declared one.
    std::string from = "(";
    const std::int64_t n = a.shape[0];
    from += n < 256 ? std::string("K") + static_cast<char>(n) : std::string("M") + static_cast<char>(n & 0xFF) + static_cast<char>(n >> 8);
    from += "t";
    std::string to = "(";
    for (std::int64_t v : shape) {
        to += "\x8a\x08";
        for (int k = 0; k < 8; ++k) to += static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * k)) & 0xFF);
    }
    to += "t";
    const auto at = bytes.find(from);   // the state's shape tuple comes first
    QTEST_ASSERT(at != std::string::npos);
    bytes.replace(at, from.size(), to);
    return bytes;
}

// A string literal with its NUL bytes.
template <std::size_t N>
std::string bin(const char (&s)[N])
{
    return std::string(s, N - 1);
}

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

    void refusesEveryHostilePayloadWithoutRunningIt()
    {
        const std::string marker = tmp.path().toStdString() + "/pwned";
        const auto payloads = test::hostilePickles(marker);
        QVERIFY(payloads.size() >= 19);
        // The payloads are real: Python's pickle runs those marked so (checked below when python3 is there).
        int ranInPython = 0;
        for (std::size_t i = 0; i < payloads.size(); ++i) {
            const std::string file = tmp.path().toStdString() + "/hostile" + std::to_string(i) + ".pkl";
            writeFileAtomic(file, payloads[i].bytes);
            if (payloads[i].runs_in_python && QFileInfo::exists(systemPython())) {
                QProcess py;
                py.start(systemPython(), {QStringLiteral("-c"), QStringLiteral("import pickle, sys\ntry: pickle.load(open(sys.argv[1], 'rb'))\nexcept Exception: pass"),
                                          QString::fromStdString(file)});
                QVERIFY(py.waitForFinished(60000));
                if (QFileInfo::exists(QString::fromStdString(marker))) ++ranInPython;
                QFile::remove(QString::fromStdString(marker));
            }
            // Every entry point that reads a pickle: bytes, a params file.
            for (int entry = 0; entry < 2; ++entry) {
                bool inputError = false;
                std::string msg;
                try {
                    if (entry == 0) readPickle(payloads[i].bytes, "hostile.pkl");
                    else readParamsPickle(file);
                } catch (const InputError& e) {
                    inputError = true;
                    msg = e.what();
                }
                QVERIFY2(inputError, payloads[i].kind.c_str());
                QVERIFY2(msg.find(entry == 0 ? "hostile.pkl" : file) != std::string::npos, msg.c_str());
                QVERIFY2(!QFileInfo::exists(QString::fromStdString(marker)), payloads[i].kind.c_str());
            }
        }
        if (QFileInfo::exists(systemPython())) QCOMPARE(ranInPython, 12);
    }

    void readsNumpyProtocol5ArraysAndEmptyProtocol2Arrays()
    {
        const QString path = tmp.path() + QStringLiteral("/np.pkl");
        const QString out = python(QStringLiteral(
            "import pickle\n"
            "d = {'w': np.arange(-3, 3, dtype='i1').reshape(2, 3), 'f': np.asfortranarray(np.arange(6, dtype='f4').reshape(2, 3)),\n"
            "     'ro': np.frombuffer(b'abcd', dtype='u1'), 'e': np.zeros(0, dtype='f4'), 'b': np.array([70000, -1], dtype='i4')}\n"
            "open(sys.argv[1] + '5', 'wb').write(pickle.dumps(d, protocol=5))\n"
            "open(sys.argv[1] + '2', 'wb').write(pickle.dumps({'e': np.zeros(0, dtype='i1'), 'z': np.zeros((2, 0), dtype='f4'),\n"
            "                                                  'w': np.array([1, -2], dtype='i1')}, protocol=2))\n"
            "print('ok')"), path);
        if (out == QStringLiteral("NO_NUMPY")) QSKIP("python3-numpy is not installed (./setup.sh test installs it)");
        QCOMPARE(out, QStringLiteral("ok"));
        const std::string p5 = readFileBytes(path.toStdString() + "5");
        QVERIFY(p5.find("_frombuffer") != std::string::npos && p5.find('\x96') != std::string::npos);   // BYTEARRAY8
        for (const std::string& bytes : {p5, [&] {
                 // numpy 2 names the module numpy._core.
                 std::string b = p5;
                 const std::string from = std::string("\x8c\x12") + "numpy.core.numeric", to = std::string("\x8c\x13") + "numpy._core.numeric";
                 b.replace(b.find(from), from.size(), to);
                 return b;
             }()}) {
            PyRef d = readPickle(bytes, "np5.pkl");
            QCOMPARE(d->get("w")->array.shape, (std::vector<std::int64_t>{2, 3}));
            QCOMPARE(d->get("w")->array.data, std::string("\xfd\xfe\xff\x00\x01\x02", 6));
            const NdArray& f = d->get("f")->array;
            QVERIFY(f.fortran_order);
            QCOMPARE(f.shape, (std::vector<std::int64_t>{2, 3}));
            float fv[6];
            std::memcpy(fv, f.data.data(), 24);
            QCOMPARE(std::vector<float>(fv, fv + 6), (std::vector<float>{0, 3, 1, 4, 2, 5}));   // column-major
            QCOMPARE(d->get("ro")->array.data, std::string("abcd"));
            QCOMPARE(d->get("e")->array.shape, (std::vector<std::int64_t>{0}));
            QCOMPARE(d->get("e")->array.data.size(), std::size_t(0));
            QCOMPARE(sumAs<std::int32_t>(d->get("b")->array), std::int64_t(69999));
        }
        const std::string p2 = readFileBytes(path.toStdString() + "2");
        QVERIFY(p2.find("__builtin__\nbytes") != std::string::npos);
        PyRef d2 = readPickle(p2, "np2.pkl");
        QCOMPARE(d2->get("e")->array.shape, (std::vector<std::int64_t>{0}));
        QCOMPARE(d2->get("z")->array.shape, (std::vector<std::int64_t>{2, 0}));
        QCOMPARE(d2->get("w")->array.data, std::string("\x01\xfe", 2));
        // Through the params reader too (what inspect / quantize --params use).
        const QuantizedParams q = readParamsPickle(path.toStdString() + "5");
        QCOMPARE(q.floats("vf"), (std::vector<float>{0, 1, 2, 3, 4, 5}));   // rewritten in C order
    }

    void inBandBufferOpcodesAndEmptyBytes()
    {
        // bytes() (how protocol 2 writes b'') and a read-only in-band buffer; out-of-band buffers
        // (NEXT_BUFFER) need data outside the file and are refused with the reason.
        PyRef e = readPickle(std::string("\x80\x02" "c__builtin__\nbytes\n)R.", 24), "e.pkl");
        QCOMPARE(e->kind, PyValue::Kind::Bytes);
        QCOMPARE(e->s, std::string());
        QCOMPARE(readPickle(std::string("\x80\x05\x96\x02\x00\x00\x00\x00\x00\x00\x00hi\x98.", 15), "b.pkl")->s, std::string("hi"));
        QVERIFY2(errorOf([] { readPickle(std::string("\x80\x05\x97.", 4), "oob.pkl"); }).find("out-of-band") != std::string::npos,
                 errorOf([] { readPickle(std::string("\x80\x05\x97.", 4), "oob.pkl"); }).c_str());
        QVERIFY(errorOf([] { readPickle(std::string("\x80\x02" "c__builtin__\nbytes\n(K\x01tR.", 27), "e"); }).find("without arguments") != std::string::npos);
    }

    void shapesWhoseProductOverflowsAreRefused()
    {
        // A params array declared 2^32 x 2^32 (the product wraps to 0 in int64) with 0 data bytes.
        const std::string bytes = arrayPickle({std::int64_t(1) << 32, std::int64_t(1) << 32}, "");
        std::string msg = errorOf([&] { readPickle(bytes, "wrap.pkl"); });
        QVERIFY2(msg.find("wrap.pkl") != std::string::npos && msg.find("more elements than 2^63") != std::string::npos, msg.c_str());
        const std::string file = tmp.path().toStdString() + "/wrap.pkl";
        writeFileAtomic(file, bytes);
        msg = errorOf([&] { readParamsPickle(file); });
        QVERIFY2(msg.find("more elements than 2^63") != std::string::npos, msg.c_str());
        // Products that fit but disagree with the data are refused as before.
        msg = errorOf([&] { readPickle(arrayPickle({3, 5}, std::string(14, 'x')), "short.pkl"); });
        QVERIFY2(msg.find("array data holds 14 bytes, shape needs 15") != std::string::npos, msg.c_str());
        QCOMPARE(readPickle(arrayPickle({3, 5}, std::string(15, 'x')), "ok.pkl")->get("v0_weight")->array.shape,
                 (std::vector<std::int64_t>{3, 5}));
    }

    void smallPicklesThatExpandAreRefusedWithBoundedMemory()
    {
        // 4 MB of None: 1.6 GB of values before the budget existed.
        const std::string nones = "\x80\x02" + std::string(4'000'000, 'N') + ".";
        int exitCode = -1;
        long kb = test::peakGrowthKB([&] { readPickle(nones, "nones.pkl"); }, &exitCode);
        std::string msg = errorOf([&] { readPickle(nones, "nones.pkl"); });
        QVERIFY2(msg.find("nones.pkl") != std::string::npos && msg.find("more than 256 MiB") != std::string::npos, msg.c_str());
        QCOMPARE(exitCode, 0);
        qInfo("peak memory growth: %ld KiB", kb);
        QVERIFY2(kb >= 0 && kb < 450 * 1024, qPrintable(QStringLiteral("peak grew by %1 KiB").arg(kb)));
        // One 1 MiB bytes (memo 0) made the data of 1,000 arrays through memo references: 1 GiB of
        // copies from a 1 MiB file.
        const std::string head = bin("\x80\x04" "(B") + test::u32le(1u << 20) + std::string(1u << 20, '\x01') + bin("q\x00") +
                                 "cnumpy.core.multiarray\n_reconstruct\nq\x01" + "cnumpy\nndarray\nq\x02" + bin("(K\x00tq\x03") + "C\x01" "bq\x04" +
                                 bin("cnumpy\ndtype\n(X\x02\x00\x00\x00u1\x89\x88tRq\x05") + "(J" + test::u32le(1u << 20) + "tq\x06" + "](";
        const std::string array = std::string("h\x01h\x02h\x03h\x04\x87R(K\x01h\x06h\x05\x89h\x00tb", 22);
        auto arrays = [&](int n) {
            std::string p = head;
            for (int i = 0; i < n; ++i) p += array;
            return p + "et.";   // (buffer, globals..., [arrays])
        };
        const std::string copies = arrays(1000);
        kb = test::peakGrowthKB([&] { readPickle(copies, "copies.pkl"); }, &exitCode);
        msg = errorOf([&] { readPickle(copies, "copies.pkl"); });
        QVERIFY2(msg.find("more than 256 MiB") != std::string::npos, msg.c_str());
        QCOMPARE(exitCode, 0);
        qInfo("peak memory growth: %ld KiB", kb);
        QVERIFY2(kb >= 0 && kb < 450 * 1024, qPrintable(QStringLiteral("peak grew by %1 KiB").arg(kb)));
        // 200 of them (200 MiB of array data) are within the budget.
        PyRef fits = readPickle(arrays(200), "fits.pkl");
        const PyRef list = fits->items.back();
        QCOMPARE(list->items.size(), std::size_t(200));
        QCOMPARE(list->items[199]->array.data.size(), std::size_t(1) << 20);
    }

    void paramsPicklesAreBoundedAndFinite()
    {
        // A params "pickle" larger than any MCU model (sparse, so it costs no disk).
        const std::string big = tmp.path().toStdString() + "/big.pkl";
        writeFileAtomic(big, "");
        QVERIFY(truncate(big.c_str(), (std::int64_t(64) << 20) + 1) == 0);
        std::string msg = errorOf([&] { readParamsPickle(big); });
        QVERIFY2(msg.find("more than the 64.0 MB a params pickle may have") != std::string::npos, msg.c_str());
        // A NaN scale: every int8 output it touches would be garbage.
        NdArray s;
        s.dtype = ScalarType::Float32;
        s.shape = {2, 2};
        const float v[4] = {0.5f, 1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
        s.data.assign(reinterpret_cast<const char*>(v), sizeof v);
        PyRef d = PyValue::dictionary();
        d->dict.emplace_back(PyValue::str("v0_scale"), PyValue::ndarray(s));
        const std::string nan = tmp.path().toStdString() + "/nan.pkl";
        writeFileAtomic(nan, writePickle(*d));
        msg = errorOf([&] { readParamsPickle(nan); });
        QVERIFY2(msg.find("nan.pkl: 'v0_scale' element [1, 0] is nan") != std::string::npos, msg.c_str());
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
