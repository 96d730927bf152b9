#include "TrainingLayerModel.h"

#include "Palette.h"
#include "Error.h"
#include "graph/PublishedSchemes.h"
#include "graph/SchemeEdit.h"
#include "io/Text.h"
#include "UiText.h"

#include <QBrush>
#include <QColor>
#include <QUndoCommand>
#include <QUndoStack>

#include <cmath>

namespace tinyscope::ui {

namespace {

class SchemeCommand : public QUndoCommand {
public:
    SchemeCommand(TrainingLayerModel* model, ResolvedScheme before, ResolvedScheme after, const QString& text)
        : QUndoCommand(text), model_(model), before_(std::move(before)), after_(std::move(after))
    {
    }
    void redo() override { model_->replaceScheme(after_); }
    void undo() override { model_->replaceScheme(before_); }

private:
    TrainingLayerModel* model_;
    ResolvedScheme before_, after_;
};

QString shapeText(const Shape3& s) { return QStringLiteral("%1×%2×%3").arg(s.c).arg(s.h).arg(s.w); }

QString ratioText(double r) { return QString::fromStdString(formatRatio(r)); }

}  // namespace

TrainingLayerModel::TrainingLayerModel(QObject* parent) : QAbstractTableModel(parent), undo_(new QUndoStack(this)) {}

void TrainingLayerModel::setNetwork(std::shared_ptr<const Network> net, const ResolvedScheme& scheme, AutodiffMode mode,
                                    const QString& obstacle)
{
    beginResetModel();
    net_ = std::move(net);
    obstacle_ = obstacle;
    memory_ = obstacle.isEmpty() ? std::make_unique<TrainingMemoryModel>(*net_) : nullptr;
    scheme_ = scheme;
    mode_ = mode;
    undo_->clear();
    recompute();
    endResetModel();
    Q_EMIT schemeChanged();
}

void TrainingLayerModel::clearNetwork()
{
    beginResetModel();
    net_.reset();
    memory_.reset();
    ledger_.reset();
    findings_.clear();
    rowWarnings_.clear();
    scheme_ = ResolvedScheme();
    obstacle_.clear();
    undo_->clear();
    endResetModel();
    Q_EMIT schemeChanged();
}

void TrainingLayerModel::setMode(AutodiffMode mode)
{
    if (mode == mode_) return;
    mode_ = mode;
    replaceScheme(scheme_);
}

MemoryLedger TrainingLayerModel::fullUpdateLedger() const
{
    return memory_->ledger(SparseScheme::lastLayers(*net_, net_->numBackboneConvs()).resolve(*net_), mode_);
}

void TrainingLayerModel::recompute()
{
    ledger_.reset();
    findings_.clear();
    rowWarnings_.assign(net_ ? static_cast<std::size_t>(net_->numConvs()) : 0, {});
    if (!net_) return;
    if (memory_) ledger_ = memory_->ledger(scheme_, mode_);
    findings_ = kernelCoverageFindings(*net_, scheme_);
    for (const CoverageFinding& f : findings_)
        if (f.conv_index >= 0) rowWarnings_[static_cast<std::size_t>(f.conv_index)].append(QString::fromStdString(f.message));
}

void TrainingLayerModel::replaceScheme(const ResolvedScheme& scheme)
{
    scheme_ = scheme;
    recompute();
    if (rowCount() > 0) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    Q_EMIT schemeChanged();
}

QStringList TrainingLayerModel::warningsOf(int convIndex) const
{
    return convIndex >= 0 && convIndex < static_cast<int>(rowWarnings_.size()) ? rowWarnings_[static_cast<std::size_t>(convIndex)]
                                                                                : QStringList();
}

QStringList TrainingLayerModel::modelWarnings() const
{
    QStringList out;
    for (const CoverageFinding& f : findings_)
        if (f.conv_index < 0) out.append(QString::fromStdString(f.message));
    return out;
}

QString TrainingLayerModel::expressibilityProblem() const
{
    return net_ ? QString::fromStdString(schemeExpressibilityProblem(scheme_, *net_)) : QString();
}

QString TrainingLayerModel::schemeDescription() const
{
    return net_ ? QString::fromStdString(describeScheme(scheme_, *net_)) : QString();
}

bool TrainingLayerModel::editable(int conv) const
{
    return net_ && obstacle_.isEmpty() && conv >= 0 && conv < net_->numBackboneConvs();
}

void TrainingLayerModel::push(const ResolvedScheme& after, const QString& text)
{
    if (sameUpdates(after, scheme_)) return;
    undo_->push(new SchemeCommand(this, scheme_, after, text));
}

bool TrainingLayerModel::edit(int conv, bool bias, double ratio, const QString& text)
{
    if (!editable(conv)) {
        Q_EMIT editRejected(net_ && conv == net_->numConvs() - 1 ? QStringLiteral("The classifier is always updated (bias and weight).")
                                                                  : QStringLiteral("This model cannot be edited."));
        return false;
    }
    ResolvedScheme s = scheme_;
    try {
        setConvUpdate(s, *net_, conv, bias, ratio);
    } catch (const InputError& e) {
        Q_EMIT editRejected(QString::fromUtf8(e.what()));
        return false;
    }
    push(s, text);
    return true;
}

bool TrainingLayerModel::setBias(int conv, bool on)
{
    const double ratio = conv >= 0 && conv < static_cast<int>(scheme_.convs.size()) ? scheme_.conv(conv).ratio : 0.0;
    return edit(conv, on, ratio, QStringLiteral("bias of conv %1 %2").arg(conv).arg(on ? QStringLiteral("on") : QStringLiteral("off")));
}

bool TrainingLayerModel::setRatio(int conv, double ratio)
{
    const bool bias = conv >= 0 && conv < static_cast<int>(scheme_.convs.size()) && scheme_.conv(conv).bias;
    return edit(conv, bias, ratio, QStringLiteral("weight of conv %1 at %2").arg(conv).arg(ratioText(ratio)));
}

void TrainingLayerModel::applyScheme(const ResolvedScheme& scheme, const QString& what)
{
    if (!net_ || !obstacle_.isEmpty()) return;
    push(scheme, what);
}

int TrainingLayerModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !net_ ? 0 : net_->numConvs();
}

int TrainingLayerModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TrainingLayerModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal) return {};
    static const char* names[] = {"#", "layer", "role", "in → out", "kernel", "MACs", "params", "bias", "weight", "extra B", "TinyEngine"};
    static const char* tips[] = {
        "conv index (tiny-training's numbering: 0 = stem, the classifier last)",
        "module path",
        "role in its block",
        "input and output shape, C×H×W",
        "kernel, stride; dw = depthwise",
        "multiply-accumulates",
        "parameters",
        "update this conv's bias (1-bit clamp mask of its output + int32 bias kept for training)",
        "weight-update ratio: share of input channels whose weights are updated (k of C_in)",
        "this conv's analytic extra memory (tiny-training's count, bytes)",
        "TinyEngine: ⚠ when this choice cannot be compiled (hover for why)",
    };
    if (role == Qt::DisplayRole) return QString::fromUtf8(names[section]);
    if (role == Qt::ToolTipRole) return QString::fromUtf8(tips[section]);
    return {};
}

Qt::ItemFlags TrainingLayerModel::flags(const QModelIndex& index) const
{
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (!index.isValid() || !editable(index.row())) return f;
    if (index.column() == Bias) f |= Qt::ItemIsUserCheckable;
    if (index.column() == Weight) f |= Qt::ItemIsEditable;
    return f;
}

QVariant TrainingLayerModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || !net_) return {};
    const int ci = index.row();
    const tinyscope::Layer& c = net_->conv(ci);
    const bool head = ci == net_->numConvs() - 1;
    const ConvUpdate& u = scheme_.conv(ci);
    const int col = index.column();
    if (role == Qt::DisplayRole) {
        switch (col) {
        case Index:
            return ci;
        case Layer:
            return QString::fromStdString(c.name);
        case Role:
            return QString::fromStdString(c.role);
        case Shape:
            return QStringLiteral("%1→%2").arg(shapeText(c.in), shapeText(c.out));
        case Kernel:
            return c.linear ? QStringLiteral("linear")
                            : QStringLiteral("%1×%2 s%3%4").arg(c.kh).arg(c.kw).arg(c.stride_h).arg(c.depthwise() ? QStringLiteral(" dw")
                                                                                                      : c.groups > 1 ? QStringLiteral(" g%1").arg(c.groups)
                                                                                                                     : QString());
        case Macs:
            return thousandsText(c.macs());
        case Params:
            return thousandsText(c.params());
        case Bias:
            return head ? QStringLiteral("always") : QString();
        case Weight:
            if (head) return QStringLiteral("full");
            return u.weight() ? QStringLiteral("%1  (%2/%3)").arg(ratioText(u.ratio)).arg(mode_ == AutodiffMode::Reference ? u.k_compiler : u.k).arg(c.cin)
                              : QStringLiteral("—");
        case Extra:
            if (!ledger_) return QStringLiteral("—");
            return thousandsText(static_cast<std::int64_t>(std::ceil(ledger_->rows[static_cast<std::size_t>(ci)].totalBytes())));
        case Warning:
            return warningsOf(ci).isEmpty() ? QString() : QStringLiteral("⚠");
        }
    }
    if (role == Qt::CheckStateRole && col == Bias && !head) return u.bias ? Qt::Checked : Qt::Unchecked;
    if ((role == Qt::EditRole || role == RatioRole) && col == Weight) return u.ratio;
    if (role == Qt::TextAlignmentRole) {
        if (col == Index || col == Macs || col == Params || col == Extra) return int(Qt::AlignRight | Qt::AlignVCenter);
        if (col == Warning || col == Bias) return int(Qt::AlignCenter);
        return int(Qt::AlignLeft | Qt::AlignVCenter);
    }
    if (role == Qt::ToolTipRole) {
        const QStringList w = warningsOf(ci);
        if (col == Warning && !w.isEmpty()) return QStringLiteral("TinyEngine cannot compile this choice:\n• ") + w.join(QStringLiteral("\n• "));
        if (col == Extra && ledger_) {
            const LedgerRow& r = ledger_->rows[static_cast<std::size_t>(ci)];
            if (head) return QStringLiteral("classifier input kept for its weight gradient: %1 B").arg(thousandsText(r.classifier_input_bytes));
            return QStringLiteral("masks %1 bits, bias %2 B, saved input %3 B, weight %4 B")
                .arg(thousandsText(r.mask_bits), thousandsText(r.bias_bytes), thousandsText(r.saved_input_bytes), thousandsText(r.weight_bytes));
        }
        if (col == Layer) return QString::fromStdString(c.name);   // elided in the table when long
        if (col == Weight && !head) return QStringLiteral("click to choose 0 (frozen), 1/8, 1/4, 1/2 or 1 of the %1 input channels").arg(c.cin);
        return {};
    }
    if (role == Qt::BackgroundRole) {
        if (col == Warning && !warningsOf(ci).isEmpty()) return QBrush(paletteColor("layers.warning"));
        if (u.weight()) return QBrush(paletteColor("layers.weight"));   // weight (and bias) updated
        if (u.bias) return QBrush(paletteColor("layers.bias"));       // bias only
        return {};
    }
    if (role == Qt::ForegroundRole && !u.bias && !u.weight() && col != Warning) return QBrush(paletteColor("text.frozen"));
    return {};
}

bool TrainingLayerModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!index.isValid()) return false;
    if (index.column() == Bias && role == Qt::CheckStateRole)
        return setBias(index.row(), value.toInt() == Qt::Checked);
    if (index.column() == Weight && (role == Qt::EditRole || role == RatioRole)) {
        bool ok = false;
        double r = value.toDouble(&ok);
        if (!ok) {
            try {
                r = parseRatio(value.toString().toStdString(), "weight ratio");
            } catch (const InputError& e) {
                Q_EMIT editRejected(QString::fromUtf8(e.what()));
                return false;
            }
        }
        return setRatio(index.row(), r);
    }
    return false;
}

}  // namespace tinyscope::ui
