// Dataset readers on small generated image folders and IDX files, the lab's split, PIL-exact
// resizing, and unreadable images reported and skipped.
#include "TestSupport.h"

#include "Error.h"
#include "data/BatchLoader.h"
#include "data/ImageDataset.h"
#include "io/AtomicFile.h"
#include "space/PyRandom.h"

#include <QImage>
#include <QProcess>
#include <QTemporaryDir>

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

using namespace tinyscope;
using test::errorOf;

namespace {
std::string be32(std::uint32_t v)
{
    return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

std::string gzip(const std::string& raw)
{
    z_stream zs{};
    deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    std::string out(compressBound(static_cast<uLong>(raw.size())) + 64, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
    zs.avail_in = static_cast<uInt>(raw.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

}  // namespace

class TestDatasets : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;

    std::string path(const char* name) const { return (tmp.path() + QLatin1Char('/') + QLatin1String(name)).toStdString(); }

private Q_SLOTS:
    void idxFilesGzipOrNot()
    {
        // 5 images of 3x2 pixels; pixel value = 10*image + position.
        std::string images = be32(0x803) + be32(5) + be32(2) + be32(3), labels = be32(0x801) + be32(5);
        for (int i = 0; i < 5; ++i) {
            for (int p = 0; p < 6; ++p) images += static_cast<char>(10 * i + p);
            labels += static_cast<char>(i % 3);
        }
        writeFileAtomic(path("img-idx3-ubyte"), images);
        writeFileAtomic(path("lab-idx1-ubyte.gz"), gzip(labels));
        IdxDataset d(path("img-idx3-ubyte"), path("lab-idx1-ubyte.gz"));
        QCOMPARE(d.size(), std::size_t(5));
        QCOMPARE(d.width(), 3);
        QCOMPARE(d.height(), 2);
        QCOMPARE(d.label(4), 1);
        Image im = d.image(3);
        QCOMPARE(im.channels, 1);
        QCOMPARE(int(im.at(2, 1, 0)), 35);
        QCOMPARE(d.classNames().size(), std::size_t(3));
        // A folder holding t10k-* files opens as IDX.
        ::mkdir(path("mnistlike").c_str(), 0755);
        writeFileAtomic(path("mnistlike/t10k-images-idx3-ubyte.gz"), gzip(images));
        writeFileAtomic(path("mnistlike/t10k-labels-idx1-ubyte.gz"), gzip(labels));
        QCOMPARE(openDataset(path("mnistlike"))->size(), std::size_t(5));
        // Errors name the file.
        writeFileAtomic(path("bad-idx3"), be32(0x801) + be32(1));
        QVERIFY(errorOf([&] { IdxDataset(path("bad-idx3"), path("lab-idx1-ubyte.gz")); }).find("bad-idx3: not an IDX image file") != std::string::npos);
        writeFileAtomic(path("short-idx3"), images.substr(0, 30));
        QVERIFY(errorOf([&] { IdxDataset(path("short-idx3"), path("lab-idx1-ubyte.gz")); }).find("short-idx3: truncated") != std::string::npos);
        writeFileAtomic(path("corrupt.gz"), std::string("\x1f\x8b\x08\x00garbage", 11));
        QVERIFY(errorOf([&] { IdxDataset(path("corrupt.gz"), path("lab-idx1-ubyte.gz")); }).find("corrupt gzip") != std::string::npos);
    }

    void imageFolderSortedLikeTorchvision()
    {
        const QString root = tmp.path() + QStringLiteral("/folder");
        for (const char* cls : {"person", "no_person"}) {
            QDir().mkpath(root + QLatin1Char('/') + QLatin1String(cls));
            for (int i = 0; i < 3; ++i) {
                QImage img(20 + i, 10, QImage::Format_RGB888);
                img.fill(QColor(cls[0] == 'p' ? 200 : 30, 40 * i, 90));
                img.save(root + QStringLiteral("/%1/img%2.%3").arg(QLatin1String(cls)).arg(i).arg(i == 1 ? QStringLiteral("jpg") : QStringLiteral("png")));
            }
        }
        writeFileAtomic((root + QStringLiteral("/person/broken.png")).toStdString(), "this is not a png");
        writeFileAtomic((root + QStringLiteral("/person/notes.txt")).toStdString(), "ignored: not an image extension");
        ImageFolderDataset d(root.toStdString());
        QCOMPARE(d.classNames(), (std::vector<std::string>{"no_person", "person"}));
        QCOMPARE(d.size(), std::size_t(7));   // 3 + 3 + broken.png
        QCOMPARE(d.label(0), 0);
        QCOMPARE(d.label(6), 1);
        QVERIFY(d.itemName(3).find("person/broken.png") != std::string::npos);   // sorted: broken < img0
        Image im = d.image(0);
        QCOMPARE(im.width, 20);
        QCOMPARE(im.channels, 3);
        QCOMPARE(int(im.at(0, 0, 0)), 30);
        // The unreadable file is skipped and reported with its path; the batch holds the rest.
        std::vector<std::size_t> all = splitIndices(d.size(), -1);
        Batch b = loadBatch(d, all, 8);
        QCOMPARE(b.size(), std::size_t(6));
        QCOMPARE(b.skipped.size(), std::size_t(1));
        QVERIFY(b.skipped[0].first.find("broken.png") != std::string::npos);
        QVERIFY(b.skipped[0].second.find("cannot decode image") != std::string::npos);
        QCOMPARE(b.pixels.size(), std::size_t(6 * 3 * 8 * 8));
        // Normalised with mean = std = 0.5: a uniform 30 red channel becomes 30/255*2-1.
        QVERIFY(std::fabs(b.pixels[0] - (30.0f / 255.0f - 0.5f) / 0.5f) < 1e-6f);
        QVERIFY(errorOf([&] { ImageFolderDataset((tmp.path() + QStringLiteral("/nothing")).toStdString()); }).find("not a folder") != std::string::npos);
    }

    // Issue 45: "b/self -> ." made 140 images count as 2,940 (the walk went round the cycle until
    // the path was too long). Each folder is read once: a link back to a folder already read is
    // refused naming both; a link to a folder outside the tree is followed once.
    void aFolderReachedTwiceIsRefused()
    {
        const QString root = tmp.path() + QStringLiteral("/cycle");
        const QString outside = tmp.path() + QStringLiteral("/outside");
        for (const QString& d : {root + QStringLiteral("/a"), root + QStringLiteral("/b"), outside}) QDir().mkpath(d);
        QImage img(8, 8, QImage::Format_RGB888);
        img.fill(QColor(10, 20, 30));
        for (int i = 0; i < 4; ++i) {
            img.save(root + QStringLiteral("/a/%1.png").arg(i));
            img.save(root + QStringLiteral("/b/%1.png").arg(i));
        }
        img.save(outside + QStringLiteral("/extra.png"));
        const std::string r = root.toStdString();
        QVERIFY(::symlink("../../outside", (r + "/b/more").c_str()) == 0);   // followed: one more image
        QCOMPARE(ImageFolderDataset(r).size(), std::size_t(9));

        QVERIFY(::symlink(".", (r + "/b/self").c_str()) == 0);
        std::string msg = errorOf([&] { ImageFolderDataset d(r); });
        QVERIFY2(msg.find(r + "/b/self: the folder " + r + "/b again (a symbolic link cycle") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("counted more than once") != std::string::npos, msg.c_str());
        ::unlink((r + "/b/self").c_str());

        QVERIFY(::symlink("..", (r + "/a/up").c_str()) == 0);   // back to the root: its classes again
        msg = errorOf([&] { ImageFolderDataset d(r); });
        QVERIFY2(msg.find(r + "/a/up: the folder " + r + " again") != std::string::npos, msg.c_str());
        ::unlink((r + "/a/up").c_str());

        QVERIFY(::symlink("../a", (r + "/b/twin").c_str()) == 0);   // class a's images under class b too
        msg = errorOf([&] { ImageFolderDataset d(r); });
        QVERIFY2(msg.find(r + "/b/twin: the folder " + r + "/a again") != std::string::npos, msg.c_str());
        ::unlink((r + "/b/twin").c_str());
        QCOMPARE(ImageFolderDataset(r).size(), std::size_t(9));
    }

    // The data's fingerprint (a fine-tuning checkpoint's): contents and labels, not paths.
    void contentFingerprintFollowsContentsNotPaths()
    {
        const QString one = tmp.path() + QStringLiteral("/print1"), two = tmp.path() + QStringLiteral("/print2");
        for (const QString& root : {one, two})
            for (int c = 0; c < 2; ++c) {
                QDir().mkpath(root + QStringLiteral("/c%1").arg(c));
                for (int i = 0; i < 3; ++i) {
                    QImage img(6, 6, QImage::Format_RGB888);
                    img.fill(QColor(40 * c, 30 * i, 7));
                    img.save(root + QStringLiteral("/c%1/%2.png").arg(c).arg(i));
                }
            }
        auto print = [](const QString& root, const std::vector<std::size_t>& items) {
            return contentFingerprint(ImageFolderDataset(root.toStdString()), items);
        };
        const std::vector<std::size_t> all = splitIndices(6, -1);
        QCOMPARE(print(one, all), print(two, all));   // a copy elsewhere is the same data
        QVERIFY(print(one, all) != print(one, {0, 1, 2}));
        QVERIFY(print(one, {0, 1}) != print(one, {1, 0}));
        // An edited image, and an image moved to the other class, are other data.
        QImage edited(6, 6, QImage::Format_RGB888);
        edited.fill(QColor(1, 2, 3));
        edited.save(two + QStringLiteral("/c0/1.png"));
        const std::uint64_t before = print(one, all);
        QVERIFY(print(two, all) != before);
        QVERIFY(QFile::remove(two + QStringLiteral("/c0/1.png")));
        QVERIFY(QFile::copy(one + QStringLiteral("/c0/1.png"), two + QStringLiteral("/c0/1.png")));
        QCOMPARE(print(two, all), before);
        QVERIFY(QFile::rename(two + QStringLiteral("/c0/2.png"), two + QStringLiteral("/c1/9.png")));
        QVERIFY(print(two, all) != before);
    }

    void greyImagesBecomeThreeChannels()
    {
        Image g;
        g.width = g.height = 4;
        g.channels = 1;
        g.pixels.assign(16, 255);
        std::vector<float> out(3 * 4 * 4);
        imageToTensor(g, 4, out.data());
        for (float v : out) QCOMPARE(v, 1.0f);
    }

    void labSplitTakesEvenOrOddItems()
    {
        QCOMPARE(splitIndices(7, 0), (std::vector<std::size_t>{0, 2, 4, 6}));
        QCOMPARE(splitIndices(7, 1), (std::vector<std::size_t>{1, 3, 5}));
        QCOMPARE(splitIndices(3, -1), (std::vector<std::size_t>{0, 1, 2}));
    }

    void resizeIsBitExactWithPil()
    {
        const QString python = QFileInfo::exists(QStringLiteral("/usr/bin/python3")) ? QStringLiteral("/usr/bin/python3") : QStringLiteral("python3");
        Image img;
        img.width = 37;
        img.height = 23;
        img.channels = 3;
        PyRandom rng(3);
        for (int i = 0; i < 37 * 23 * 3; ++i) img.pixels.push_back(static_cast<std::uint8_t>(rng.randbelow(256)));
        writeFileAtomic(path("rgb.raw"), std::string(img.pixels.begin(), img.pixels.end()));
        for (auto [w, h] : {std::pair<int, int>{16, 16}, {50, 50}, {28, 9}, {37, 40}}) {
            QProcess py;
            py.start(python, {QStringLiteral("-c"), QStringLiteral(
                "import sys\n"
                "try:\n from PIL import Image\nexcept ImportError:\n print('NO_PIL'); sys.exit(0)\n"
                "im = Image.frombytes('RGB', (37, 23), open(sys.argv[1], 'rb').read())\n"
                "sys.stdout.write(im.resize((int(sys.argv[2]), int(sys.argv[3])), Image.BILINEAR).tobytes().hex())"),
                QString::fromStdString(path("rgb.raw")), QString::number(w), QString::number(h)});
            QVERIFY(py.waitForFinished(60000));
            const QByteArray out = py.readAllStandardOutput();
            if (out == "NO_PIL\n") QSKIP("python3-pil is not installed: PIL comparison skipped");
            const QByteArray expected = QByteArray::fromHex(out);
            Image r = resizeBilinear(img, w, h);
            QCOMPARE(static_cast<int>(r.pixels.size()), expected.size());
            int diff = 0;
            for (std::size_t i = 0; i < r.pixels.size(); ++i) diff += r.pixels[i] != static_cast<std::uint8_t>(expected[static_cast<int>(i)]);
            QVERIFY2(diff == 0, qPrintable(QStringLiteral("%1x%2: %3 pixels differ from PIL").arg(w).arg(h).arg(diff)));
        }
    }

    void fashionMnistParts()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        QCOMPARE(openDataset("fashion-mnist:test")->size(), std::size_t(10000));
        auto hold = openDataset("fashion-mnist:holdout");
        QCOMPARE(hold->size(), std::size_t(5000));
        QCOMPARE(openDataset("fashion-mnist:fit")->size(), std::size_t(55000));
        QCOMPARE(openDataset("fashion-mnist:test")->label(0), 9);   // the first test image is an ankle boot
        QCOMPARE(hold->classNames().at(9), std::string("Ankle boot"));
        QVERIFY(errorOf([] { openDataset("fashion-mnist:valid"); }).find("unknown part 'valid'") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestDatasets)
#include "test_datasets.moc"
