#include "TrainingGraphFile.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>

namespace tinyscope::ui {

QString companionParams(const QString& graphPath)
{
    const QFileInfo g(graphPath);
    QString stem = g.completeBaseName();
    if (stem.endsWith(QStringLiteral("-graph"))) stem.chop(6);
    for (const QString& name : {stem + QStringLiteral("-params.pkl"), QStringLiteral("full-int8-params.pkl")}) {
        const QString p = g.dir().filePath(name);
        if (QFileInfo::exists(p)) return p;
    }
    return {};
}

QString companionScales(const QString& graphPath)
{
    const QFileInfo g(graphPath);
    QString stem = g.completeBaseName();
    if (stem.endsWith(QStringLiteral("-graph"))) stem.chop(6);
    for (const QString& name : {stem + QStringLiteral("-scale.json"), QStringLiteral("scale.json")}) {
        const QString p = g.dir().filePath(name);
        if (QFileInfo::exists(p)) return p;
    }
    return {};
}

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
