#pragma once
// The Search panel's run history: the runs kept between sessions (SearchHistory, a JSON file in the
// user's state folder) as a table — when, algorithm, limits, seed, P × G, the winner's top-1 and
// costs, time — with Re-open, Delete and Export…. It owns the history; the panel re-opens a run.
#include "search/SearchHistory.h"

#include <QWidget>

#include <memory>

class QTableWidget;

namespace tinyscope::ui {

class RunHistoryView : public QWidget {
    Q_OBJECT
public:
    explicit RunHistoryView(QWidget* parent = nullptr);
    ~RunHistoryView() override;

    // Switches to the history at `path`; returns why it could not be read ("" when it could).
    QString setPath(const QString& path);
    const std::vector<SearchRunRecord>& runs() const { return history_->runs(); }
    void add(SearchRunRecord r);   // newest first, saved, selected
    int rows() const;
    void exportTo(const QString& path) const;   // .csv -> one row per run, otherwise JSON; throws on failure

Q_SIGNALS:
    void reopenRequested(int row);      // Re-open or a double click
    void exportRequested(const QString& path);   // Export… once a file was chosen

private:
    void refresh();

    std::unique_ptr<SearchHistory> history_;
    QTableWidget* table_;
};

}  // namespace tinyscope::ui
