#pragma once
// What a guided tour can do to the window (core/tour/Tour.h's vocabulary, docs/TOURS.md), as a table
// of named actions and highlight targets. Each is registered by the part of the window that performs
// or owns it (MainWindow: workspace, panel, subnet-edit; each panel's addTourActions: the rest), so
// TourDriver knows this table and no panel.
#include "io/JsonFile.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <string>
#include <utility>
#include <vector>

class QWidget;

namespace tinyscope::ui {

// What an action may ask of the driver performing it.
class TourRun {
public:
    // For an action that ends later: current() is false once the tour was stopped or replayed
    // (drop the result); finish(true, {}) goes on with the next action, finish(false, reason) fails
    // this one. Both are safe to call after the driver is gone.
    struct Later {
        std::function<bool()> current;
        std::function<void(bool ok, const QString& reason)> finish;
    };

    virtual ~TourRun() = default;
    virtual void keepDialog(QWidget* dialog) = 0;        // closed by "close-dialogs" and when the tour stops
    virtual void status(const QString& what) = 0;        // the tour panel's status line ("running the search …")
    virtual Later later() = 0;                           // before an action returns false
};

class TourActions {
public:
    // Performs one action with its arguments; throws (InputError) when it cannot; returns false when
    // it continues asynchronously (TourRun::later).
    using Action = std::function<bool(const Json& args, TourRun& run)>;
    using Target = std::function<QWidget*()>;   // the widget a highlight names now (nullptr: none)

    void addAction(std::string name, Action perform) { actions_.emplace_back(std::move(name), std::move(perform)); }
    void addTarget(std::string name, Target find) { targets_.emplace_back(std::move(name), std::move(find)); }
    // Called when a tour stops while an action runs: cancel what the action started.
    void addStop(std::function<void()> stop) { stops_.push_back(std::move(stop)); }

    const Action* action(const std::string& name) const
    {
        for (const auto& [n, a] : actions_)
            if (n == name) return &a;
        return nullptr;
    }
    QWidget* target(const QString& name) const
    {
        for (const auto& [n, find] : targets_)
            if (name == QString::fromStdString(n)) return find();
        return nullptr;
    }
    QStringList targetNames() const   // in the order registered
    {
        QStringList names;
        for (const auto& t : targets_) names << QString::fromStdString(t.first);
        return names;
    }
    void stop() const
    {
        for (const auto& s : stops_) s();
    }

private:
    std::vector<std::pair<std::string, Action>> actions_;
    std::vector<std::pair<std::string, Target>> targets_;
    std::vector<std::function<void()>> stops_;
};

}  // namespace tinyscope::ui
