#include "DiagramExport.h"

#include "SvgGraphView.h"

#include "viz/GraphvizRenderer.h"

#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>

namespace tinyscope::ui {

QString saveDiagramDialog(QWidget* parent, const std::string& dot, const QString& stem, const QString& suffix)
{
    if (dot.empty()) return {};
    const QString filters = QStringLiteral("SVG (*.svg);;PNG (*.png);;DOT (*.dot *.gv)");
    QString selected = suffix == QLatin1String("png")   ? QStringLiteral("PNG (*.png)")
                       : suffix == QLatin1String("dot") ? QStringLiteral("DOT (*.dot *.gv)")
                                                        : QStringLiteral("SVG (*.svg)");
    const QString path = QFileDialog::getSaveFileName(parent, QStringLiteral("Save block diagram"),
                                                      stem + QLatin1Char('.') + suffix, filters, &selected);
    if (path.isEmpty()) return {};
    try {
        writeDotFile(dot, path.toStdString());
        return path;
    } catch (const std::exception& e) {
        QMessageBox::warning(parent, QStringLiteral("Save block diagram"), QString::fromUtf8(e.what()));
        return {};
    }
}

void offerDiagramSave(SvgGraphView* view, std::function<std::string()> dot, std::function<QString()> stem)
{
    view->setContextMenuPolicy(Qt::CustomContextMenu);
    QObject::connect(view, &QWidget::customContextMenuRequested, view, [view, dot, stem](const QPoint& at) {
        const std::string text = dot();
        QMenu menu(view);
        for (const char* suffix : {"svg", "png", "dot"}) {
            QAction* act = menu.addAction(QStringLiteral("Save diagram as %1…").arg(QString::fromLatin1(suffix).toUpper()));
            act->setEnabled(!text.empty());
            QObject::connect(act, &QAction::triggered, view, [view, text, stem, suffix] {
                saveDiagramDialog(view, text, stem(), QString::fromLatin1(suffix));
            });
        }
        menu.addSeparator();
        menu.addAction(QStringLiteral("Fit"), view, &SvgGraphView::fitAll);
        menu.exec(view->viewport()->mapToGlobal(at));
    });
}

}  // namespace tinyscope::ui
