// Two tinyscope exports into one folder at once (renames slowed down by tests/faults/FaultInject.c
// to widen the race): with the same name and with different names, every export succeeds and the
// folder holds complete sets. Exports into one parent folder take turns on its lock.
#include "FaultInjection.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/AtomicFolder.h"
#include "io/JsonFile.h"
#include "io/OutputPaths.h"

#include <sys/stat.h>

using namespace tinyscope;
using namespace tinyscope::test;

class TestExportConcurrency : public QObject {
    Q_OBJECT
    QTemporaryDir scratch;

    void concurrentExports(bool sameName)
    {
        QTemporaryDir parent;
        const QString out = parent.path() + QStringLiteral("/out");
        const QString first = sameName ? QStringLiteral("net") : QStringLiteral("x"), second = sameName ? QStringLiteral("net") : QStringLiteral("y");
        const Snapshot a = exportedSet(scratch.path(), 1, first), b = exportedSet(scratch.path(), 2, second);
        Faults slow;
        slow.path = parent.path();
        slow.ops = QStringLiteral("rename,renameat,renameat2");
        slow.delayMs = 20;
        for (int round = 0; round < 10; ++round) {
            QVERIFY(QDir(out).removeRecursively());
            std::vector<std::unique_ptr<QProcess>> ps;
            for (int k = 0; k < 2; ++k) {
                auto p = std::make_unique<QProcess>();
                p->setProcessEnvironment(faultEnvironment(slow));
                p->start(tinyscopeBinary(), exportArgs(out, 1 + k, k ? second : first));
                ps.push_back(std::move(p));
            }
            for (auto& p : ps) {
                QVERIFY(p->waitForFinished(300000));
                QVERIFY2(p->exitStatus() == QProcess::NormalExit && p->exitCode() == 0,
                         qPrintable(QStringLiteral("round %1: %2").arg(round).arg(QString::fromUtf8(p->readAllStandardError()))));
            }
            const std::optional<Snapshot> now = snapshot(out);
            // One name: one complete set. Two: both sets, scale.json of the one that finished last.
            QVERIFY2(now == merged(a, b) || now == merged(b, a), qPrintable(QStringLiteral("round %1: %2").arg(round).arg(describe(now))));
            QVERIFY(leftovers(parent.path()).isEmpty());
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(scratch.isValid());
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed (setup.sh installs it)");
    }

    // Two exports into one folder at once, renames slowed down, 10 rounds with the same name and
    // 10 with different names: every export succeeds and the folder holds complete sets.
    void concurrentExportsOfOneNameAllSucceed() { concurrentExports(true); }
    void concurrentExportsOfTwoNamesAllSucceed() { concurrentExports(false); }

};

QTEST_GUILESS_MAIN(TestExportConcurrency)
#include "test_export_concurrency.moc"
