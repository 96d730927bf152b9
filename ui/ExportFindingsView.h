#pragma once
// The TinyEngine checker's findings (TINYENGINE_JSON_SPEC §9, plus the board's fit) as a list:
// severity, rule, where, finding; "ok" when there are none. A view only: the Export dialog plans.
#include "tinyengine/ExportChecker.h"

#include <QTreeWidget>

#include <vector>

namespace tinyscope::ui {

class ExportFindingsView : public QTreeWidget {
    Q_OBJECT
public:
    explicit ExportFindingsView(QWidget* parent = nullptr);

    void showFindings(const std::vector<Finding>& findings);
};

}  // namespace tinyscope::ui
