// Slow tier (ctest -L slow; tests/README.md): the accuracy predictor trained on the lab's 40,000
// pairs (10,000 held out, the lab's split) reaches the targets of docs/SEARCH.md with the default
// recipe and beats the lab's recipe. Two trainings of 10 epochs: 25-40 s of CPU each on the
// 2-core machine. The default tier runs the same code on 4,000 pairs (test_predictor:
// bothRecipesTrainEveryEpochAndLearn).
#include "TestSupport.h"

#include "nn/predictor/AccuracyPredictor.h"
#include "predict/PredictionMetrics.h"
#include "space/SpacePresets.h"

#include <cmath>

using namespace tinyscope;

class SlowPredictorTargets : public QObject {
    Q_OBJECT
    DesignSpace space = presetSpace("mcunet-vww");

private Q_SLOTS:
    void defaultRecipeMeetsTheTargetsAndBeatsTheLabRecipe()
    {
        REQUIRE_SHARED();
        AccuracyDataset data = AccuracyDataset::load(test::sharedPath("reference/mcunet-vww/acc_datasets"), space);
        // Fixed split: Python's random.shuffle after random.seed(0), last 10,000 held out.
        AccuracyPredictor ours(space);
        int epochs = 0;
        TrainingCallbacks cb;
        cb.onEpoch = [&](const EpochRecord& e, int) { epochs = e.epoch; };
        ours.train(data, PredictorRecipe::standard(), cb);
        QCOMPARE(epochs, 10);
        const PredictionMetrics m = ours.card().validation;
        qInfo("default recipe: MAE %.4f RMSE %.4f r %.4f tau %.4f, %.1f s", m.mae, m.rmse, m.pearson, m.kendall_tau,
              ours.card().training_seconds);
        QCOMPARE(m.count, std::size_t(10000));
        QVERIFY2(m.mae <= 0.165, qPrintable(QString::number(m.mae)));
        QVERIFY2(m.kendall_tau >= 0.928, qPrintable(QString::number(m.kendall_tau)));
        QVERIFY2(m.rmse <= 0.208, qPrintable(QString::number(m.rmse)));
        // The card's numbers are what the predictor gives on that split.
        const PredictionMetrics again = ours.evaluate(data, ours.splitOf(data).validation);
        QVERIFY(std::fabs(again.mae - m.mae) < 1e-9 && std::fabs(again.kendall_tau - m.kendall_tau) < 1e-12);
        QCOMPARE(ours.card().base_accuracy, 0.9025509749960894);
        QCOMPARE(ours.card().unseen_features, std::vector<int>{7});

        // The lab's recipe on the same split: with its constant learning rate the final epoch lands
        // anywhere in 0.16-0.23 MAE depending on float rounding (docs/SEARCH.md, "Reproducibility
        // across CPUs"). The fixed-order products make the rounding the same on every x86-64 CPU,
        // so both results are exact figures here (docs/SEARCH.md's recipe table).
        AccuracyPredictor lab(space);
        lab.train(data, PredictorRecipe::lab());
        const PredictionMetrics l = lab.card().validation;
        qInfo("lab recipe:     MAE %.4f RMSE %.4f r %.4f tau %.4f, %.1f s", l.mae, l.rmse, l.pearson, l.kendall_tau,
              lab.card().training_seconds);
        QVERIFY2(l.mae <= 0.25 && l.kendall_tau >= 0.922, qPrintable(QStringLiteral("%1 %2").arg(l.mae).arg(l.kendall_tau)));
        QVERIFY(m.mae < l.mae);
        QVERIFY(m.kendall_tau > l.kendall_tau);
        QVERIFY(l.mae < 0.25 * 4.3);   // far better than no model (predicting the mean)
        QVERIFY2(std::fabs(m.mae - 0.1530) < 5e-5 && std::fabs(m.kendall_tau - 0.9303) < 5e-5,
                 qPrintable(QStringLiteral("default recipe on every x86-64 CPU: MAE 0.1530, tau 0.9303; got %1 %2").arg(m.mae).arg(m.kendall_tau)));
        QVERIFY2(std::fabs(l.mae - 0.1801) < 5e-5 && std::fabs(l.kendall_tau - 0.9265) < 5e-5,
                 qPrintable(QStringLiteral("lab recipe on every x86-64 CPU: MAE 0.1801, tau 0.9265; got %1 %2").arg(l.mae).arg(l.kendall_tau)));
    }
};

QTEST_GUILESS_MAIN(SlowPredictorTargets)
#include "slow_predictor_targets.moc"
