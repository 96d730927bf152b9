#pragma once
// The Training inspector's layer table: one row per conv/linear of a Network (index, layer,
// role, shape, kernel, MACs, params) with its sparse-update choice — bias on/off, weight-update
// ratio 0/⅛/¼/½/1 — and what that choice costs (the memory ledger's row) and whether TinyEngine
// can compile it (kernel coverage, spec §9.7). Every edit is one command on an undo stack; the
// ledger and findings are recomputed on every change (microseconds), then schemeChanged().
#include "graph/KernelCoverage.h"
#include "graph/MemoryLedger.h"
#include "graph/SparseScheme.h"
#include "zoo/Network.h"

#include <QAbstractTableModel>

#include <memory>
#include <optional>

class QUndoStack;

namespace tinyscope::ui {

class TrainingLayerModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Index, Layer, Role, Shape, Kernel, Macs, Params, Bias, Weight, Extra, Warning, ColumnCount };
    static constexpr int RatioRole = Qt::UserRole + 1;   // the weight ratio as a double

    explicit TrainingLayerModel(QObject* parent = nullptr);

    // A new network and its starting scheme; clears the undo history. When `obstacle` is not
    // empty the network has no int8 training graph: rows are shown read-only, without a ledger.
    void setNetwork(std::shared_ptr<const Network> net, const ResolvedScheme& scheme, AutodiffMode mode,
                    const QString& obstacle = {});
    void clearNetwork();
    bool hasNetwork() const { return net_ != nullptr; }
    bool hasLedger() const { return ledger_.has_value(); }
    QString obstacle() const { return obstacle_; }
    const Network& network() const { return *net_; }
    std::shared_ptr<const Network> networkPtr() const { return net_; }
    const ResolvedScheme& scheme() const { return scheme_; }
    const MemoryLedger& ledger() const { return *ledger_; }
    // The ledger of the model's full update (every layer's bias and all weights) in the current
    // mode: the memory chart's fixed scale. Needs hasLedger().
    MemoryLedger fullUpdateLedger() const;
    const std::vector<CoverageFinding>& findings() const { return findings_; }
    QStringList warningsOf(int convIndex) const;
    QStringList modelWarnings() const;
    AutodiffMode mode() const { return mode_; }
    void setMode(AutodiffMode mode);   // recomputes the ledger; not an edit of the scheme

    // A short description: the published name when the scheme is one, else tiny-training's keys,
    // else why it has none.
    QString schemeDescription() const;
    QString expressibilityProblem() const;   // "" when tiny-training's keys can express it

    // Undoable edits. setBias/setRatio return false (and emit editRejected) for the classifier
    // (always updated), a read-only network, or a ratio that selects no channel.
    bool setBias(int conv, bool on);
    bool setRatio(int conv, double ratio);
    void applyScheme(const ResolvedScheme& scheme, const QString& what);
    QUndoStack* undoStack() const { return undo_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Used by the undo commands: replaces the scheme, recomputes, notifies.
    void replaceScheme(const ResolvedScheme& scheme);

Q_SIGNALS:
    void schemeChanged();
    void editRejected(const QString& why);

private:
    void recompute();
    void push(const ResolvedScheme& after, const QString& text);
    bool edit(int conv, bool bias, double ratio, const QString& text);
    bool editable(int conv) const;

    std::shared_ptr<const Network> net_;
    std::unique_ptr<TrainingMemoryModel> memory_;
    ResolvedScheme scheme_;
    AutodiffMode mode_ = AutodiffMode::Correct;
    std::optional<MemoryLedger> ledger_;
    std::vector<CoverageFinding> findings_;
    std::vector<QStringList> rowWarnings_;
    QString obstacle_;
    QUndoStack* undo_;
};

}  // namespace tinyscope::ui
