// make-accdata killed (SIGKILL from tests/faults/FaultInject.c) before any of its writes resumes
// to the table of an uninterrupted run, byte for byte; a table ahead of its state, as an earlier
// version left it when killed between its two writes, resumes too.
#include "FaultInjection.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/AtomicFolder.h"
#include "io/JsonFile.h"
#include "io/OutputPaths.h"

#include <sys/stat.h>

using namespace tinyscope;
using namespace tinyscope::test;

class TestAccdataFaults : public QObject {
    Q_OBJECT
    QTemporaryDir scratch;

    static QStringList accdataArgs(const QString& out)
    {
        return {QStringLiteral("make-accdata"), QStringLiteral("--supernet"), shippedSupernet(), QStringLiteral("--out"), out,
                QStringLiteral("--count"), QStringLiteral("11"), QStringLiteral("--workers"), QStringLiteral("1"),
                QStringLiteral("--data"), tinyDataset(), QStringLiteral("--calib-images"), QStringLiteral("8")};
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(scratch.isValid());
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed (setup.sh installs it)");
    }

    // make-accdata (11 subnets: saves after 10 and at the end) killed before each write and each
    // rename of its two saves of the state and the table — every state its files pass through:
    // running it again finishes the table, byte for byte the one of an uninterrupted run, and no
    // temporary stays behind.
    void makeAccdataKilledAtAnyWriteResumesToTheSameTable()
    {
        if (!QFileInfo::exists(shippedSupernet())) QSKIP("the shipped supernet is not in models/supernets");
        const QString table = QStringLiteral("/src/mcunet-fmnist_shard0of1_acc_table.json");
        const QString ref = scratch.path() + QStringLiteral("/acc-ref");
        Faults f;
        f.ops = QStringLiteral("write,rename");
        f.path = ref + QStringLiteral("/src");
        QCOMPARE(countCalls(accdataArgs(ref), f, scratch.path()), 8);
        const QByteArray expected = QByteArray::fromStdString(readFileBytes((ref + table).toStdString()));
        const Json rows = Json::parse(expected.toStdString());
        QCOMPARE(rows.size(), std::size_t(11));
        QVERIFY(rows[0][1].get<double>() > 0 && rows[0][1] != rows[1][1]);   // real measurements, not a constant
        for (int n = 1; n <= 8; ++n) {
            QTemporaryDir dir;
            f.path = dir.path() + QStringLiteral("/src");
            f.at = n;
            f.action = QStringLiteral("kill");
            QCOMPARE(runFaulty(accdataArgs(dir.path()), f).code, -2);
            const CliRun again = runTinyscope(accdataArgs(dir.path()));
            QVERIFY2(again.code == 0, qPrintable(QStringLiteral("killed at write %1, then: %2").arg(n).arg(shortErr(again))));
            QVERIFY2(readFileBytes((dir.path() + table).toStdString()) == expected.toStdString(),
                     qPrintable(QStringLiteral("killed at write %1: the resumed table differs").arg(n)));
            QVERIFY2(leftovers(dir.path()).isEmpty(), qPrintable(leftovers(dir.path()).join(QLatin1Char(' '))));
        }
    }

    // A table and state written by an earlier version that was killed between its table write and
    // its state write (the table ahead of the state) resumes too.
    void makeAccdataResumesATableAheadOfItsStateFromAnEarlierVersion()
    {
        if (!QFileInfo::exists(shippedSupernet())) QSKIP("the shipped supernet is not in models/supernets");
        QTemporaryDir dir;
        const QStringList args = accdataArgs(dir.path());
        QCOMPARE(runTinyscope(args).code, 0);
        const std::string table = (dir.path() + QStringLiteral("/src/mcunet-fmnist_shard0of1_acc_table.json")).toStdString();
        const std::string full = readFileBytes(table);
        // The earlier version's files: the state lists 10 samples without results, the table holds 11 rows.
        Json state = readJsonFile(table + ".state.json");
        state.erase("top1");
        state["indices"] = Json::array({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
        writeText(QString::fromStdString(table + ".state.json"), QByteArray::fromStdString(state.dump()));
        const CliRun r = runTinyscope(args);
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.out.find("wrote 11 pairs") != std::string::npos, r.out.c_str());
        QCOMPARE(readFileBytes(table), full);
    }
};

QTEST_GUILESS_MAIN(TestAccdataFaults)
#include "test_accdata_faults.moc"
