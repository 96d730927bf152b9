// The fine-tuning augmentation (core/data/Augment.h, issue 20): timm's random-resized crop boxes
// (checked against CPython running the same get_params), PIL's ImageEnhance arithmetic on
// hand-computed pixels, flips, and the per-(seed, epoch, item) determinism of the loadBatch hook.
#include "TestSupport.h"

#include "data/Augment.h"
#include "space/PyRandom.h"

#include <QStandardPaths>

#include <algorithm>
#include <set>
#include <sstream>
#include <thread>

using namespace tinyscope;
using test::inputErrorOf;

namespace {

// A w×h image of `channels` channels with pixels from PyRandom(seed).
Image noise(int w, int h, int channels, std::uint64_t seed)
{
    Image img;
    img.width = w;
    img.height = h;
    img.channels = channels;
    img.pixels.resize(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * static_cast<std::size_t>(channels));
    PyRandom rng(seed);
    for (auto& p : img.pixels) p = static_cast<std::uint8_t>(rng.getrandbits(8));
    return img;
}

Image rgb(int w, int h, const std::vector<int>& values)
{
    Image img;
    img.width = w;
    img.height = h;
    img.channels = 3;
    for (int v : values) img.pixels.push_back(static_cast<std::uint8_t>(v));
    return img;
}

std::vector<int> values(const Image& img) { return std::vector<int>(img.pixels.begin(), img.pixels.end()); }

// The grey image replicated to three channels, as imageToTensor does it.
Image replicated(const Image& grey)
{
    Image out = grey;
    out.channels = 3;
    out.pixels.clear();
    for (std::uint8_t v : grey.pixels) out.pixels.insert(out.pixels.end(), 3, v);
    return out;
}

}  // namespace

class TestAugment : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cropBoxesStayInsideAndCoverTheScaleRange()
    {
        for (double scaleMin : {0.08, 0.5}) {
            RandomResizedCrop crop;
            crop.scale_min = scaleMin;
            for (auto [w, h] : {std::pair{28, 28}, std::pair{640, 480}, std::pair{37, 90}}) {
                const double area = static_cast<double>(w) * h;
                double lowest = 1, highest = 0;
                for (std::uint64_t seed = 0; seed < 1500; ++seed) {
                    PyRandom rng(seed);
                    const CropBox b = crop.box(w, h, rng);
                    QVERIFY(b.left >= 0 && b.top >= 0 && b.width >= 1 && b.height >= 1);
                    QVERIFY(b.left + b.width <= w && b.top + b.height <= h);
                    const double fraction = b.width * b.height / area;
                    QVERIFY(fraction <= 1.0);
                    // The drawn area is at least scale_min; each side is that draw's side rounded
                    // to the nearest pixel, so the box may be short of it by half a pixel a side.
                    QVERIFY2((b.width + 0.5) * (b.height + 0.5) >= scaleMin * area,
                             qPrintable(QStringLiteral("%1x%2 seed %3: %4x%5").arg(w).arg(h).arg(seed).arg(b.width).arg(b.height)));
                    lowest = std::min(lowest, fraction);
                    highest = std::max(highest, fraction);
                }
                // The draws reach both ends of the range; the top end is the largest box within the
                // ratio range (37×90 holds at most 37×49).
                const double ratio = static_cast<double>(w) / h;
                const double largest = ratio < 0.75 ? ratio / 0.75 : 1.0;
                QVERIFY2(lowest < scaleMin + 0.05, qPrintable(QString::number(lowest)));
                QVERIFY2(highest > 0.9 * largest, qPrintable(QString::number(highest)));
            }
        }
    }

    void cropBoxesAreTimmsForTheSameRandomState()
    {
        // timm's RandomResizedCropAndInterpolation.get_params written out in Python (its `random`
        // calls, round() and the central fallback) and run by CPython for each seed.
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (python.isEmpty()) QSKIP("python3 not installed");
        struct Case {
            int w, h;
            double smin, smax;
        };
        const std::vector<Case> cases = {{28, 28, 0.08, 1.0}, {640, 480, 0.08, 1.0}, {37, 200, 0.08, 1.0},
                                         {28, 28, 1.0, 1.0},  {1000, 10, 0.08, 1.0}, {3, 2, 0.08, 1.0}};
        const int seeds = 200;
        QString script = QStringLiteral(
            "import math, random, sys\n"
            "def box(w, h, scale, ratio=(3/4, 4/3)):\n"
            "    area = w * h\n"
            "    for _ in range(10):\n"
            "        target = random.uniform(*scale) * area\n"
            "        aspect = math.exp(random.uniform(math.log(ratio[0]), math.log(ratio[1])))\n"
            "        cw = int(round(math.sqrt(target * aspect)))\n"
            "        ch = int(round(math.sqrt(target / aspect)))\n"
            "        if 0 < cw <= w and 0 < ch <= h:\n"
            "            i = random.randint(0, h - ch)\n"
            "            j = random.randint(0, w - cw)\n"
            "            return j, i, cw, ch\n"
            "    r = w / h\n"
            "    if r < min(ratio):\n"
            "        cw, ch = w, int(round(w / min(ratio)))\n"
            "    elif r > max(ratio):\n"
            "        cw, ch = int(round(h * max(ratio))), h\n"
            "    else:\n"
            "        cw, ch = w, h\n"
            "    return (w - cw) // 2, (h - ch) // 2, cw, ch\n"
            "for line in sys.stdin:\n"
            "    w, h, smin, smax, n = line.split()\n"
            "    for s in range(int(n)):\n"
            "        random.seed(s)\n"
            "        print(*box(int(w), int(h), (float(smin), float(smax))))\n");
        QProcess p;
        p.start(python, {QStringLiteral("-c"), script});
        QVERIFY(p.waitForStarted());
        for (const Case& c : cases)
            p.write(QStringLiteral("%1 %2 %3 %4 %5\n").arg(c.w).arg(c.h).arg(c.smin, 0, 'g', 17).arg(c.smax, 0, 'g', 17).arg(seeds).toUtf8());
        p.closeWriteChannel();
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        std::istringstream out(p.readAllStandardOutput().toStdString());
        int fallbacks = 0, fullHeight = 0;
        for (const Case& c : cases) {
            RandomResizedCrop crop;
            crop.scale_min = c.smin;
            crop.scale_max = c.smax;
            for (int s = 0; s < seeds; ++s) {
                CropBox want;
                QVERIFY(out >> want.left >> want.top >> want.width >> want.height);
                PyRandom rng(static_cast<std::uint64_t>(s));
                const CropBox got = crop.box(c.w, c.h, rng);
                QVERIFY2(got == want, qPrintable(QStringLiteral("%1x%2 scale %3 seed %4: got %5x%6+%7+%8, CPython %9x%10+%11+%12")
                                                     .arg(c.w).arg(c.h).arg(c.smin).arg(s)
                                                     .arg(got.width).arg(got.height).arg(got.left).arg(got.top)
                                                     .arg(want.width).arg(want.height).arg(want.left).arg(want.top)));
                if (c.w == 1000) ++fallbacks;
                if (want.height == c.h && c.w != 1000) ++fullHeight;
            }
        }
        // The cases exercise the fallback and boxes of full height (a randint over one value).
        QCOMPARE(fallbacks, seeds);
        QVERIFY(fullHeight > 0);
    }

    void fallbackIsTheCentralCropClampedToTheRatio()
    {
        // No box of at least 8% of a 1000×10 image (800 px) with a ratio within [3/4, 4/3] is at
        // most 10 px high: the fallback is the full height, width round(10 · 4/3) = 13, centred:
        // left (1000 − 13) // 2 = 493.
        RandomResizedCrop crop;
        PyRandom rng(5);
        QCOMPARE(crop.box(1000, 10, rng), (CropBox{493, 0, 13, 10}));
        QCOMPARE(crop.box(10, 1000, rng), (CropBox{0, 493, 10, 13}));
        // Python's round() goes half to even: with ratios up to 1.5 a 3 px high strip falls back to
        // width round(4.5) = 4, not 5.
        crop.ratio_max = 1.5;
        QCOMPARE(crop.box(1000, 3, rng), (CropBox{498, 0, 4, 3}));
        crop.ratio_max = 4.0 / 3.0;
        // A square image below a narrowed range: a box of the whole area at ratio 1.2 is 33 px wide,
        // never fits; the fallback keeps the width, height round(30 / 1.2) = 25, top (30 − 25) // 2.
        crop.scale_min = crop.scale_max = 1.0;
        crop.ratio_min = crop.ratio_max = 1.2;
        QCOMPARE(crop.box(30, 30, rng), (CropBox{0, 2, 30, 25}));
    }

    void cropCopiesTheBox()
    {
        const Image img = rgb(3, 2, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18});
        const Image c = cropImage(img, CropBox{1, 1, 2, 1});
        QCOMPARE(c.width, 2);
        QCOMPARE(c.height, 1);
        QCOMPARE(values(c), (std::vector<int>{13, 14, 15, 16, 17, 18}));
        QVERIFY(inputErrorOf([&] { cropImage(img, CropBox{2, 0, 2, 1}); }).contains(QStringLiteral("outside the 3x2 image")));
    }

    void flipMirrorsColumnsAndTwiceIsTheIdentity()
    {
        const Image img = rgb(3, 1, {1, 2, 3, 4, 5, 6, 7, 8, 9});
        QCOMPARE(values(flipHorizontal(img)), (std::vector<int>{7, 8, 9, 4, 5, 6, 1, 2, 3}));
        for (int channels : {1, 3}) {
            const Image n = noise(17, 9, channels, 3);
            QVERIFY(flipHorizontal(n).pixels != n.pixels);
            QVERIFY(flipHorizontal(flipHorizontal(n)).pixels == n.pixels);
        }
    }

    void jitterWithFactorsOfOneIsTheIdentity()
    {
        const Image img = noise(19, 11, 3, 7);
        // No strength: nothing drawn, every factor 1.
        PyRandom rng(1);
        const ColorJitter::Draw none = ColorJitter{}.draw(rng);
        QCOMPARE(none.brightness, 1.0);
        QCOMPARE(none.contrast, 1.0);
        QCOMPARE(none.saturation, 1.0);
        QVERIFY(ColorJitter::apply(img, none).pixels == img.pixels);
        QVERIFY(adjustContrast(img, 1.0).pixels == img.pixels);
        QVERIFY(adjustSaturation(img, 1.0).pixels == img.pixels);
        QVERIFY(adjustBrightness(img, 1.0).pixels == img.pixels);
        // and anything else is not
        QVERIFY(adjustContrast(img, 1.1).pixels != img.pixels);
        QVERIFY(adjustSaturation(img, 0.9).pixels != img.pixels);
    }

    void contrastAndBrightnessMatchPilOnAHandComputedImage()
    {
        // Two pixels. PIL's grey: (19595 R + 38470 G + 7471 B + 2^15) >> 16 = 124 and 18; mean 71.
        const Image img = rgb(2, 1, {200, 100, 50, 10, 20, 30});
        // contrast 1.5: trunc(71 + 1.5 (v − 71)) clipped: 264.5→255, 114.5, 39.5, −20.5→0, −5.5→0, 9.5
        QCOMPARE(values(adjustContrast(img, 1.5)), (std::vector<int>{255, 114, 39, 0, 0, 9}));
        // brightness 0.5: trunc(0.5 v)
        QCOMPARE(values(adjustBrightness(img, 0.5)), (std::vector<int>{100, 50, 25, 5, 10, 15}));
        // saturation blends with the grey pixel: 0 gives grey, 2 gives trunc(g + 2 (v − g)) clipped
        QCOMPARE(values(adjustSaturation(img, 0.0)), (std::vector<int>{124, 124, 124, 18, 18, 18}));
        QCOMPARE(values(adjustSaturation(img, 2.0)), (std::vector<int>{255, 76, 0, 2, 22, 42}));
        // The grey value is rounded: pure green is 255 · 38470 / 65536 = 149.69 -> 150.
        QCOMPARE(values(adjustSaturation(rgb(1, 1, {0, 255, 0}), 0.0)), (std::vector<int>{150, 150, 150}));
        // PIL blends in C float: 0.7f · 90 = 63.0000x (62 in double), 1.3f · 90 = 116.99999x (117 in double).
        QCOMPARE(values(adjustBrightness(rgb(1, 1, {90, 90, 90}), 0.7)), (std::vector<int>{63, 63, 63}));
        QCOMPARE(values(adjustBrightness(rgb(1, 1, {90, 90, 90}), 1.3)), (std::vector<int>{116, 116, 116}));
        // The order matters: brightness first halves the mean to int(35.5 + 0.5) = 36.
        ColorJitter::Draw d;
        d.brightness = 0.5;
        d.contrast = 1.5;
        d.order[0] = ColorJitter::Op::Contrast;
        d.order[1] = ColorJitter::Op::Brightness;
        d.order[2] = ColorJitter::Op::Saturation;
        QCOMPARE(values(ColorJitter::apply(img, d)), (std::vector<int>{127, 57, 19, 0, 0, 4}));
        std::swap(d.order[0], d.order[1]);
        QCOMPARE(values(ColorJitter::apply(img, d)), (std::vector<int>{132, 57, 19, 0, 0, 4}));
    }

    void jitterDrawsTorchvisionsRangesInEveryOrder()
    {
        const ColorJitter jitter{0.4, 0.4, 1.5};
        std::set<std::vector<int>> orders;
        double bLow = 2, bHigh = 0, sLow = 2;
        for (std::uint64_t seed = 0; seed < 600; ++seed) {
            PyRandom rng(seed);
            const ColorJitter::Draw d = jitter.draw(rng);
            orders.insert({static_cast<int>(d.order[0]), static_cast<int>(d.order[1]), static_cast<int>(d.order[2])});
            QVERIFY(d.brightness >= 0.6 && d.brightness <= 1.4);
            QVERIFY(d.contrast >= 0.6 && d.contrast <= 1.4);
            QVERIFY(d.saturation >= 0.0 && d.saturation <= 2.5);   // [max(0, 1 − 1.5), 1 + 1.5]
            bLow = std::min(bLow, d.brightness);
            bHigh = std::max(bHigh, d.brightness);
            sLow = std::min(sLow, d.saturation);
        }
        QCOMPARE(orders.size(), std::size_t{6});
        QVERIFY(bLow < 0.62 && bHigh > 1.38);
        QVERIFY(sLow < 0.05);
    }

    void greyImagesAugmentLikeTheirThreeChannelReplication()
    {
        const Image grey = noise(28, 28, 1, 11);
        const Image colour = replicated(grey);
        FineTuneAugment aug;
        aug.seed = 4;
        for (std::size_t item = 0; item < 20; ++item) {
            const Image g = aug.apply(grey, 2, item, 40);
            const Image c = aug.apply(colour, 2, item, 40);
            QCOMPARE(g.channels, 1);
            QVERIFY2(replicated(g).pixels == c.pixels, qPrintable(QStringLiteral("item %1").arg(item)));
        }
    }

    void theHookIsAFunctionOfSeedEpochAndItem()
    {
        const Image img = noise(48, 40, 3, 21);
        FineTuneAugment aug;
        aug.seed = 9;
        const std::vector<std::size_t> items = {5, 17, 5, 3};
        const ImageAugment hook = aug.hook(1, items, 32);
        const Image first = hook(img, 0);
        QCOMPARE(first.width, 32);
        QCOMPARE(first.height, 32);
        // Rows 0 and 2 are the same dataset item: the same pixels; so is the same item in another
        // batch, and in another hook built from the same settings.
        QVERIFY(hook(img, 2).pixels == first.pixels);
        QVERIFY(aug.hook(1, {3, 5}, 32)(img, 1).pixels == first.pixels);
        QVERIFY(aug.apply(img, 1, 5, 32).pixels == first.pixels);
        // Another item, epoch or seed: other pixels.
        QVERIFY(hook(img, 1).pixels != first.pixels);
        QVERIFY(aug.apply(img, 2, 5, 32).pixels != first.pixels);
        FineTuneAugment other = aug;
        other.seed = 10;
        QVERIFY(other.apply(img, 1, 5, 32).pixels != first.pixels);
        // Threads calling the hook in any order get what one thread gets.
        std::vector<Image> alone, together(items.size());
        for (std::size_t r = 0; r < items.size(); ++r) alone.push_back(hook(img, r));
        std::thread a([&] { for (std::size_t r = 0; r < items.size(); r += 2) together[r] = hook(img, r); });
        std::thread b([&] { for (std::size_t r = items.size(); r-- > 1;) if (r % 2) together[r] = hook(img, r); });
        a.join();
        b.join();
        for (std::size_t r = 0; r < items.size(); ++r) QVERIFY(together[r].pixels == alone[r].pixels);
    }

    void epochsDrawDifferentCropsFlipsAndJitter()
    {
        // Over many epochs one item sees many different images; with everything off, one.
        const Image img = noise(64, 64, 3, 2);
        FineTuneAugment aug;
        std::set<std::vector<std::uint8_t>> seen;
        for (int epoch = 0; epoch < 30; ++epoch) seen.insert(aug.apply(img, epoch, 0, 24).pixels);
        QCOMPARE(seen.size(), std::size_t{30});
        FineTuneAugment plain;
        plain.crop_scale_min = 1.0;   // the whole image when the drawn ratio rounds to it, else the fallback = whole
        plain.jitter = 0;
        plain.flip = false;
        seen.clear();
        for (int epoch = 0; epoch < 30; ++epoch) seen.insert(plain.apply(img, epoch, 0, 24).pixels);
        QCOMPARE(seen.size(), std::size_t{1});
        QVERIFY(*seen.begin() == resizeBilinear(img, 24, 24).pixels);
    }

    void noneIsAPlainResize()
    {
        const Image img = noise(50, 30, 3, 8);
        const FineTuneAugment none = FineTuneAugment::none();
        const Image want = resizeBilinear(img, 20, 20);
        QVERIFY(none.apply(img, 3, 7, 20).pixels == want.pixels);
        QVERIFY(none.hook(0, {7}, 20)(img, 0).pixels == want.pixels);
    }

    void badSettingsAreRefusedByName()
    {
        FineTuneAugment a;
        a.crop_scale_min = 0;
        QVERIFY(inputErrorOf([&] { a.check(); }).contains(QStringLiteral("crop_scale_min 0")));
        a.crop_scale_min = 1.5;
        QVERIFY(inputErrorOf([&] { a.hook(0, {0}, 8); }).contains(QStringLiteral("crop_scale_min 1.5")));
        a.crop_scale_min = 0.08;
        a.jitter = -0.1;
        QVERIFY(inputErrorOf([&] { a.check(); }).contains(QStringLiteral("jitter -0.1")));
        a.jitter = 0.4;
        QVERIFY(inputErrorOf([&] { a.apply(noise(4, 4, 3, 0), 0, 0, 0); }).contains(QStringLiteral("resolution 0")));
        PyRandom rng(0);
        QVERIFY(inputErrorOf([&] { RandomResizedCrop{}.box(0, 5, rng); }).contains(QStringLiteral("empty")));
    }
};

QTEST_GUILESS_MAIN(TestAugment)
#include "test_augment.moc"
