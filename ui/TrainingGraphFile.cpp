#include "TrainingGraphFile.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>

namespace tinyscope::ui {

namespace {

// "<stem>-<suffix>" beside the graph (stem without "-graph"), else `fallback` there; "" if neither exists.
QString beside(const QString& graphPath, const QString& suffix, const QString& fallback)
{
    const QFileInfo g(graphPath);
    QString stem = g.completeBaseName();
    if (stem.endsWith(QStringLiteral("-graph"))) stem.chop(6);
    for (const QString& name : {stem + suffix, fallback}) {
        const QString p = g.dir().filePath(name);
        if (QFileInfo::exists(p)) return p;
    }
    return {};
}

}  // namespace

QString companionParams(const QString& graphPath) { return beside(graphPath, QStringLiteral("-params.pkl"), QStringLiteral("full-int8-params.pkl")); }

QString companionScales(const QString& graphPath) { return beside(graphPath, QStringLiteral("-scale.json"), QStringLiteral("scale.json")); }

ImportedGraph openTrainingGraph(const QString& graphPath)
{
    return importTinyEngineGraph(graphPath.toStdString(), companionParams(graphPath).toStdString(), companionScales(graphPath).toStdString());
}

std::optional<ImportedGraph> openTrainingGraphDialog(QWidget* parent)
{
    const QString path = QFileDialog::getOpenFileName(parent, QStringLiteral("Open training graph"), QString(),
                                                      QStringLiteral("TinyEngine training graph (*-graph.json *.json)"));
    if (path.isEmpty()) return std::nullopt;
    try {
        return openTrainingGraph(path);
    } catch (const std::exception& e) {
        QMessageBox::warning(parent, QStringLiteral("Open training graph"), QString::fromUtf8(e.what()));
        return std::nullopt;
    }
}

}  // namespace tinyscope::ui
