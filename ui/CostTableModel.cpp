#include "CostTableModel.h"

#include "Palette.h"
#include "io/Text.h"

#include <QBrush>
#include <QColor>

namespace tinyscope::ui {

namespace {
QString shapeWithoutBatch(const std::vector<int>& s)
{
    QStringList parts;
    for (std::size_t i = 1; i < s.size(); ++i) parts << QString::number(s[i]);
    return parts.join(QStringLiteral("×"));
}

// The peak term a module belongs to: its block's, or the stem / head term.
std::string termNameOf(const LayerCost& l)
{
    if (l.block >= 0) return "blocks." + std::to_string(l.block);
    if (l.name.rfind("first_conv", 0) == 0) return "first_conv";
    if (l.name.rfind("feature_mix_layer", 0) == 0) return "feature_mix_layer";
    return "classifier";
}
}  // namespace

void CostTableModel::setReport(const CostReport& report, bool convOnly)
{
    beginResetModel();
    rows_.clear();
    for (const LayerCost& l : report.layers) {
        if (convOnly && l.type != "Conv2d" && l.type != "Linear") continue;
        Row r;
        r.layer = l;
        const std::string term = termNameOf(l);
        for (const PeakTerm& t : report.peak_terms)
            if (t.name == term) r.peakTerm = t.elements;
        r.peak = term == report.peak_layer;
        rows_.push_back(std::move(r));
    }
    endResetModel();
}

int CostTableModel::peakRow() const
{
    for (std::size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].peak) return static_cast<int>(i);
    return -1;
}

QVariant CostTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid()) return {};
    const Row& r = rows_[static_cast<std::size_t>(index.row())];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Index: return index.row();
        case Name: return QString::fromStdString(r.layer.name);
        case Type: return QString::fromStdString(r.layer.type);
        case Input: return shapeWithoutBatch(r.layer.input_shape);
        case Output: return shapeWithoutBatch(r.layer.output_shape);
        case Macs: return QString::fromStdString(groupThousands(r.layer.macs));
        case Params: return QString::fromStdString(groupThousands(r.layer.params));
        case PeakTermKB: return r.peakTerm < 0 ? QVariant() : QVariant(QString::number(r.peakTerm / 1024.0, 'f', 1));
        }
    } else if (role == Qt::TextAlignmentRole) {
        if (index.column() >= Macs || index.column() == Index) return int(Qt::AlignRight | Qt::AlignVCenter);
    } else if (role == Qt::BackgroundRole && r.peak) {
        return QBrush(paletteColor("table.peak"));
    } else if (role == Qt::ToolTipRole) {
        // The whole name (the table elides long ones in the middle), then a conv's geometry.
        const QString name = index.column() == Name ? QString::fromStdString(r.layer.name) : QString();
        if (r.layer.type != "Conv2d") return name.isEmpty() ? QVariant() : QVariant(name);
        return (name.isEmpty() ? QString() : name + QLatin1Char('\n')) +
               QStringLiteral("%1×%1 conv, stride %2, groups %3%4")
                   .arg(r.layer.kernel)
                   .arg(r.layer.stride)
                   .arg(r.layer.groups)
                   .arg(r.layer.bias ? QStringLiteral(", bias") : QString());
    }
    return {};
}

QVariant CostTableModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"#", "layer", "type", "input", "output", "MACs", "params", "block peak (KB)"};
    return QString::fromLatin1(names[section]);
}

}  // namespace tinyscope::ui
