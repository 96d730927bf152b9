#include "ExportFindingsView.h"

#include "Palette.h"

#include <QHeaderView>

namespace tinyscope::ui {

ExportFindingsView::ExportFindingsView(QWidget* parent) : QTreeWidget(parent)
{
    setColumnCount(4);
    setHeaderLabels({QStringLiteral("severity"), QStringLiteral("rule"), QStringLiteral("where"), QStringLiteral("finding")});
    setRootIsDecorated(false);
    setWordWrap(true);
    header()->setStretchLastSection(true);
    setMinimumHeight(160);
}

void ExportFindingsView::showFindings(const std::vector<Finding>& findings)
{
    clear();
    for (const Finding& f : findings) {
        auto* item = new QTreeWidgetItem({f.error() ? QStringLiteral("error") : QStringLiteral("warning"), QString::fromStdString(f.spec + " " + f.rule),
                                          QString::fromStdString(f.where), QString::fromStdString(f.message)});
        item->setForeground(0, paletteColor(f.error() ? "status.error" : "status.finding"));
        item->setToolTip(3, QString::fromStdString(f.message));
        addTopLevelItem(item);
    }
    if (findings.empty())
        addTopLevelItem(new QTreeWidgetItem({QStringLiteral("ok"), QString(), QString(), QStringLiteral("no findings: TinyEngine's code generator covers every op of this graph")}));
    resizeColumnToContents(0);
    resizeColumnToContents(1);
    resizeColumnToContents(2);
}

}  // namespace tinyscope::ui
