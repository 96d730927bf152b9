#pragma once
// TFLite's official flatbuffer schema (../shared/reference/runtimes/tflite-micro/tensorflow/compiler/
// mlir/lite/schema/schema.fbs) in a form Debian's flatc reads, for the tests that encode or decode
// .tflite files with flatc (test_tflite_export, test_tflm_runner).
#include <QFile>
#include <QString>
#include <QStringList>

namespace tinyscope::test {

inline QString officialTfliteSchema(const QString& sharedDir)
{
    return sharedDir + QStringLiteral("/reference/runtimes/tflite-micro/tensorflow/compiler/mlir/lite/schema/schema.fbs");
}

// Debian's flatc 2.0.8 predates `(deprecated)` on enum values, union members and tables (three lines
// of the official schema, all about REDUCE_WINDOW): the attribute is dropped there — on lines
// without a ':', so fields keep theirs — in a copy at `outPath`; every name, field id and value
// stays the official one. Returns how many attributes were dropped, or -1 when a file cannot be
// read or written.
inline int writeFlatcReadableSchema(const QString& officialPath, const QString& outPath)
{
    QFile official(officialPath);
    if (!official.open(QIODevice::ReadOnly)) return -1;
    QStringList lines = QString::fromUtf8(official.readAll()).split(QLatin1Char('\n'));
    int dropped = 0;
    for (QString& line : lines) {
        if (line.contains(QLatin1Char(':')) || !line.contains(QStringLiteral(" (deprecated)"))) continue;
        line.replace(QStringLiteral(" (deprecated)"), QString());
        ++dropped;
    }
    QFile out(outPath);
    const QByteArray bytes = lines.join(QLatin1Char('\n')).toUtf8();
    if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size()) return -1;
    return dropped;
}

}  // namespace tinyscope::test
