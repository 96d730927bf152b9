// Supernet training on a tiny run (few steps, smallest resolution, 128 images): loss goes down,
// checkpoints are real-format and round-trip, a run killed mid-epoch resumes from its last
// checkpoint and ends with exactly the weights of an uninterrupted run, and make-accdata
// writes a lab-format accuracy table (also in shards) that resumes too; a frozen teacher's cached
// top-k predictions train exactly as the teacher run in every step.
#include "TestSupport.h"

#include "data/ImageDataset.h"
#include "data/TeacherLogitCache.h"
#include "io/AtomicFile.h"
#include "io/CpuInfo.h"
#include "io/JsonFile.h"
#include "predict/AccuracyDataset.h"
#include "nn/predictor/AccuracyTableBuilder.h"
#include "nn/supernet/Checkpoint.h"
#include "nn/supernet/Supernet.h"
#include "nn/train/SupernetTrainer.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <ATen/ATen.h>

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>

#include <csignal>
#include <limits>

using namespace tinyscope;

namespace {
struct Run {
    int code = -1;
    QString out, err;
};

Run runTinyscope(const QStringList& args, int timeoutMs = 600000)
{
    QProcess p;
    p.start(test::tinyscopeBinary(), args);
    p.waitForFinished(timeoutMs);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

QStringList trainArgs(const QString& out)
{
    return {QStringLiteral("train-supernet"), QStringLiteral("--preset"), QStringLiteral("tiny"), QStringLiteral("--out"), out,
            QStringLiteral("--threads"), QStringLiteral("1")};
}
}  // namespace

class TestTraining : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;
    QString runA;
    QString cachedRun;   // a run with a teacher-logit cache

    // The tiny preset's width phase from run A's supernet as a frozen teacher (top-k cached, or in
    // the step when topK is 0); no end-of-epoch monitor (not what these tests check).
    QString frozenTeacherRecipe(const char* name, int topK)
    {
        TrainRecipe r = TrainRecipe::preset("tiny");
        r.phases.erase(r.phases.begin());   // the width phase only
        r.frozen_teacher = true;
        r.augment_draws = 2;
        r.teacher_cache_top_k = topK;
        r.monitor_images = 0;
        const QString path = tmp.path() + QStringLiteral("/") + QString::fromUtf8(name);
        writeFileAtomic(path.toStdString(), r.toJson().dump());
        return path;
    }

    Run trainFromTeacher(const QString& recipe, const QString& out, const char* maxSteps)
    {
        return runTinyscope({QStringLiteral("train-supernet"), QStringLiteral("--recipe"), recipe, QStringLiteral("--init-from"),
                             runA + QStringLiteral("/supernet.pth"), QStringLiteral("--out"), out, QStringLiteral("--threads"),
                             QStringLiteral("1"), QStringLiteral("--max-steps"), QString::fromUtf8(maxSteps)});
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed (setup.sh installs it)");
    }

    void tinyRunLearnsAndWritesARealCheckpoint()
    {
        runA = tmp.path() + QStringLiteral("/a");
        Run r = runTinyscope(trainArgs(runA));
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY(r.out.contains(QStringLiteral("training finished")));
        Checkpoint ck = readCheckpoint((runA + QStringLiteral("/supernet.pth")).toStdString());
        QVERIFY(ck.wrapped);
        QVERIFY(ck.section("optimizer_momentum") != nullptr);
        Json state = Json::parse(*ck.text("tinyscope_training"));
        QVERIFY(state["finished"].get<bool>());
        const Json& h = state["history"];
        QCOMPARE(h.size(), std::size_t(3));
        // The largest network's mean loss falls from its first epoch to its second.
        const double first = h[0]["mean_loss"].get<double>(), second = h[1]["mean_loss"].get<double>();
        QVERIFY2(second < first, qPrintable(QStringLiteral("epoch losses %1 -> %2").arg(first).arg(second)));
        // The weights load as a supernet of the space.
        Supernet net = Supernet::fromStateDict(presetSpace("mcunet-fmnist"), ck.state_dict, "run a");
        QVERIFY(net.parameterBytes() > 1000000);
    }

    void resumeRefusesNanWeightsAndMomentum()
    {
        if (runA.isEmpty()) QSKIP("needs the uninterrupted run");
        // A run folder whose checkpoint holds a NaN (in the weights, then in the optimizer's
        // momentum): resuming must refuse it, naming the tensor, instead of training on garbage.
        const Checkpoint ck = readCheckpoint((runA + QStringLiteral("/supernet.pth")).toStdString());
        for (const char* part : {"weights", "momentum"}) {
            Checkpoint bad = ck;
            StateDict& sd = std::string(part) == "weights" ? bad.state_dict : bad.sections.front().second;
            QCOMPARE(bad.sections.front().first, std::string("optimizer_momentum"));
            sd.front().second = sd.front().second.detach().clone();
            sd.front().second.view({-1})[2] = std::numeric_limits<float>::quiet_NaN();
            const QString dir = tmp.path() + QStringLiteral("/nan-") + QLatin1String(part);
            QDir().mkpath(dir);
            writeCheckpoint((dir + QStringLiteral("/supernet.pth")).toStdString(), bad);
            Run r = runTinyscope(trainArgs(dir));
            QVERIFY2(r.code == 2, qPrintable(r.out + r.err));
            const QString key = QString::fromStdString((std::string(part) == "weights" ? "" : "optimizer_momentum/") + sd.front().first);
            QVERIFY2(r.err.contains(QStringLiteral("supernet.pth: tensor '") + key + QStringLiteral("' element ")) && r.err.contains(QStringLiteral("is nan")),
                     qPrintable(r.err));
        }
    }

    void killedMidEpochResumesExactly()
    {
        if (runA.isEmpty()) QSKIP("needs the uninterrupted run");
        const QString runB = tmp.path() + QStringLiteral("/b");
        QProcess p;
        p.start(test::tinyscopeBinary(), trainArgs(runB));
        // Kill it (SIGKILL, no chance to clean up) right after its first mid-epoch checkpoint.
        QString log;
        while (!log.contains(QStringLiteral("checkpoint after 3 steps")) && p.state() != QProcess::NotRunning) {
            p.waitForReadyRead(200);
            log += QString::fromUtf8(p.readAllStandardOutput());
        }
        QVERIFY2(p.state() != QProcess::NotRunning, qPrintable(log));
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        p.waitForFinished();
        Run again = runTinyscope(trainArgs(runB));
        QCOMPARE(again.code, 0);
        QVERIFY2(again.out.contains(QStringLiteral("resuming")) && again.out.contains(QStringLiteral("step 3 (3 of 24 steps done")),
                 qPrintable(again.out));
        StateDict a = loadStateDict((runA + QStringLiteral("/supernet.pth")).toStdString());
        StateDict b = loadStateDict((runB + QStringLiteral("/supernet.pth")).toStdString());
        QCOMPARE(a.size(), b.size());
        double maxDiff = 0;
        for (std::size_t i = 0; i < a.size(); ++i) maxDiff = std::max(maxDiff, (a[i].second.to(at::kDouble) - b[i].second.to(at::kDouble)).abs().max().item<double>());
        QCOMPARE(maxDiff, 0.0);
        // A finished run does not train again.
        Run done = runTinyscope(trainArgs(runB));
        QCOMPARE(done.code, 0);
        QVERIFY(done.out.contains(QStringLiteral("training finished")));
    }

    void accuracyTableInTheLabsFormatWithShardsAndResume()
    {
        if (runA.isEmpty()) QSKIP("needs the trained run");
        const QString ckpt = runA + QStringLiteral("/supernet.pth");
        const QString dir = tmp.path() + QStringLiteral("/acc");
        QStringList common = {QStringLiteral("make-accdata"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--out"), dir,
                              QStringLiteral("--count"), QStringLiteral("6"), QStringLiteral("--calib-images"), QStringLiteral("32")};
        Run s0 = runTinyscope(common + QStringList{QStringLiteral("--shard"), QStringLiteral("0/2")});
        QVERIFY2(s0.code == 0, qPrintable(s0.out + s0.err));
        Run s1 = runTinyscope(common + QStringList{QStringLiteral("--shard"), QStringLiteral("1/2")});
        QCOMPARE(s1.code, 0);
        Json t0 = readJsonFile((dir + QStringLiteral("/src/mcunet-fmnist_shard0of2_acc_table.json")).toStdString());
        Json t1 = readJsonFile((dir + QStringLiteral("/src/mcunet-fmnist_shard1of2_acc_table.json")).toStdString());
        QCOMPARE(t0.size(), std::size_t(3));
        QCOMPARE(t1.size(), std::size_t(3));
        for (const Json* t : {&t0, &t1})
            for (const Json& row : *t) {
                QVERIFY(row.is_array() && row.size() == 2);
                SubnetConfig::fromJson(row[0], presetSpace("mcunet-fmnist"), "row");
                QVERIFY(row[1].get<double>() >= 0.0 && row[1].get<double>() <= 100.0);
            }
        QVERIFY(t0[0][0] != t1[0][0]);   // disjoint slices
        // Each finished shard has a card beside src/ with its real spread; the reader merges the
        // two tables and nothing else.
        const Json card = readJsonFile((dir + QStringLiteral("/mcunet-fmnist_shard0of2_card.json")).toStdString());
        QCOMPARE(card["pairs"].get<int>(), 3);
        double lo = 100, hi = 0;
        for (const Json& row : t0) {
            lo = std::min(lo, row[1].get<double>());
            hi = std::max(hi, row[1].get<double>());
        }
        QCOMPARE(card["top1"]["min"].get<double>(), lo);
        QCOMPARE(card["top1"]["max"].get<double>(), hi);
        QCOMPARE(card["measurement"]["measured_images"].get<int>(), 2500);
        QCOMPARE(card["sampling"]["shards"].get<int>(), 2);
        QVERIFY(card["seconds"].is_number() && card["seconds"].get<double>() > 0);
        QCOMPARE(card["cpu"]["model"].get<std::string>(), hostCpu().model);   // where it was measured, and with which kernels
        QCOMPARE(card["cpu"]["isa"].get<std::vector<std::string>>(), hostCpu().isa);
        QVERIFY(card["cpu"]["kernels"].contains("onednn"));
        QCOMPARE(AccuracyDataset::load(dir.toStdString(), presetSpace("mcunet-fmnist")).size(), std::size_t(6));
        // Re-running a finished shard measures nothing new; other options are refused.
        Run again = runTinyscope(common + QStringList{QStringLiteral("--shard"), QStringLiteral("0/2")});
        QVERIFY(again.out.contains(QStringLiteral("wrote 3 pairs")));
        const Json cardAgain = readJsonFile((dir + QStringLiteral("/mcunet-fmnist_shard0of2_card.json")).toStdString());
        QVERIFY(cardAgain["seconds"].get<double>() >= card["seconds"].get<double>());   // time of all runs
        Run other = runTinyscope({QStringLiteral("make-accdata"), QStringLiteral("--supernet"), ckpt, QStringLiteral("--out"), dir,
                               QStringLiteral("--count"), QStringLiteral("8"), QStringLiteral("--shard"), QStringLiteral("0/2")});
        QCOMPARE(other.code, 2);
        QVERIFY(other.err.contains(QStringLiteral("built with other options")));
        // A larger --count extends the table: the measured rows stay, sample 6 is added (shard 0 of
        // 8 holds samples 0, 2, 4, 6); a smaller one would drop samples and is refused.
        auto withCount = [&common](const char* n) {
            QStringList args = common;
            args[args.indexOf(QStringLiteral("--count")) + 1] = QString::fromLatin1(n);
            return args + QStringList{QStringLiteral("--shard"), QStringLiteral("0/2")};
        };
        Run more = runTinyscope(withCount("8"));
        QVERIFY2(more.code == 0 && more.out.contains(QStringLiteral("wrote 4 pairs")), qPrintable(more.out + more.err));
        const Json t0more = readJsonFile((dir + QStringLiteral("/src/mcunet-fmnist_shard0of2_acc_table.json")).toStdString());
        QCOMPARE(t0more.size(), std::size_t(4));
        for (std::size_t k = 0; k < 3; ++k) QCOMPARE(t0more[k], t0[k]);
        QCOMPARE(readJsonFile((dir + QStringLiteral("/mcunet-fmnist_shard0of2_card.json")).toStdString())["pairs"].get<int>(), 4);
        Run fewer = runTinyscope(withCount("6"));
        QCOMPARE(fewer.code, 2);
        QVERIFY2(fewer.err.contains(QStringLiteral("holds samples up to number 6 of 8; --count 6 would drop some")), qPrintable(fewer.err));
    }

    void accuracyTableEtaCountsOnlyThisRunsSubnets()
    {
        // A resumed make-accdata: 100 subnets came from the earlier run, 50 took this run 40 s.
        AccuracyTableProgress p;
        p.total = 2000;
        p.done = 150;
        p.resumed = 100;
        p.seconds = 40;
        QCOMPARE(p.etaSeconds(), 40.0 / 50.0 * 1850.0);
        p.done = p.resumed;
        QCOMPARE(p.etaSeconds(), 0.0);
    }

    void shippingAContinuedRunRecordsEveryStage()
    {
        if (runA.isEmpty()) QSKIP("needs the trained run");
        // Stage 2 continues run A; ship-supernet follows --init-from back to it.
        const QString runC = tmp.path() + QStringLiteral("/c");
        Run c = runTinyscope(trainArgs(runC) << QStringLiteral("--init-from") << runA + QStringLiteral("/supernet.pth"));
        QVERIFY2(c.code == 0, qPrintable(c.out + c.err));
        const QString stem = tmp.path() + QStringLiteral("/shipped");
        Run s = runTinyscope({QStringLiteral("ship-supernet"), QStringLiteral("--run"), runC, QStringLiteral("--out"), stem,
                              QStringLiteral("--images"), QStringLiteral("200"), QStringLiteral("--calib-images"), QStringLiteral("64")});
        QVERIFY2(s.code == 0, qPrintable(s.out + s.err));
        const Json card = readJsonFile((stem + QStringLiteral(".json")).toStdString());
        const Json& stages = card["training_stages"];
        QCOMPARE(stages.size(), std::size_t(2));
        QCOMPARE(stages[0]["preset"].get<std::string>(), std::string("tiny"));
        QCOMPARE(stages[1]["preset"].get<std::string>(), std::string("tiny"));
        QCOMPARE(stages[1]["recipe"]["init_from"].get<std::string>(), (runA + QStringLiteral("/supernet.pth")).toStdString());
        QCOMPARE(card["training_seconds"].get<double>(), stages[0]["seconds"].get<double>() + stages[1]["seconds"].get<double>());
        QCOMPARE(card["reproduce"].get<std::string>(),
                 "tinyscope train-supernet --preset tiny --out RUN1 && tinyscope train-supernet --preset tiny --init-from "
                 "RUN1/supernet.pth --out RUN2 && tinyscope ship-supernet --run RUN2 --out " + stem.toStdString());
        QCOMPARE(card["measured"].size(), std::size_t(7));
        QCOMPARE(card["cpu"]["isa"].get<std::vector<std::string>>(), hostCpu().isa);
        QVERIFY(card["cpu"]["kernels"].contains("openblas"));
        for (const Json& m : card["measured"]) QCOMPARE(m["images"].get<int>(), 200);
        QCOMPARE(card["evaluation"]["test_images"].get<int>(), 200);
        // The shipped file is float16 and loads as a float32 supernet of the space.
        Checkpoint shipped = readCheckpoint((stem + QStringLiteral(".pth")).toStdString());
        QCOMPARE(shipped.state_dict.front().second.scalar_type(), at::kHalf);
        Supernet net = Supernet::load(presetSpace("mcunet-fmnist"), (stem + QStringLiteral(".pth")).toStdString());
        QVERIFY(net.parameterBytes() > 1000000);
    }

    // A run of another space, initialised from the shipped supernet (the TinyEngine-trainable
    // space's recipe): ship-supernet takes the run's space, refuses another, and the card's
    // reproduce line names the space and the shipped file the first stage started from.
    void shippingARunOfAnotherSpaceKeepsItsSpaceAndItsStartingWeights()
    {
        const std::string shipped = shippedSupernetPath("mcunet-fmnist");
        if (shipped.empty()) QSKIP("needs models/supernets/mcunet-fmnist.pth");
        const QString run = tmp.path() + QStringLiteral("/te");
        Run t = runTinyscope(trainArgs(run) << QStringLiteral("--space") << QStringLiteral("mcunet-fmnist-te") << QStringLiteral("--init-from")
                                            << QString::fromStdString(shipped));
        QVERIFY2(t.code == 0, qPrintable(t.out + t.err));
        const QString stem = tmp.path() + QStringLiteral("/te-shipped");
        Run wrong = runTinyscope({QStringLiteral("ship-supernet"), QStringLiteral("--run"), run, QStringLiteral("--out"), stem,
                                  QStringLiteral("--space"), QStringLiteral("mcunet-fmnist")});
        QCOMPARE(wrong.code, 2);
        QVERIFY2(wrong.err.contains(QStringLiteral("--space mcunet-fmnist: the run ") + run + QStringLiteral(" trained space 'mcunet-fmnist-te'")),
                 qPrintable(wrong.err));
        QVERIFY(!QFile::exists(stem + QStringLiteral(".pth")));   // nothing written
        Run s = runTinyscope({QStringLiteral("ship-supernet"), QStringLiteral("--run"), run, QStringLiteral("--out"), stem, QStringLiteral("--images"),
                              QStringLiteral("50"), QStringLiteral("--calib-images"), QStringLiteral("16")});
        QVERIFY2(s.code == 0, qPrintable(s.out + s.err));
        const Json card = readJsonFile((stem + QStringLiteral(".json")).toStdString());
        QCOMPARE(card["space"].get<std::string>(), std::string("mcunet-fmnist-te"));
        QCOMPARE(card["reproduce"].get<std::string>(),
                 "tinyscope train-supernet --space mcunet-fmnist-te --preset tiny --init-from models/supernets/mcunet-fmnist.pth --out RUN1 && "
                 "tinyscope ship-supernet --run RUN1 --out " + stem.toStdString());
        QVERIFY(Supernet::load(presetSpace("mcunet-fmnist-te"), (stem + QStringLiteral(".pth")).toStdString()).parameterBytes() > 1000000);
    }

    void teacherLogitCacheKeepsTheTopKAndSpreadsTheRest()
    {
        TeacherLogitCache c(5, 2, 3, 2);
        const float row[5] = {0.1f, 0.5f, 0.05f, 0.3f, 0.05f};
        c.put(1, 2, row);
        QVERIFY(c.filled(1, 2));
        QVERIFY(!c.filled(0, 2));
        const std::vector<float> t = c.targets(1, {2});
        QCOMPARE(t.size(), std::size_t(5));
        QVERIFY(std::abs(t[1] - 0.5f) < 1e-5f);
        QVERIFY(std::abs(t[3] - 0.3f) < 1e-5f);
        for (int k : {0, 2, 4}) QVERIFY(std::abs(t[static_cast<std::size_t>(k)] - 0.2f / 3.0f) < 1e-5f);
        QVERIFY_THROWS_EXCEPTION(InputError, c.targets(0, {2}));
        const QString path = tmp.path() + QStringLiteral("/cache.bin");
        const Json header = {{"teacher", "x.pth"}};
        c.save(path.toStdString(), header);
        TeacherLogitCache d(5, 2, 3, 2);
        QVERIFY(!d.load(path.toStdString(), Json{{"teacher", "y.pth"}}));   // computed from something else
        QVERIFY(d.load(path.toStdString(), header));
        QCOMPARE(d.targets(1, {2}), t);
        writeFileAtomic(path.toStdString(), readFileBytes(path.toStdString()).substr(0, 60));
        TeacherLogitCache e(5, 2, 3, 2);
        QVERIFY_THROWS_EXCEPTION(InputError, e.load(path.toStdString(), header));
    }

    void frozenTeacherFromTheCacheTrainsAsTheTeacherInTheStep()
    {
        if (runA.isEmpty()) QSKIP("needs the trained run (the teacher)");
        // k = 10 of 10 classes: the cache holds the whole distribution, so the first step's loss
        // equals the one with the teacher run inside the step.
        const QString cached = tmp.path() + QStringLiteral("/cached"), inStep = tmp.path() + QStringLiteral("/instep");
        Run a = trainFromTeacher(frozenTeacherRecipe("cached.json", 10), cached, "1");
        QVERIFY2(a.code == 0, qPrintable(a.out + a.err));
        QVERIFY2(a.out.contains(QStringLiteral("teacher-logit cache: 128/128 images")), qPrintable(a.out));
        QVERIFY(QFile::exists(cached + QStringLiteral("/teacher_topk.bin")));
        Run b = trainFromTeacher(frozenTeacherRecipe("instep.json", 0), inStep, "1");
        QVERIFY2(b.code == 0, qPrintable(b.out + b.err));
        QVERIFY(!QFile::exists(inStep + QStringLiteral("/teacher_topk.bin")));
        auto firstLoss = [](const QString& dir) {
            Checkpoint ck = readCheckpoint((dir + QStringLiteral("/supernet.pth")).toStdString());
            return Json::parse(*ck.text("tinyscope_training"))["epoch_loss_sum"].get<double>();
        };
        const double la = firstLoss(cached), lb = firstLoss(inStep);
        QVERIFY2(la > 0.1 && std::abs(la - lb) < 1e-4, qPrintable(QStringLiteral("%1 vs %2").arg(la).arg(lb)));
        // Resuming reads the cache back instead of computing it again, and finishes the run.
        Run c = trainFromTeacher(frozenTeacherRecipe("cached.json", 10), cached, "0");
        QVERIFY2(c.code == 0, qPrintable(c.out + c.err));
        QVERIFY2(!c.out.contains(QStringLiteral("teacher-logit cache")), qPrintable(c.out));
        QVERIFY(c.out.contains(QStringLiteral("training finished")));
        cachedRun = cached;
    }

    void aCopiedTeacherCacheIsReusedAndAFrozenTeacherNeedsASupernet()
    {
        if (cachedRun.isEmpty()) QSKIP("needs the run with a teacher-logit cache");
        // Another run with the same teacher reuses a copied cache and computes only what it lacks:
        // two epochs ask for draws 0 and 1; draw 0's 128 rows are in the copied file.
        const QString longer = tmp.path() + QStringLiteral("/longer");
        QVERIFY(QDir().mkpath(longer));
        QVERIFY(QFile::copy(cachedRun + QStringLiteral("/teacher_topk.bin"), longer + QStringLiteral("/teacher_topk.bin")));
        TrainRecipe two = TrainRecipe::fromJson(readJsonFile(frozenTeacherRecipe("cached.json", 10).toStdString()), "cached.json");
        two.phases[0].epochs = 2;
        writeFileAtomic((tmp.path() + QStringLiteral("/two.json")).toStdString(), two.toJson().dump());
        Run e = trainFromTeacher(tmp.path() + QStringLiteral("/two.json"), longer, "1");
        QVERIFY2(e.code == 0, qPrintable(e.out + e.err));
        QVERIFY2(e.out.contains(QStringLiteral("teacher-logit cache: 128/128 images")), qPrintable(e.out));
        // A frozen teacher needs a supernet to take it from.
        Run d = runTinyscope({QStringLiteral("train-supernet"), QStringLiteral("--recipe"), frozenTeacherRecipe("noinit.json", 10),
                              QStringLiteral("--out"), tmp.path() + QStringLiteral("/noinit")});
        QCOMPARE(d.code, 2);
        QVERIFY2(d.err.contains(QStringLiteral("frozen_teacher needs --init-from")), qPrintable(d.err));
    }

    // Every preset survives its JSON form (a recipe file is a preset written out): the largest-only
    // phases (random_subnets -1) and a checkpoint interval other than the default included.
    void everyPresetRoundTripsThroughItsJson()
    {
        for (const std::string& name : TrainRecipe::presetNames()) {
            const TrainRecipe r = TrainRecipe::preset(name);
            const Json j = r.toJson();
            const TrainRecipe back = TrainRecipe::fromJson(j, name + ".json");
            QCOMPARE(back.toJson().dump(), j.dump());
            QCOMPARE(back.checkpoint_every, r.checkpoint_every);
            for (std::size_t i = 0; i < r.phases.size(); ++i) QCOMPARE(back.phases[i].random_subnets, r.phases[i].random_subnets);
        }
    }

    void badRecipeAndOptionsAreReported()
    {
        const QString recipe = tmp.path() + QStringLiteral("/r.json");
        QFile f(recipe);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"phases\": [{\"name\": \"x\", \"epochs\": 0, \"lr\": 0.1}]}");
        f.close();
        Run r = runTinyscope({QStringLiteral("train-supernet"), QStringLiteral("--recipe"), recipe, QStringLiteral("--out"), tmp.path() + QStringLiteral("/c")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("r.json: phases[0].epochs: must be in 1..100000, got 0")), qPrintable(r.err));
        Run s = runTinyscope({QStringLiteral("make-accdata"), QStringLiteral("--out"), tmp.path(), QStringLiteral("--supernet"), runA + QStringLiteral("/supernet.pth"),
                           QStringLiteral("--shard"), QStringLiteral("3/2")});
        QCOMPARE(s.code, 2);
        QVERIFY(s.err.contains(QStringLiteral("not a valid shard")));
    }
};

QTEST_GUILESS_MAIN(TestTraining)
#include "test_training.moc"
