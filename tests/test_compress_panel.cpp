// The Compress panel's Deploy buttons (issue 50): a run of "Prune and measure" or "Prune channels"
// keeps its subnet (the folder prune --out writes, under the user's state folder), and Deploy… opens
// the Deploy dialog on it — for channel pruning the narrower network, whose costs the dialog states.
// Offscreen, the smallest subnet of the shipped supernet, 40 test images, no fine-tuning.
#include "TestSupport.h"

#include "AppState.h"
#include "CompressPanel.h"
#include "DeployDialog.h"

#include "cost/CostModel.h"
#include "data/ImageDataset.h"
#include "space/ArchSampler.h"
#include "workspace/ShippedModels.h"
#include "zoo/SubnetNetwork.h"

#include <QFileInfo>
#include <QPushButton>
#include <QTemporaryDir>

using namespace tinyscope;
using namespace tinyscope::ui;

class TestCompressPanel : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(tmp.isValid());
        qputenv("XDG_STATE_HOME", (tmp.path() + QStringLiteral("/state")).toLocal8Bit());   // runs go here, not to the user's
        if (shippedSupernetPath().empty()) QSKIP("the shipped supernet models/supernets/mcunet-fmnist.pth is absent");
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
    }

    void deployTakesTheSubnetTheLastRunKept()
    {
        AppState state;
        const SubnetConfig min = configByName(state.space(), "min");
        state.setSubnet(min);
        CompressPanel panel(&state);
        panel.setImageCounts(40, 100);
        panel.setTraining(0, 1000);
        QVERIFY(!panel.deploySaved(true));   // nothing saved yet: said, no dialog
        QVERIFY(panel.savedFolder(true).startsWith(tmp.path()));

        QVERIFY(panel.pruneChannels());
        QVERIFY(panel.waitForIdle(300000));
        QVERIFY2(QFileInfo::exists(panel.savedFolder(true) + QStringLiteral("/subnet.pth")), qPrintable(panel.resultText()));
        DeployDialog* d = panel.deploySaved(true);
        QVERIFY(d);
        const SubnetSource* s = d->model().asSubnet();
        QVERIFY(s && s->own_weights && !s->channels.empty());
        QVERIFY(d->model().network().params() < networkFromSubnet(state.space(), min).params());
        QCOMPARE(d->model().network().params(), CostModel::summary(s->layout()).params);
        d->close();

        panel.setUniformSparsity(0.5);
        QVERIFY(panel.pruneAndMeasure());   // reads the layers first
        QVERIFY(panel.waitForIdle(300000));
        QVERIFY(panel.pruneAndMeasure());
        QVERIFY(panel.waitForIdle(300000));
        DeployDialog* p = panel.deploySaved(false);
        QVERIFY2(p, qPrintable(panel.resultText()));
        QVERIFY(p->model().asSubnet()->own_weights && p->model().asSubnet()->channels.empty());
        p->close();
    }
};

QTEST_MAIN(TestCompressPanel)
#include "test_compress_panel.moc"
