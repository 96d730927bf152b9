// tinyscope eval / classify / forward as a user runs them, on a freshly initialised supernet of
// the Fashion-MNIST space: JSON fields, skipped unreadable images, bad input messages.
#include "TestSupport.h"

#include "data/ImageDataset.h"
#include "io/AtomicFile.h"
#include "io/JsonFile.h"
#include "nn/accuracy/EvaluationJob.h"
#include "nn/supernet/Supernet.h"
#include "space/ArchSampler.h"
#include "space/PyRandom.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <QImage>
#include <QProcess>
#include <QFile>
#include <QTemporaryDir>

#include <future>

using namespace tinyscope;

class TestEvalCli : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;
    QString ckpt, folder;

private Q_SLOTS:
    void initTestCase()
    {
        ckpt = tmp.path() + QStringLiteral("/init.pth");
        Supernet::initialize(presetSpace("mcunet-fmnist"), 3).save(ckpt.toStdString());
        // An image folder with the space's 10 classes, two images each, and one broken file.
        folder = tmp.path() + QStringLiteral("/images");
        for (int c = 0; c < 10; ++c) {
            const QString d = folder + QStringLiteral("/class%1").arg(c);
            QDir().mkpath(d);
            for (int i = 0; i < 2; ++i) {
                QImage img(28, 28, QImage::Format_Grayscale8);
                img.fill(20 * c + i);
                QVERIFY(img.save(d + QStringLiteral("/%1.png").arg(i)));
            }
        }
        writeFileAtomic((folder + QStringLiteral("/class3/broken.jpg")).toStdString(), "not a jpeg");
    }

    void evalJsonOnAnImageFolderReportsSkippedFiles()
    {
        QStringList args = {QStringLiteral("eval"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--config"), QStringLiteral("min"),
                            QStringLiteral("--data"), folder, QStringLiteral("--no-calib"), QStringLiteral("--json")};
        test::CliRun r = test::runTinyscope(args);
        QVERIFY2(r.code == 0, r.err.c_str());
        Json j = Json::parse(r.out);
        QCOMPARE(j["images"].get<int>(), 20);
        QCOMPARE(j["skipped"].get<int>(), 1);
        QVERIFY(j["skipped_examples"][0]["item"].get<std::string>().find("broken.jpg") != std::string::npos);
        QVERIFY(j["top1"].get<double>() >= 0.0 && j["top1"].get<double>() <= 100.0);
        QCOMPARE(j["correct"].get<int>() * 100.0 / 20.0, j["top1"].get<double>());
        // Per class: two images of each of the 10 classes; the confusion matrix adds up.
        QCOMPARE(j["per_class"].size(), std::size_t(10));
        int correct = 0;
        for (std::size_t c = 0; c < 10; ++c) {
            QCOMPARE(j["per_class"][c]["images"].get<int>(), 2);
            QCOMPARE(j["confusion"][c][c].get<int>(), j["per_class"][c]["correct"].get<int>());
            int row = 0;
            for (const Json& v : j["confusion"][c]) row += v.get<int>();
            QCOMPARE(row, 2);
            correct += j["per_class"][c]["correct"].get<int>();
        }
        QCOMPARE(correct, j["correct"].get<int>());
        QCOMPARE(j["per_class"][0]["class"].get<std::string>(), std::string("T-shirt/top"));
        QCOMPARE(j["cost"]["params"].get<long long>(), j["cost"]["params"].get<long long>());
        QCOMPARE(j["config"]["image_size"].get<int>(), 28);
        QVERIFY(j["images_per_second"].get<double>() > 0);
    }

    void evalOnFashionMnistWithCalibration()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        test::CliRun r = test::runTinyscope({QStringLiteral("eval"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--images"),
                                          QStringLiteral("200"), QStringLiteral("--calib-images"), QStringLiteral("100"), QStringLiteral("--json")});
        QVERIFY2(r.code == 0, r.err.c_str());
        Json j = Json::parse(r.out);
        QCOMPARE(j["images"].get<int>(), 200);
        QCOMPARE(j["calibration_images"].get<int>(), 100);
        QCOMPARE(j["config"]["wid"].get<int>(), 2);   // default: the largest subnet
        test::CliRun lab = test::runTinyscope({QStringLiteral("eval"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--images"),
                                            QStringLiteral("50"), QStringLiteral("--calib-images"), QStringLiteral("64"), QStringLiteral("--lab-calib")});
        QCOMPARE(lab.code, 0);
        QVERIFY(lab.out.find("re-calibrated on 64 images") != std::string::npos);
    }

    void searchMeasuresItsWinnerLikeEval()
    {
        // The VWW predictor's winner (--space mcunet-vww: the default space is mcunet-fmnist), transferred
        // to the Fashion-MNIST supernet, measured: the same top-1 as `eval` of the transferred config on
        // the same images.
        test::CliRun r = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--space"), QStringLiteral("mcunet-vww"), QStringLiteral("--macs"),
                                          QStringLiteral("60"), QStringLiteral("--sram"), QStringLiteral("250"), QStringLiteral("--generations"),
                                          QStringLiteral("3"), QStringLiteral("--measure"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--data"),
                                          folder, QStringLiteral("--calib-images"), QStringLiteral("0"), QStringLiteral("--json"),
                                          QStringLiteral("--no-evaluated")});
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json m = Json::parse(r.out)["measurement"];
        QCOMPARE(m["space"].get<std::string>(), std::string("mcunet-fmnist"));
        QCOMPARE(m["transferred_from"].get<std::string>(), std::string("mcunet-vww"));
        QCOMPARE(m["images"].get<int>(), 20);
        QCOMPARE(m["skipped"].get<int>(), 1);
        QCOMPARE(m["calibration_images"].get<int>(), 0);
        const Json best = Json::parse(r.out)["best"]["config"];
        QCOMPARE(m["config"]["ks"], best["ks"]);
        QCOMPARE(m["config"]["wid"], best["wid"]);
        const QString cfg = tmp.path() + QStringLiteral("/measured.json");
        writeFileAtomic(cfg.toStdString(), m["config"].dump());
        test::CliRun e = test::runTinyscope({QStringLiteral("eval"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--config"), cfg,
                                          QStringLiteral("--data"), folder, QStringLiteral("--no-calib"), QStringLiteral("--json")});
        QVERIFY2(e.code == 0, e.err.c_str());
        QCOMPARE(Json::parse(e.out)["top1"].get<double>(), m["measured_accuracy"].get<double>());
        // Options of the measurement without --measure are a mistake, said at once.
        test::CliRun stray = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--supernet"), ckpt});
        QCOMPARE(stray.code, 2);
        QVERIFY2(stray.err.find("--supernet only applies with --measure") != std::string::npos, stray.err.c_str());
        stray = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--dtype"), QStringLiteral("bf16")});
        QCOMPARE(stray.code, 2);
        QVERIFY2(stray.err.find("--dtype only applies with --measure") != std::string::npos, stray.err.c_str());
    }

    void searchMeasuresItsWinnerInBf16LikeEval()
    {
        // search --measure --dtype bf16: oneDNN's bf16 plans measure the winner, the same top-1 as
        // `eval --dtype bf16` of that config; on a CPU without AVX-512 BF16 (or AMX) both refuse
        // with exit 2 before any work. LibTorch has no bf16 path: refused everywhere.
        const QStringList search = {QStringLiteral("search"), QStringLiteral("--macs"), QStringLiteral("60"), QStringLiteral("--sram"),
                                    QStringLiteral("250"), QStringLiteral("--generations"), QStringLiteral("3"), QStringLiteral("--measure"),
                                    QStringLiteral("--supernet"), ckpt, QStringLiteral("--data"), folder, QStringLiteral("--calib-images"),
                                    QStringLiteral("0"), QStringLiteral("--json"), QStringLiteral("--no-evaluated"), QStringLiteral("--dtype"),
                                    QStringLiteral("bf16")};
        const test::CliRun libtorch = test::runTinyscope(search + QStringList{QStringLiteral("--engine"), QStringLiteral("libtorch")});
        QCOMPARE(libtorch.code, 2);
        QVERIFY2(libtorch.err.find("--dtype bf16 needs the oneDNN engine") != std::string::npos, libtorch.err.c_str());
        QFile cpuinfo(QStringLiteral("/proc/cpuinfo"));
        const QByteArray flags = cpuinfo.open(QIODevice::ReadOnly) ? cpuinfo.readAll() : QByteArray();
        const bool bf16 = flags.contains(" avx512_bf16") || flags.contains(" amx_bf16");
        const test::CliRun r = test::runTinyscope(search);
        if (!bf16) {
            QCOMPARE(r.code, 2);
            QVERIFY2(r.err.find("needs AVX-512 BF16") != std::string::npos, r.err.c_str());
            QSKIP("no AVX-512 BF16 or AMX here: the refusal was checked, not the measurement");
        }
        expectWinnerMeasuredLikeEval(r, "bf16", "onednn", {QStringLiteral("--dtype"), QStringLiteral("bf16")});
    }

    // A `search --measure --json` run's winner: measured with `dtype` by `engine`, and `eval` of its
    // config (on `folder`, no BN re-calibration, with `evalArgs`) gives the same top-1.
    void expectWinnerMeasuredLikeEval(const test::CliRun& r, const std::string& dtype, const std::string& engine, const QStringList& evalArgs)
    {
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json m = Json::parse(r.out)["measurement"];
        QCOMPARE(m["dtype"].get<std::string>(), dtype);
        QCOMPARE(m["engine"].get<std::string>(), engine);
        const QString cfg = tmp.path() + QStringLiteral("/measured-%1.json").arg(QString::fromStdString(dtype));
        writeFileAtomic(cfg.toStdString(), m["config"].dump());
        const test::CliRun e = test::runTinyscope(QStringList{QStringLiteral("eval"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--config"), cfg,
                                                              QStringLiteral("--data"), folder, QStringLiteral("--no-calib"), QStringLiteral("--json")} +
                                                  evalArgs);
        QVERIFY2(e.code == 0, e.err.c_str());
        QCOMPARE(Json::parse(e.out)["dtype"].get<std::string>(), dtype);
        QCOMPARE(Json::parse(e.out)["top1"].get<double>(), m["measured_accuracy"].get<double>());
    }

    void searchMeasuresItsWinnerInInt8LikeEval()
    {
        // search --measure --dtype int8: the winner's deployed top-1 (our PTQ on calibration images of
        // --calib-data, then the int8 plans), the same as `eval --dtype int8` of that config; int8
        // runs on oneDNN only; --int8-calib-images without int8 is refused.
        const QStringList search = {QStringLiteral("search"), QStringLiteral("--macs"), QStringLiteral("60"), QStringLiteral("--sram"),
                                    QStringLiteral("250"), QStringLiteral("--generations"), QStringLiteral("3"), QStringLiteral("--measure"),
                                    QStringLiteral("--supernet"), ckpt, QStringLiteral("--data"), folder, QStringLiteral("--calib-data"), folder,
                                    QStringLiteral("--calib-images"), QStringLiteral("0"), QStringLiteral("--json"), QStringLiteral("--no-evaluated")};
        const test::CliRun libtorch = test::runTinyscope(search + QStringList{QStringLiteral("--dtype"), QStringLiteral("int8"),
                                                                              QStringLiteral("--engine"), QStringLiteral("libtorch")});
        QCOMPARE(libtorch.code, 2);
        QVERIFY2(libtorch.err.find("--dtype int8 runs on oneDNN's int8 plans (--engine onednn)") != std::string::npos, libtorch.err.c_str());
        const test::CliRun stray = test::runTinyscope(search + QStringList{QStringLiteral("--int8-calib-images"), QStringLiteral("20")});
        QCOMPARE(stray.code, 2);
        QVERIFY2(stray.err.find("--int8-calib-images applies to --dtype int8 only") != std::string::npos, stray.err.c_str());
        const test::CliRun r = test::runTinyscope(search + QStringList{QStringLiteral("--dtype"), QStringLiteral("int8"),
                                                                       QStringLiteral("--int8-calib-images"), QStringLiteral("20")});
        expectWinnerMeasuredLikeEval(r, "int8", "onednn-int8",
                                     {QStringLiteral("--calib-data"), folder, QStringLiteral("--dtype"), QStringLiteral("int8"),
                                      QStringLiteral("--int8-calib-images"), QStringLiteral("20")});
    }

    void classifyRanksEveryClass()
    {
        const QString img = folder + QStringLiteral("/class1/0.png");
        test::CliRun r = test::runTinyscope({QStringLiteral("classify"), img, QStringLiteral("--supernet"), ckpt, QStringLiteral("--no-calib"),
                                          QStringLiteral("--top"), QStringLiteral("10"), QStringLiteral("--json")});
        QVERIFY2(r.code == 0, r.err.c_str());
        Json j = Json::parse(r.out);
        QCOMPARE(j.size(), std::size_t(10));
        double sum = 0, prev = 2;
        for (const Json& c : j) {
            sum += c["probability"].get<double>();
            QVERIFY(c["probability"].get<double>() <= prev);
            prev = c["probability"].get<double>();
        }
        QVERIFY(std::fabs(sum - 1.0) < 1e-4);
        QVERIFY(j[0]["class"].is_string());
    }

    // classify and the GUI's "Classify image" run one core job (runClassification): in a space with
    // no calibration images of its own (Lab 3's VWW) one image is still classified, on the
    // checkpoint's BatchNorm statistics, with a note that says why and how to re-calibrate.
    void classifyWithoutCalibrationDataSaysWhy()
    {
        REQUIRE_SHARED();
        const QStringList args{QStringLiteral("classify"), folder + QStringLiteral("/class1/0.png"), QStringLiteral("--supernet"),
                               QString::fromStdString(test::sharedPath("reference/mcunet-vww/ofa_mcunet384_vww_seed0_perturbed.pth")),
                               QStringLiteral("--space"), QStringLiteral("mcunet-vww"), QStringLiteral("--config"), QStringLiteral("min"),
                               QStringLiteral("--json")};
        const test::CliRun r = test::runTinyscope(args);
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.err.find("note: BatchNorm keeps the checkpoint's statistics: space mcunet-vww has no calibration images of its own "
                            "(--calib-data DATASET re-calibrates it on images of 2 classes") != std::string::npos,
                 r.err.c_str());
        const test::CliRun plain = test::runTinyscope(args + QStringList{QStringLiteral("--no-calib")});
        QVERIFY2(plain.code == 0, plain.err.c_str());
        QCOMPARE(r.out, plain.out);
        QCOMPARE(Json::parse(r.out).size(), std::size_t(2));
    }

    void badInputIsOneLineAndExitCode2()
    {
        std::string small = std::string(100, '\0');
        writeFileAtomic((tmp.path() + QStringLiteral("/x.bin")).toStdString(), small);
        writeFileAtomic((tmp.path() + QStringLiteral("/cfg.json")).toStdString(),
                        R"({"wid": 0, "ks": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "e": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "d": [0,0,0,0,0,0], "image_size": 28})");
        struct Case {
            QStringList args;
            const char* expect;
        } cases[] = {
            {{QStringLiteral("forward"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--space"), QStringLiteral("mcunet-fmnist"),
              QStringLiteral("--config"), tmp.path() + QStringLiteral("/cfg.json"), QStringLiteral("--input"), tmp.path() + QStringLiteral("/x.bin")},
             "holds 100 bytes; a 1x3x28x28 float32 tensor needs 9408"},
            {{QStringLiteral("forward"), QStringLiteral("--supernet"), ckpt}, "--config is required"},
            {{QStringLiteral("eval"), QStringLiteral("--supernet"), tmp.path() + QStringLiteral("/x.bin"), QStringLiteral("--data"), folder},
             "x.bin: not a PyTorch checkpoint"},
            {{QStringLiteral("eval"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--data"), tmp.path() + QStringLiteral("/nope")},
             "nope: no such dataset folder"},
            {{QStringLiteral("eval"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--space"), QStringLiteral("mcunet-vww"), QStringLiteral("--data"), folder},
             "has 10 classes; space 'mcunet-vww' has 2"},
            {{QStringLiteral("classify"), tmp.path() + QStringLiteral("/x.bin"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--no-calib")},
             "x.bin: cannot decode image"},
        };
        for (const Case& c : cases) {
            test::CliRun r = test::runTinyscope(c.args);
            QVERIFY2(r.code == 2, qPrintable(c.args.join(QLatin1Char(' ')) + QStringLiteral(" -> %1: ").arg(r.code) + QString::fromStdString(r.err)));
            QVERIFY2(r.err.find(c.expect) != std::string::npos, r.err.c_str());
            QCOMPARE(test::lineCount(r.err), 1);
        }
    }

    void concurrentEvaluationsAreDeterministic()
    {
        // Three evaluations at once (the GUI's Evaluate box, the Search and Predictor panels may
        // all measure together) give what each gives alone: the shared supernet cache is read-only.
        const std::string shipped = shippedSupernetPath();
        if (shipped.empty()) QSKIP("the shipped supernet is not in this checkout");
        EvaluationRequest base = supernetRequest(shipped);
        base.images = 200;
        base.calibration.images = 200;
        base.threads = 1;
        ArchSampler sampler(base.space);
        PyRandom rng(5);
        std::vector<EvaluationRequest> requests;
        for (SubnetConfig c : {sampler.minConfig(base.space.resolutions.front()), sampler.fullMaxConfig(base.space.resolutions.back()), sampler.random(rng)}) {
            EvaluationRequest rq = base;
            rq.config = c;
            requests.push_back(rq);
        }
        std::vector<EvalResult> alone;
        for (const EvaluationRequest& rq : requests) alone.push_back(runEvaluation(rq));
        std::vector<std::future<EvalResult>> together;
        for (const EvaluationRequest& rq : requests) together.push_back(std::async(std::launch::async, [rq] { return runEvaluation(rq); }));
        for (std::size_t i = 0; i < together.size(); ++i) {
            const EvalResult r = together[i].get();
            QCOMPARE(r.correct, alone[i].correct);
            QCOMPARE(r.confusion, alone[i].confusion);
        }
    }
};

QTEST_GUILESS_MAIN(TestEvalCli)
#include "test_eval_cli.moc"
