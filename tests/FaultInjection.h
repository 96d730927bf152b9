#pragma once
// Shared by the suites that run the real tinyscope binary under injected faults: the fault
// selection of tests/faults/FaultInject.c (an LD_PRELOAD library built for the tests only, never
// linked into the product), snapshots of folders, and small, fast inputs (a 24-image dataset,
// a seeded ResNet-8 export).
#include "TestSupport.h"

#include "data/ImageDataset.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <map>
#include <memory>
#include <optional>

namespace tinyscope::test {


// Fault selection for one run (the variables of tests/faults/FaultInject.c).
struct Faults {
    QString path;         // count calls on paths containing this
    QString ops;          // which calls (empty: all the library knows)
    int at = 0;           // the counted call that faults (0: none)
    QString action;       // "kill" or an errno name
    bool noExchange = false;
    int delayMs = 0;
    QString countFile;
};

inline QProcessEnvironment faultEnvironment(const Faults& f)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("LD_PRELOAD"), QStringLiteral(FAULT_INJECT_LIBRARY));
    env.insert(QStringLiteral("FAULT_PATH"), f.path);
    if (!f.ops.isEmpty()) env.insert(QStringLiteral("FAULT_OPS"), f.ops);
    if (f.at > 0) env.insert(QStringLiteral("FAULT_AT"), QString::number(f.at));
    if (!f.action.isEmpty()) env.insert(QStringLiteral("FAULT_ACTION"), f.action);
    if (f.noExchange) env.insert(QStringLiteral("FAULT_NO_EXCHANGE"), QStringLiteral("1"));
    if (f.delayMs > 0) env.insert(QStringLiteral("FAULT_DELAY_MS"), QString::number(f.delayMs));
    if (!f.countFile.isEmpty()) env.insert(QStringLiteral("FAULT_COUNT_FILE"), f.countFile);
    return env;
}

// tinyscope ARGS under the faults: exit code, -2 when killed.
inline CliRun runFaulty(const QStringList& args, const Faults& f)
{
    QProcess p;
    p.setProcessEnvironment(faultEnvironment(f));
    p.start(tinyscopeBinary(), args);
    if (!p.waitForFinished(300000)) {
        p.kill();
        p.waitForFinished();
        return {};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, p.readAllStandardOutput().toStdString(),
            p.readAllStandardError().toStdString()};
}

// How many calls the faults select in a clean run of ARGS (which must succeed); -1 if it fails.
inline int countCalls(const QStringList& args, Faults f, const QString& scratch)
{
    f.at = 0;
    f.countFile = scratch + QStringLiteral("/count.txt");
    const CliRun r = runFaulty(args, f);
    if (r.code != 0) {
        qWarning("%s", r.err.c_str());
        return -1;
    }
    QFile c(f.countFile);
    if (!c.open(QIODevice::ReadOnly)) return -1;
    return c.readAll().trimmed().toInt();
}

// Every entry under `dir` (hidden ones too): file -> bytes, folder -> "<folder>". Missing: {}.
using Snapshot = std::map<QString, QByteArray>;
inline std::optional<Snapshot> snapshot(const QString& dir)
{
    if (!QFileInfo(dir).isDir()) return std::nullopt;
    Snapshot s;
    QDirIterator it(dir, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString p = it.next();
        const QString rel = QDir(dir).relativeFilePath(p);
        if (QFileInfo(p).isDir()) {
            s[rel] = "<folder>";
        } else {
            QFile f(p);
            if (f.open(QIODevice::ReadOnly)) s[rel] = f.readAll();
        }
    }
    return s;
}

inline QString describe(const std::optional<Snapshot>& s)
{
    if (!s) return QStringLiteral("<missing>");
    QStringList names;
    for (const auto& [k, v] : *s) names << k + QStringLiteral(" (") + QString::number(v.size()) + QStringLiteral(" B)");
    return names.join(QStringLiteral(", "));
}

// What an export or a killed one leaves beside the folder or inside it: staging and old folders,
// per-file staging of earlier versions, temporaries.
inline QStringList leftovers(const QString& parent)
{
    QStringList out;
    QDirIterator it(parent, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString name = QFileInfo(it.next()).fileName();
        if (name.contains(QStringLiteral(".tinyscope-")) || name.contains(QStringLiteral(".partial")) || name.contains(QStringLiteral(".tmp-")))
            out << QDir(parent).relativeFilePath(it.filePath());
    }
    return out;
}

inline void writeText(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes);
}

// The first `n` Fashion-MNIST test images as an IDX folder, so make-accdata measures and the
// export calibrates in milliseconds.
inline void writeTinyDataset(const QString& dir, int n)
{
    QDir().mkpath(dir);
    const std::unique_ptr<ImageDataset> src = openDataset("fashion-mnist:test");
    QByteArray im, lb;
    auto be32 = [](QByteArray& b, quint32 v) {
        for (int s = 24; s >= 0; s -= 8) b.append(static_cast<char>((v >> s) & 0xff));
    };
    be32(im, 0x803);
    be32(im, static_cast<quint32>(n));
    be32(im, 28);
    be32(im, 28);
    be32(lb, 0x801);
    be32(lb, static_cast<quint32>(n));
    for (int i = 0; i < n; ++i) {
        const Image img = src->image(static_cast<std::size_t>(i));
        im.append(reinterpret_cast<const char*>(img.pixels.data()), static_cast<int>(img.pixels.size()));
        lb.append(static_cast<char>(src->label(static_cast<std::size_t>(i))));
    }
    writeText(dir + QStringLiteral("/test-images-idx3-ubyte"), im);
    writeText(dir + QStringLiteral("/test-labels-idx1-ubyte"), lb);
}

// A 24-image dataset made once per test process (the export calibrates on it, make-accdata
// measures on it).
inline QString tinyDataset()
{
    static QTemporaryDir dir;
    static const QString path = [] {
        const QString p = dir.path() + QStringLiteral("/idx");
        writeTinyDataset(p, 24);
        return p;
    }();
    return path;
}

// A small export: the zoo's ResNet-8 with seeded (untrained) weights, quantized on 4 images.
// (Its checker findings do not matter here: the export writes them anyway.)
inline QStringList exportArgs(const QString& out, int seed, const QString& name = QStringLiteral("net"))
{
    return {QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("resnet-8"), QStringLiteral("--seed"), QString::number(seed),
            QStringLiteral("--scheme"), QStringLiteral("bias-only:2"), QStringLiteral("--calib-data"), tinyDataset(), QStringLiteral("--calib-images"), QStringLiteral("4"),
            QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--out"), out, QStringLiteral("--name"), name};
}

// The files one export writes (from a clean export into a folder of its own).
inline Snapshot exportedSet(const QString& scratch, int seed, const QString& name = QStringLiteral("net"))
{
    const QString dir = scratch + QStringLiteral("/ref-") + name + QString::number(seed);
    if (!QFileInfo(dir).isDir()) {
        const CliRun r = runTinyscope(exportArgs(dir, seed, name));
        if (r.code != 0) qFatal("reference export failed: %s", r.err.c_str());
    }
    return *snapshot(dir);
}

inline Snapshot merged(Snapshot base, const Snapshot& over)
{
    for (const auto& [k, v] : over) base[k] = v;
    return base;
}

inline QString shortErr(const CliRun& r) { return QString::fromStdString(r.err).trimmed(); }

inline QString shippedSupernet() { return sourceDir() + QStringLiteral("/models/supernets/mcunet-fmnist.pth"); }


}  // namespace tinyscope::test
