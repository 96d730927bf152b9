// Hostile and malformed input, as a fault campaign found it (issue 16): every case is generated
// here, run through the real binary, and must end in exit code 2 with one line naming the file and
// the place — never a crash, a hang, an unbounded read or exit 1.
#include "TestSupport.h"

#include "data/Image.h"
#include "data/ImageDataset.h"
#include "io/AtomicFile.h"
#include "io/JsonFile.h"
#include "io/Text.h"
#include "tinyengine/BoardProfile.h"

#include <QTemporaryDir>

#include <sys/resource.h>
#include <zlib.h>

using namespace tinyscope;

namespace {

using Run = test::CliRun;

// JSON nested `depth` levels (arrays) around a leaf.
std::string deepJson(int depth, const std::string& leaf = "\"x\"")
{
    return std::string(static_cast<std::size_t>(depth), '[') + leaf + std::string(static_cast<std::size_t>(depth), ']');
}

std::string bigEndian32(std::uint32_t v)
{
    return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// gzip of `header` followed by `zeros` zero bytes, compressed in chunks (the bomb never exists
// uncompressed in the test either).
std::string gzipWithZeros(const std::string& header, std::uint64_t zeros)
{
    z_stream zs{};
    deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    std::string out;
    char buf[1 << 16];
    auto pump = [&](const std::string& in, int flush) {
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
        zs.avail_in = static_cast<uInt>(in.size());
        do {
            zs.next_out = reinterpret_cast<Bytef*>(buf);
            zs.avail_out = sizeof buf;
            deflate(&zs, flush);
            out.append(buf, sizeof buf - zs.avail_out);
        } while (zs.avail_out == 0);
    };
    pump(header, Z_NO_FLUSH);
    const std::string chunk(1 << 20, '\0');
    for (std::uint64_t left = zeros; left > 0;) {
        const std::uint64_t n = std::min<std::uint64_t>(left, chunk.size());
        pump(chunk.substr(0, static_cast<std::size_t>(n)), Z_NO_FLUSH);
        left -= n;
    }
    pump(std::string(), Z_FINISH);
    deflateEnd(&zs);
    return out;
}

// A PNG holding only its signature and an IHDR chunk (what a decoder reads first).
std::string pngHeaderOnly(std::uint32_t w, std::uint32_t h, int bitDepth, int colourType)
{
    std::string ihdr = "IHDR" + bigEndian32(w) + bigEndian32(h) + static_cast<char>(bitDepth) + static_cast<char>(colourType) +
                       std::string(3, '\0');
    const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(ihdr.data()), static_cast<uInt>(ihdr.size()));
    return std::string("\x89PNG\r\n\x1a\n", 8) + bigEndian32(13) + ihdr + bigEndian32(static_cast<std::uint32_t>(crc));
}

std::string pngChunk(const std::string& type, const std::string& data)
{
    const std::string td = type + data;
    const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(td.data()), static_cast<uInt>(td.size()));
    return bigEndian32(static_cast<std::uint32_t>(data.size())) + td + bigEndian32(static_cast<std::uint32_t>(crc));
}

// A 3x2 8-bit grey PNG of the given pixels whose image data comes after an empty IDAT chunk and
// before another (what made stb_image 2.27 call memcpy with a null pointer: bench/fuzz/fuzz_image).
std::string pngWithEmptyDataChunks(const unsigned char (&px)[6])
{
    std::string raw;
    for (int y = 0; y < 2; ++y) {
        raw += '\0';   // filter: none
        raw.append(reinterpret_cast<const char*>(px) + y * 3, 3);
    }
    std::string z(compressBound(static_cast<uLong>(raw.size())), '\0');
    uLongf zn = static_cast<uLongf>(z.size());
    compress(reinterpret_cast<Bytef*>(z.data()), &zn, reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()));
    z.resize(zn);
    const std::string ihdr = bigEndian32(3) + bigEndian32(2) + std::string("\x08\x00\x00\x00\x00", 5);
    return std::string("\x89PNG\r\n\x1a\n", 8) + pngChunk("IHDR", ihdr) + pngChunk("IDAT", "") + pngChunk("IDAT", z) +
           pngChunk("IDAT", "") + pngChunk("IEND", "");
}

// A Radiance HDR file whose RLE scanline ends early (the CVE-2021-42715 pattern that makes
// stb_image 2.27's HDR reader loop forever).
std::string truncatedRadianceHdr()
{
    std::string s = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 +X 64\n";
    s += std::string("\x02\x02\x00\x40", 4);   // new-style RLE scanline of width 64
    s += std::string("\x80", 1);                // a run header, then the file ends
    while (s.size() < 155) s += '\0';
    return s;
}

long maxRssKb()
{
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    return u.ru_maxrss;
}

bool mentions(const std::string& err, const QString& what) { return QString::fromStdString(err).contains(what); }

}  // namespace

class TestHostileInput : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;

    QString path(const char* name) const { return tmp.path() + QLatin1Char('/') + QLatin1String(name); }
    QString write(const char* name, const std::string& bytes) const
    {
        writeFileAtomic(path(name).toStdString(), bytes);
        return path(name);
    }
    // Exit 2, and the error is one line (the last on stderr, after any progress lines) naming
    // `file` (and `place` when given).
    static void expectClean(const Run& r, const QString& file, const QString& place = {})
    {
        QVERIFY2(r.code == 2, qPrintable(QStringLiteral("exit %1, stderr: %2").arg(r.code).arg(QString::fromStdString(r.err))));
        const QStringList lines = QString::fromStdString(r.err).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY(!lines.isEmpty());
        const QString error = lines.back();
        QVERIFY2(error.startsWith(QStringLiteral("tinyscope ")), qPrintable(error));
        QVERIFY2(error.contains(file), qPrintable(error));
        if (!place.isEmpty()) QVERIFY2(error.contains(place), qPrintable(error));
    }

private Q_SLOTS:
    // Issue 45: what a message quotes of a user's text. Controls (C0, DEL, C1), bidirectional
    // overrides and malformed UTF-8 are escaped; readable text in any script is kept; long values
    // are cut with their length.
    void messagesQuoteUserTextEscapedAndCut()
    {
        QCOMPARE(escapedForMessage("a\nb\tc\\d"), std::string("a\\nb\\tc\\\\d"));
        QCOMPARE(escapedForMessage("\x1b[31mred\x07"), std::string("\\x1b[31mred\\x07"));
        QCOMPARE(escapedForMessage("jos\xc3\xa9/\xe6\x95\xb0\xe6\x8d\xae"), std::string("jos\xc3\xa9/\xe6\x95\xb0\xe6\x8d\xae"));
        QCOMPARE(escapedForMessage("x\xe2\x80\xaey"), std::string("x\\u202ey"));        // right-to-left override
        QCOMPARE(escapedForMessage("\xc2\x9b" "2J"), std::string("\\u009b2J"));              // C1 CSI
        QCOMPARE(escapedForMessage("\xff\xc0\xaf\xed\xa0\x80"), std::string("\\xff\\xc0\\xaf\\xed\\xa0\\x80"));   // invalid, overlong, surrogate
        QCOMPARE(escapedForMessage("\xe6\x95"), std::string("\\xe6\\x95"));             // truncated sequence
        const std::string big(10u << 20, 'a');
        QCOMPARE(escapedForMessage(big), std::string(80, 'a') + "... (10,485,760 bytes)");
        QCOMPARE(escapedForMessage(std::string(80, 'b')), std::string(80, 'b'));
    }

    // --- JSON: depth, size, numbers ----------------------------------------------------------

    void deeplyNestedJsonIsRefusedEverywhereItIsRead()
    {
        // 70,000 levels with a wrong-typed leaf: the message used to dump() it recursively (SIGSEGV).
        const std::string deep = deepJson(70000);
        const QString f = write("deep.json", deep);
        // A whole subnet config whose "wid" is the deep value (a wrong type, so its message is built).
        const Run minCost = test::runCli({QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--json")});
        QCOMPARE(minCost.code, 0);
        std::string config = Json::parse(minCost.out)["config"].dump();
        config.replace(config.find("\"wid\":0") + 6, 1, deep);
        const QString cfg = write("deep-config.json", config);
        const QString dir = path("accdata");
        QDir().mkpath(dir);
        writeFileAtomic((dir + QStringLiteral("/acc.dict")).toStdString(), "{\"" + deepJson(70000, "1") + "\": 50}");
        const QString dictDir = path("accdata2");
        QDir().mkpath(dictDir);
        writeFileAtomic((dictDir + QStringLiteral("/acc.dict")).toStdString(), deep);
        const QString nested = QStringLiteral("nested deeper than");
        const QList<QStringList> commands = {
            {QStringLiteral("cost"), cfg},
            {QStringLiteral("cost"), f},
            {QStringLiteral("encode"), cfg},
            {QStringLiteral("decode"), f},
            {QStringLiteral("space"), QStringLiteral("show"), f},
            {QStringLiteral("search"), QStringLiteral("--constraints"), f},
            {QStringLiteral("predict"), cfg},
            {QStringLiteral("inspect"), f},
            {QStringLiteral("zoo"), QStringLiteral("show"), QStringLiteral("--config"), cfg},
            {QStringLiteral("train-predictor"), QStringLiteral("--data"), dictDir, QStringLiteral("--out"), path("p.bin")},
        };
        for (const QStringList& c : commands) {
            const Run r = test::runCli(c);
            QVERIFY2(r.code == 2, qPrintable(c.join(QLatin1Char(' ')) + QStringLiteral(": exit %1: %2").arg(r.code).arg(QString::fromStdString(r.err))));
            QVERIFY2(mentions(r.err, nested), qPrintable(c.join(QLatin1Char(' ')) + QStringLiteral(": ") + QString::fromStdString(r.err)));
        }
        // A key of an acc.dict is parsed too.
        const Run key = test::runCli({QStringLiteral("train-predictor"), QStringLiteral("--data"), dir, QStringLiteral("--out"), path("p.bin")});
        expectClean(key, QStringLiteral("acc.dict"), nested);
        // The same limit applies to graph scales.
        const Run scales = test::runCli({QStringLiteral("inspect"), test::sharedDir() + QStringLiteral("/reference/tinyengine/49kb-int8-graph.json"),
                                QStringLiteral("--scales"), f});
        if (test::haveShared()) expectClean(scales, QStringLiteral("deep.json"), nested);
    }

    void jsonLimitsAreLocatedAndBounded()
    {
        // Depth: the message gives line and column of the bracket that crossed the limit.
        const std::string text = "{\n  \"a\": " + deepJson(100) + "\n}";
        const QString e = test::inputErrorOf([&] { parseJson(text, "doc.json"); });
        QVERIFY2(e.contains(QStringLiteral("doc.json: line 2, column 71: nested deeper than 64 levels")), qPrintable(e));
        // Containers: 100 MB of "{}" would take gigabytes; refused by size, and below the size by count.
        JsonLimits small;
        small.max_containers = 1000;
        std::string many = "[";
        for (int i = 0; i < 2000; ++i) many += "{},";
        many += "{}]";
        QVERIFY(test::inputErrorOf([&] { parseJson(many, "m.json", small); }).contains(QStringLiteral("more than 1000 objects and arrays")));
        JsonLimits tiny;
        tiny.max_bytes = 100;
        QVERIFY(test::inputErrorOf([&] { parseJson(many, "m.json", tiny); }).contains(QStringLiteral("a JSON file may have here")));
        // Numbers beyond double: a parse error with the place, not an exception of another kind.
        const QString big = test::inputErrorOf([&] { parseJson("{\"ks\": 1e400}", "n.json"); });
        QVERIFY2(big.startsWith(QStringLiteral("n.json: line 1, column")) && big.contains(QStringLiteral("1e400")), qPrintable(big));
        // Messages describe containers instead of dumping them.
        const Json arr = Json::parse(deepJson(40, "1"));
        const QString brief = test::inputErrorOf([&] { JsonPath(std::string("x.json"), arr).asInt(); });
        QVERIFY2(brief.contains(QStringLiteral("got an array of 1 value")), qPrintable(brief));
    }

    void emptyObjectFloodIsRefusedWithoutTakingTheMemory()
    {
        // A 70 MB graph file of empty objects (the campaign's 100 MB one took 3.4 GB).
        std::string flood = "[";
        flood.reserve(70u << 20);
        while (flood.size() < (70u << 20)) flood += "{},";
        flood += "{}]";
        const QString f = write("flood-graph.json", flood);
        flood.clear();
        flood.shrink_to_fit();
        const Run r = test::runCli({QStringLiteral("inspect"), f});
        expectClean(r, QStringLiteral("flood-graph.json"), QStringLiteral("this reader accepts"));
        // Just under the size limit, the container count stops it early.
        std::string under = "[";
        while (under.size() < (30u << 20)) under += "{},";
        under += "{}]";
        const QString g = write("under-graph.json", under);
        const Run u = test::runCli({QStringLiteral("inspect"), g});
        expectClean(u, QStringLiteral("under-graph.json"), QStringLiteral("objects and arrays"));
        QVERIFY2(maxRssKb() < 1500 * 1024, qPrintable(QStringLiteral("child max RSS %1 KB").arg(maxRssKb())));
    }

    void wrongTypesAndOddBytesInConfigFiles()
    {
        const QString yaml = write("scheme.yaml", "n_bias_update: \"\xff\xfe\"\nweight_update_ratio: [0.5]\n");
        const Run y = test::runCli({QStringLiteral("memory"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--scheme"), yaml});
        expectClean(y, QStringLiteral("scheme.yaml"));
        const QString big = write("big.json", "{\"millionMACs\": 1e400}");
        expectClean(test::runCli({QStringLiteral("search"), QStringLiteral("--constraints"), big}), QStringLiteral("big.json"), QStringLiteral("line 1"));
    }

    // --- design spaces -----------------------------------------------------------------------

    void designSpaceNumbersAreRangeChecked()
    {
        Json space = Json::parse(R"({"name": "big", "family": "mcunet", "n_classes": 2, "resolutions": [96],
            "ks_list": [3], "expand_ratio_list": [1073741824], "depth_list": [0, 1],
            "widths": [{"first_conv": 8, "block0": 8, "stages": [8], "feature_mix": 8}],
            "stage_strides": [2], "base_depth": [1], "se_stages": [false]})");
        const QString f = write("big-space.json", space.dump());
        const Run r = test::runCli({QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--space"), f});
        expectClean(r, QStringLiteral("big-space.json"), QStringLiteral("expand_ratio_list[0]: must be in 1..64"));
        space["expand_ratio_list"] = {3};
        space["resolutions"] = {1 << 30};
        const QString g = write("huge-res.json", space.dump());
        expectClean(test::runCli({QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--space"), g}), QStringLiteral("huge-res.json"),
                    QStringLiteral("resolutions[0]"));
        // Within every single range, the product still must fit 64-bit costs.
        space["resolutions"] = {4096};
        space["widths"][0] = {{"first_conv", 65536}, {"block0", 65536}, {"stages", {65536}}, {"feature_mix", 65536}};
        space["expand_ratio_list"] = {64};
        space["ks_list"] = {31};
        const QString h = write("wide.json", space.dump());
        expectClean(test::runCli({QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--space"), h}), QStringLiteral("wide.json"),
                    QStringLiteral("beyond what 64-bit costs hold"));
    }

    // --- training graphs ---------------------------------------------------------------------

    void malformedConvAttributesInAGraph_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("empty strides") << "strides" << "[]" << "attrs.strides: expected 2 integers";
        QTest::newRow("zero strides") << "strides" << "[0, 0]" << "attrs.strides: expected integers in 1..4096";
        QTest::newRow("negative padding") << "padding" << "[-1, -1, -1, -1]" << "attrs.padding: expected integers in 0..4096";
        QTest::newRow("groups string") << "groups" << "\"x\"" << "attrs.groups: expected an integer";
        QTest::newRow("groups zero") << "groups" << "0" << "attrs.groups: expected an integer in 1..";
    }

    void malformedConvAttributesInAGraph()
    {
        REQUIRE_SHARED();
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(QString, expected);
        Json g = readJsonFile(test::sharedPath("reference/tinyengine/example/tiny-graph.json"));
        bool changed = false;
        for (Json& op : g)
            if (op["type"] == "nn.mcuconv2d" && !changed) {
                op["attrs"][key.toStdString()] = Json::parse(value.toStdString());
                changed = true;
            }
        QVERIFY(changed);
        const QString f = write("bad-graph.json", g.dump());
        expectClean(test::runCli({QStringLiteral("inspect"), f}), QStringLiteral("bad-graph.json: op 0"), expected);
    }

    void graphOpArityIsChecked()
    {
        REQUIRE_SHARED();
        Json g = readJsonFile(test::sharedPath("reference/tinyengine/49kb-int8-graph.json"));
        for (Json& op : g)
            if (op["type"] == "nn.conv2d_transpose") {
                op["inputs"].erase(1);
                break;
            }
        const QString f = write("arity-graph.json", g.dump());
        expectClean(test::runCli({QStringLiteral("inspect"), f}), QStringLiteral("arity-graph.json"), QStringLiteral("takes 2 inputs, got 1"));
    }

    // --- images and datasets -----------------------------------------------------------------

    void onlyPngAndJpegAreDecoded()
    {
        const std::string hdr = truncatedRadianceHdr();
        const QString e = test::inputErrorOf([&] { decodeImage(hdr, "photo.png"); });
        QCOMPARE(e, QStringLiteral("photo.png: cannot decode image: not a PNG or JPEG file"));
        const QString f = write("photo.png", hdr);
        expectClean(test::runCli({QStringLiteral("classify"), f}), QStringLiteral("photo.png"), QStringLiteral("not a PNG or JPEG file"));
        // Dimensions are bounded from the header, before anything is decoded.
        const QString huge = test::inputErrorOf([&] { decodeImage(pngHeaderOnly(8192, 8191, 16, 0), "big.png"); });
        QVERIFY2(huge.contains(QStringLiteral("8192x8191 is larger than")), qPrintable(huge));
    }

    void emptyImageDataChunksAreSkipped()
    {
        const unsigned char px[6] = {0, 17, 255, 128, 64, 9};
        const Image img = decodeImage(pngWithEmptyDataChunks(px), "empty-idat.png");
        QCOMPARE(img.width, 3);
        QCOMPARE(img.height, 2);
        QCOMPARE(img.channels, 1);
        for (int i = 0; i < 6; ++i) QCOMPARE(int(img.at(i % 3, i / 3, 0)), int(px[i]));
    }

    void anImageFolderWithAHostileFileSkipsItWithTheReason()
    {
        // A folder dataset: one class with a real PNG... and an HDR named .png; eval must finish.
        const QString root = path("folder");
        for (const char* c : {"a", "b"}) QDir().mkpath(root + QLatin1Char('/') + QLatin1String(c));
        writeFileAtomic((root + QStringLiteral("/a/x.png")).toStdString(), truncatedRadianceHdr());
        ImageFolderDataset ds(root.toStdString() + "");
        QCOMPARE(ds.size(), std::size_t(1));
        QVERIFY(test::inputErrorOf([&] { ds.image(0); }).contains(QStringLiteral("not a PNG or JPEG file")));
    }

    void idxGzipBombsStopAtTheDeclaredSize()
    {
        // Header: 10 images of 28x28, then 200 MB of zeros (a few hundred KB compressed).
        const std::string header = bigEndian32(0x803) + bigEndian32(10) + bigEndian32(28) + bigEndian32(28);
        write("bomb-images-idx3-ubyte.gz", gzipWithZeros(header, 200u << 20));
        write("bomb-labels-idx1-ubyte", bigEndian32(0x801) + bigEndian32(10) + std::string(10, '\1'));
        const QString e = test::inputErrorOf([&] {
            IdxDataset(path("bomb-images-idx3-ubyte.gz").toStdString(), path("bomb-labels-idx1-ubyte").toStdString());
        });
        QVERIFY2(e.contains(QStringLiteral("decompresses to more than the 7.7 KB its IDX header declares")), qPrintable(e));
        // A header declaring more than a dataset may hold is refused before decompressing it.
        const std::string huge = bigEndian32(0x803) + bigEndian32(0xFFFFFFFFu) + bigEndian32(4096) + bigEndian32(4096);
        write("huge-images-idx3-ubyte.gz", gzipWithZeros(huge, 1000));
        const QString h = test::inputErrorOf([&] {
            IdxDataset(path("huge-images-idx3-ubyte.gz").toStdString(), path("bomb-labels-idx1-ubyte").toStdString());
        });
        QVERIFY2(h.contains(QStringLiteral("the IDX header declares")), qPrintable(h));
    }

    void readersKnowTheSizeTheyExpect()
    {
        // /dev/zero never ends: refused as a device, at once.
        const Run minCost = test::runCli({QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--json")});
        QCOMPARE(minCost.code, 0);
        const QString cfg = write("min.json", Json::parse(minCost.out)["config"].dump());
        const Run z = test::runCli({QStringLiteral("forward"), QStringLiteral("--supernet"), path("none.pth"), QStringLiteral("--config"), cfg,
                           QStringLiteral("--input"), QStringLiteral("/dev/zero")});
        expectClean(z, QStringLiteral("/dev/zero"), QStringLiteral("not a regular file"));
        // A file larger than the tensor is refused by its size, not read.
        const QString big = path("big.bin");
        {
            QFile f(big);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QVERIFY(f.resize(qint64(1) << 30));   // sparse: takes no disk
        }
        const Run b = test::runCli({QStringLiteral("forward"), QStringLiteral("--supernet"), path("none.pth"), QStringLiteral("--config"), cfg,
                           QStringLiteral("--input"), big});
        expectClean(b, QStringLiteral("big.bin"), QStringLiteral("this reader accepts"));
        QVERIFY(test::inputErrorOf([&] { readFileBytes(tmp.path().toStdString()); }).contains(QStringLiteral("is a folder")));
    }

    // --- counts on the command line ----------------------------------------------------------

    void countsOutsideTheirRangeAreRefused_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        const QString eval = QStringLiteral("eval");
        QTest::newRow("calib-batch 0") << QStringList{eval, QStringLiteral("--calib-batch"), QStringLiteral("0")}
                                       << "option --calib-batch: expected an integer in 1..65536, got 0";
        QTest::newRow("calib-batch -3") << QStringList{eval, QStringLiteral("--calib-batch"), QStringLiteral("-3")} << "--calib-batch";
        QTest::newRow("batch -1") << QStringList{eval, QStringLiteral("--batch"), QStringLiteral("-1")} << "--batch";
        QTest::newRow("images 0") << QStringList{eval, QStringLiteral("--images"), QStringLiteral("0")} << "--images";
        QTest::newRow("split 100000") << QStringList{eval, QStringLiteral("--split"), QStringLiteral("100000")}
                                      << "option --split: expected an integer in 0..1";
        QTest::newRow("threads 0") << QStringList{eval, QStringLiteral("--threads"), QStringLiteral("0")} << "--threads";
        QTest::newRow("print-every 0") << QStringList{QStringLiteral("train-supernet"), QStringLiteral("--out"), path("run"),
                                                      QStringLiteral("--print-every"), QStringLiteral("0")}
                                       << "option --print-every: expected an integer in 1..";
        QTest::newRow("nan lr") << QStringList{QStringLiteral("train-predictor"), QStringLiteral("--data"), QStringLiteral("x"), QStringLiteral("--out"),
                                               QStringLiteral("y"), QStringLiteral("--lr"), QStringLiteral("nan")}
                                << "option --lr: expected a number";
        QTest::newRow("random 0") << QStringList{QStringLiteral("cost"), QStringLiteral("--random"), QStringLiteral("0")} << "--random";
    }

    void countsOutsideTheirRangeAreRefused()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        const Run r = test::runCli(args);
        QVERIFY2(r.code == 2, qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": exit %1: %2").arg(r.code).arg(QString::fromStdString(r.err))));
        QVERIFY2(mentions(r.err, expected), r.err.c_str());
    }

    // --- accuracy datasets -------------------------------------------------------------------

    void degenerateAccuracyDataIsRefusedWithTheReason()
    {
        const Run minCost = test::runCli({QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--json")});
        QCOMPARE(minCost.code, 0);
        const Json cfg = Json::parse(minCost.out)["config"];
        const Run maxCost = test::runCli({QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--json")});
        const Json other = Json::parse(maxCost.out)["config"];
        auto table = [&](const char* name, int n, bool sameSubnet, bool sameAccuracy) {
            Json t = Json::array();
            for (int i = 0; i < n; ++i) t.push_back({(sameSubnet || i % 2) ? cfg : other, sameAccuracy ? 80.0 : 70.0 + i % 7});
            const QString dir = path(name);
            QDir().mkpath(dir + QStringLiteral("/src"));
            writeFileAtomic((dir + QStringLiteral("/src/x_acc_table.json")).toStdString(), t.dump());
            return dir;
        };
        auto train = [&](const QString& dir) {
            return test::runCli({QStringLiteral("train-predictor"), QStringLiteral("--data"), dir, QStringLiteral("--out"), path("p.bin"),
                        QStringLiteral("--epochs"), QStringLiteral("1")});
        };
        expectClean(train(table("two", 2, false, false)), QStringLiteral("two"), QStringLiteral("a predictor needs at least 10"));
        expectClean(train(table("same", 500, true, true)), QStringLiteral("same"), QStringLiteral("the same subnet"));
        expectClean(train(table("flat", 500, false, true)), QStringLiteral("flat"), QStringLiteral("the same accuracy"));
        QVERIFY(!QFileInfo::exists(path("p.bin")));
    }

    // --- texts a message prints --------------------------------------------------------------

    // A board's name is printed in every fit line and message: printable ASCII, at most 64
    // characters. Its title (a line for people) has no control characters and at most 200 bytes;
    // its core is a short printable name. Values quoted in a refusal are escaped and cut, so an
    // escape sequence cannot reach the terminal and a 10 MB name does not flood it.
    void boardTextsAreValidatedAndMessagesEscaped()
    {
        const Json board = presetBoard("stm32f746").toJson();
        auto errorFor = [&](const char* key, const std::string& value) {
            Json b = board;
            b[key] = value;
            return test::inputErrorOf([&] { BoardProfile::fromJson(b, "b.json"); });
        };
        auto clean = [](const QString& e) { return !e.isEmpty() && e.size() < 400 && !e.contains(QChar(0x1b)) && !e.contains(QLatin1Char('\n')); };
        QVERIFY(errorFor("name", std::string(64, 'a')).isEmpty());
        QVERIFY(errorFor("name", "my board (rev. 2)").isEmpty());
        const QString long65 = errorFor("name", std::string(65, 'a'));
        QVERIFY2(long65.startsWith(QStringLiteral("b.json: name: ")) && long65.contains(QStringLiteral("at most 64")), qPrintable(long65));
        for (const std::string& bad : {std::string("red\x1b[31m"), std::string("two\nlines"), std::string("tab\there"), std::string("caf\xc3\xa9"),
                                       std::string(10u << 20, 'n')}) {
            const QString e = errorFor("name", bad);
            QVERIFY2(clean(e) && e.startsWith(QStringLiteral("b.json: name: ")), qPrintable(e.left(400)));
        }
        QVERIFY(errorFor("title", "STM32F746 \xe2\x80\x94 Discovery kit").isEmpty());
        for (const std::string& bad : {std::string("a\nb"), std::string("\x1b[2J"), std::string("c1 \xc2\x9b" "2J"), std::string(201, 't')}) {
            const QString e = errorFor("title", bad);
            QVERIFY2(clean(e) && e.startsWith(QStringLiteral("b.json: title: ")), qPrintable(e));
        }
        for (const char* key : {"core", "fpu"}) {
            const QString e = errorFor(key, "cortex-m7\x1b[2J");
            QVERIFY2(clean(e) && e.contains(QStringLiteral("\\x1b[2J")), qPrintable(e));
        }
        const QString unknown = test::inputErrorOf([] { presetBoard("\x1b[2Jstm32"); });
        QVERIFY2(clean(unknown) && unknown.contains(QStringLiteral("unknown board '\\x1b[2Jstm32'")), qPrintable(unknown));

        // Through the binary: `deploy --board` reads the board before any work.
        auto deployWithBoard = [&](const QString& b) {
            return test::runCli({QStringLiteral("deploy"), QStringLiteral("--format"), QStringLiteral("tflite"), QStringLiteral("--out"), path("x.tflite"),
                        QStringLiteral("--board"), b});
        };
        Json evil = board;
        evil["name"] = "\x1b]0;pwned\x07\x1b[2J";
        const Run e = deployWithBoard(write("evil-board.json", evil.dump()));
        expectClean(e, QStringLiteral("evil-board.json"), QStringLiteral("name"));
        QVERIFY2(e.err.find('\x1b') == std::string::npos && e.err.find('\x07') == std::string::npos, e.err.c_str());
        evil["name"] = std::string(10u << 20, 'n');
        const Run big = deployWithBoard(write("huge-name-board.json", evil.dump()));
        expectClean(big, QStringLiteral("huge-name-board.json"), QStringLiteral("name"));
        QVERIFY2(big.err.size() < 1000, qPrintable(QString::fromStdString(big.err.substr(0, 300))));
        const Run preset = deployWithBoard(QString::fromLatin1("\x1b[2Jstm32"));
        QCOMPARE(preset.code, 2);
        QVERIFY2(preset.err.find('\x1b') == std::string::npos && test::lineCount(preset.err) == 1, preset.err.c_str());
        QVERIFY(!QFileInfo::exists(path("x.tflite")));
    }
};

QTEST_GUILESS_MAIN(TestHostileInput)
#include "test_hostile_input.moc"
