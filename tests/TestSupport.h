#pragma once
// Shared by the test suites: where ../shared/reference and the built tinyscope binary are.
#include <QDir>
#include <QFileInfo>
#include <QString>
#include <QtTest>

#include <string>

namespace tinyscope::test {

inline QString sharedDir() { return QStringLiteral(TINYSCOPE_SHARED_DIR); }
inline std::string sharedPath(const char* relative) { return (sharedDir() + QLatin1Char('/') + QLatin1String(relative)).toStdString(); }
inline bool haveShared() { return QFileInfo::exists(sharedDir() + QStringLiteral("/reference")); }
inline QString tinyscopeBinary() { return QStringLiteral(TINYSCOPE_BINARY); }
inline QString sourceDir() { return QStringLiteral(TINYSCOPE_SOURCE_DIR); }

}  // namespace tinyscope::test

// Reference data lives beside the repository (../shared); CI always has it.
#define REQUIRE_SHARED()                                                                                  \
    do {                                                                                                  \
        if (!tinyscope::test::haveShared())                                                               \
            QSKIP(qPrintable(QStringLiteral("reference data not found at %1 (../shared next to the repository)") \
                                 .arg(tinyscope::test::sharedDir())));                                    \
    } while (0)
