#include "MemoryCards.h"

#include "Palette.h"
#include "TrainingLayerModel.h"

#include "graph/MemoryLedger.h"
#include "io/Text.h"

#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QTextDocumentFragment>
#include <QVBoxLayout>

namespace tinyscope::ui {

namespace {

QString cardKb(std::int64_t bytes, int decimals = 1) { return QStringLiteral("%1 KB").arg(static_cast<double>(bytes) / 1024.0, 0, 'f', decimals); }
QString bytesWithUnit(std::int64_t b) { return QString::fromStdString(groupThousands(b)) + QStringLiteral(" B"); }

QLabel* card()
{
    auto* l = new QLabel;
    l->setTextFormat(Qt::RichText);
    l->setFrameShape(QFrame::StyledPanel);
    l->setStyleSheet(QStringLiteral("QLabel { background: %1; border: 1px solid %2; border-radius: 4px; padding: 4px 8px; }")
                         .arg(paletteName("card.background"), paletteName("card.border")));
    l->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    l->setWordWrap(true);   // narrow windows (1280×720 with the tour dock) wrap the notes
    return l;
}

QString cardHtml(const QString& title, const QString& value, const QString& note, const QString& colour = paletteName("text.strong"))
{
    return QStringLiteral("<div style='color:%5'>%1</div><div style='font-size:15pt; font-weight:600; color:%2'>%3</div>"
                          "<div style='color:%5'>%4</div>")
        .arg(title, colour, value, note, paletteName("text.caption"));
}

}  // namespace

MemoryCards::MemoryCards(QWidget* parent) : QWidget(parent)
{
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    for (QLabel*& c : cards_) {
        c = card();
        row->addWidget(c);
    }
    showLedger(nullptr, 0);
}

void MemoryCards::showLedger(const MemoryLedger* ledger, double budgetKB)
{
    if (!ledger) {
        for (QLabel* c : cards_) {
            c->setText(cardHtml(QStringLiteral("—"), QStringLiteral("—"), QString()));
            c->setToolTip(QString());
        }
        return;
    }
    const MemoryLedger& m = *ledger;
    const std::int64_t budget = static_cast<std::int64_t>(budgetKB * 1024.0);
    const ExtraMemory& e = m.extra;
    cards_[0]->setText(cardHtml(QStringLiteral("Extra memory (tiny-training analytic)"), cardKb(e.total(), 2),
                                QStringLiteral("masks %1 · biases %2 · inputs %3 · weights %4")
                                    .arg(cardKb(e.masks()), cardKb(e.biases), cardKb(e.saved_inputs + e.classifier_input), cardKb(e.weights))));
    cards_[0]->setToolTip(QStringLiteral("%1 (%2 bits)").arg(bytesWithUnit(e.total())).arg(e.totalBits()));
    cards_[1]->setText(cardHtml(QStringLiteral("Training peak SRAM"), cardKb(m.peak_bytes),
                                QStringLiteral("with reordering · %1 without").arg(cardKb(m.peak_bytes_no_reorder)),
                                paletteName(m.peak_bytes > budget ? "status.over" : "text.strong")));
    cards_[1]->setToolTip(QStringLiteral("schedule peak: %1 with operator reordering / in-place update, %2 without")
                              .arg(bytesWithUnit(m.peak_bytes), bytesWithUnit(m.peak_bytes_no_reorder)));
    cards_[2]->setText(cardHtml(QStringLiteral("Inference working set"), cardKb(m.inference_peak_bytes), QStringLiteral("largest set of live forward tensors")));
    cards_[2]->setToolTip(QStringLiteral("%1: the int8 tensors alive at once in the scheduled forward pass (a depthwise conv in place, "
                                         "as TinyEngine runs it; <tt>tinyscope memory</tt>). Not the Design-space panel's "
                                         "\"Peak SRAM (lab rule)\", which is Lab 3's per-block count (<tt>tinyscope cost</tt>) and "
                                         "often larger.")
                              .arg(bytesWithUnit(m.inference_peak_bytes)));
    const std::int64_t total = m.inference_peak_bytes + e.total();
    const bool fits = total <= budget;
    cards_[3]->setText(cardHtml(QStringLiteral("Working set + extra vs %1 KB").arg(budgetKB, 0, 'f', 0), cardKb(total),
                                fits ? QStringLiteral("fits, %1 to spare").arg(cardKb(budget - total))
                                     : QStringLiteral("exceeds the budget by %1").arg(cardKb(total - budget)),
                                paletteName(fits ? "status.fits" : "status.over")));
    cards_[3]->setToolTip(QStringLiteral("%1 + %2 = %3 (the training-budget search's constraint)")
                              .arg(bytesWithUnit(m.inference_peak_bytes), bytesWithUnit(e.total()), bytesWithUnit(total)));
}

QString MemoryCards::text() const
{
    QStringList parts;
    for (const QLabel* c : cards_) parts << QTextDocumentFragment::fromHtml(c->text()).toPlainText().simplified();
    return parts.join(QStringLiteral(" | "));
}

SchemeBanner::SchemeBanner(QWidget* parent) : QWidget(parent)
{
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    label_ = new QLabel;
    label_->setWordWrap(true);
    label_->setTextFormat(Qt::RichText);
    label_->setStyleSheet(QStringLiteral("QLabel { background: %1; border: 1px solid %2; border-radius: 4px; padding: 3px 8px; }")
                              .arg(paletteName("banner.background"), paletteName("banner.border")));
    lay->addWidget(label_);
    hide();
}

void SchemeBanner::showFindings(const TrainingLayerModel& model)
{
    QStringList lines;
    if (model.hasNetwork()) {
        if (!model.obstacle().isEmpty()) lines << QStringLiteral("<b>No training graph:</b> ") + model.obstacle().toHtmlEscaped();
        for (const QString& w : model.modelWarnings())
            if (model.obstacle().isEmpty() || !w.contains(model.obstacle()))   // said above
                lines << QStringLiteral("<b>TinyEngine:</b> ") + w.toHtmlEscaped();
        int rows = 0;
        for (int i = 0; i < model.rowCount(); ++i) rows += !model.warningsOf(i).isEmpty();
        if (rows)
            lines << QStringLiteral("<b>TinyEngine</b> cannot compile the choice on %1 row%2 (⚠ in the table; hover for why).")
                         .arg(rows)
                         .arg(rows == 1 ? QString() : QStringLiteral("s"));
        const QString problem = model.expressibilityProblem();
        if (!problem.isEmpty()) lines << QStringLiteral("<b>Not a tiny-training config</b> (cannot be saved as one): ") + problem.toHtmlEscaped();
    }
    label_->setText(lines.join(QStringLiteral("<br>")));
    setVisible(!lines.isEmpty());
}

QString SchemeBanner::text() const { return isHidden() ? QString() : label_->text(); }

}  // namespace tinyscope::ui
