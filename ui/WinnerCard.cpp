#include "WinnerCard.h"

#include "FlowLayout.h"
#include "Palette.h"
#include "SubnetDiagramView.h"

#include "io/Text.h"
#include "search/TinyEngineTrainingLimit.h"
#include "search/TrainingMemoryLimit.h"
#include "tinyengine/BoardFit.h"

#include <QDialog>
#include <QEvent>
#include <QLabel>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace tinyscope::ui {

namespace {

// The winner's text is never cut: a wrapped label's height follows its width (layouts in a
// splitter do not ask heightForWidth), so the diagram below gives up room, and past its minimum
// the card scrolls. With the fine-tuning and TinyEngine lines the text runs to six lines in a
// 1280×720 window.
void fitHeight(QLabel* label)
{
    const int h = label->heightForWidth(label->width());
    if (h > 0 && h != label->minimumHeight()) label->setMinimumHeight(h);
}

class FitHeightOnResize : public QObject {
public:
    using QObject::QObject;
    bool eventFilter(QObject* watched, QEvent* e) override
    {
        if (e->type() == QEvent::Resize) fitHeight(static_cast<QLabel*>(watched));
        return false;
    }
};

// Keeps `button` in the top-right corner of the view it sits on.
class CornerOnResize : public QObject {
public:
    CornerOnResize(QWidget* button, QObject* parent) : QObject(parent), button_(button) {}
    bool eventFilter(QObject* watched, QEvent* e) override
    {
        if (e->type() == QEvent::Resize || e->type() == QEvent::Show) {
            const auto* view = static_cast<QWidget*>(watched);
            button_->adjustSize();
            button_->move(std::max(0, view->width() - button_->width() - 6), 6);
            button_->raise();
        }
        return false;
    }

private:
    QWidget* button_;
};

}  // namespace

WinnerCard::WinnerCard(QWidget* parent) : QWidget(parent)
{
    diagram_ = new SubnetDiagramView([this] { return QStringLiteral("%1-winner").arg(QString::fromStdString(space_.name)); });
    diagram_->setMinimumWidth(300);
    diagram_->setToolTip(QStringLiteral("The winner's blocks; “⤢ Full size” opens them in a window of their own; right-click saves the diagram"));
    fullSize_ = new QToolButton(diagram_);
    fullSize_->setText(QStringLiteral("⤢ Full size"));
    fullSize_->setToolTip(QStringLiteral("Open the winner's block diagram in a window of its own, nearly the screen's size"));
    fullSize_->setEnabled(false);
    diagram_->installEventFilter(new CornerOnResize(fullSize_, diagram_));
    connect(fullSize_, &QToolButton::clicked, this, &WinnerCard::openFullDiagram);
    // Text, buttons and diagram in a scroll area: when the text runs long (the fine-tuning and
    // TinyEngine lines, presentation mode) the card scrolls; its text and buttons never overlap
    // (the label's minimum height grew past what the panel could give and the row was drawn over
    // it; issue 47).
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* area = new QScrollArea;
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    auto* inner = new QWidget;
    auto* layout = new QVBoxLayout(inner);
    layout->setContentsMargins(0, 0, 0, 0);
    diagram_->setMinimumHeight(120);   // a diagram one can read; the card scrolls instead
    text_ = new QLabel(QStringLiteral("<i>no search yet</i>"));
    text_->setTextFormat(Qt::RichText);
    text_->setWordWrap(true);
    text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    text_->installEventFilter(new FitHeightOnResize(text_));
    use_ = new QPushButton(QStringLiteral("Use this subnet"));
    use_->setToolTip(QStringLiteral("Select the winner in the Design-space panel; a winner of a TinyEngine search also takes its "
                                    "scheme to the Training inspector (on the design-space subnet)"));
    measure_ = new QPushButton(QStringLiteral("Measure on the supernet"));
    measure_->setToolTip(QStringLiteral("Top-1 of the winner on the workspace's supernet: all its test images, BN re-calibrated "
                                        "on 2,000 holdout images. A workspace without a supernet (Lab 3's VWW) measures on the "
                                        "Fashion-MNIST one, the winner transferred (same blocks) and labelled so"));
    deploy_ = new QPushButton(QStringLiteral("Deploy…"));
    deploy_->setToolTip(QStringLiteral("Write the winner, on the shipped supernet, as an int8 TFLite or float ONNX file and "
                                       "compare its memory on three engines (docs/DEPLOY.md)"));
    for (QPushButton* b : {use_, measure_, deploy_}) b->setEnabled(false);
    layout->addWidget(text_);
    layout->addWidget(wrappingRow({use_, measure_, deploy_}));   // wraps on a 1280×720 screen
    layout->addWidget(diagram_, 1);
    area->setWidget(inner);
    outer->addWidget(area);
    connect(use_, &QPushButton::clicked, this, &WinnerCard::useRequested);
    connect(measure_, &QPushButton::clicked, this, &WinnerCard::measureRequested);
    connect(deploy_, &QPushButton::clicked, this, &WinnerCard::deployRequested);
}

void WinnerCard::showWinner(std::shared_ptr<const SearchResult> result, const DesignSpace& space)
{
    result_ = std::move(result);
    space_ = space;
    diagramError_.clear();
    diagram_->clearDiagram();
    if (hasWinner()) {
        try {
            const SearchCandidate& best = result_->best;
            diagramError_ = diagram_->showSubnet(space_, best.config, CostModel(space_).report(best.config), best.accuracy);
        } catch (const std::exception& e) {
            diagramError_ = QString::fromUtf8(e.what());   // the costs could not be computed
        }
    }
    base_ = winnerText();
    fullSize_->setEnabled(hasWinner() && !diagram_->dot().empty());
    if (fullWindow_ && fullWindow_->isVisible()) drawFullDiagram();
    use_->setEnabled(hasWinner());
    deploy_->setEnabled(hasWinner());
    measure_->setEnabled(hasWinner() || measuring_);
    text_->setText(base_);
    fitHeight(text_);
}

const std::string& WinnerCard::diagramDot() const { return diagram_->dot(); }

void WinnerCard::openFullDiagram()
{
    if (!hasWinner() || diagram_->dot().empty()) return;
    if (!fullWindow_) {
        fullWindow_ = new QDialog(this);
        fullWindow_->setWindowTitle(QStringLiteral("Search winner — block diagram"));
        fullView_ = new SubnetDiagramView([this] { return QStringLiteral("%1-winner").arg(QString::fromStdString(space_.name)); });
        fullView_->setToolTip(QStringLiteral("Wheel zooms, drag pans, double-click fits; right-click saves the diagram"));
        auto* l = new QVBoxLayout(fullWindow_);
        l->setContentsMargins(4, 4, 4, 4);
        l->addWidget(fullView_);
    }
    // Nine tenths of the screen the card is on (a 1280×720 screen: 1152×648).
    const QScreen* s = screen();
    const QRect avail = s ? s->availableGeometry() : QRect(0, 0, 1280, 720);
    fullWindow_->resize(avail.width() * 9 / 10, avail.height() * 9 / 10);
    fullWindow_->move(avail.center() - QPoint(fullWindow_->width() / 2, fullWindow_->height() / 2));
    drawFullDiagram();
    fullWindow_->show();
    fullWindow_->raise();
}

void WinnerCard::drawFullDiagram()
{
    if (!fullView_ || !hasWinner()) return;
    try {
        const SearchCandidate& best = result_->best;
        fullView_->showSubnet(space_, best.config, CostModel(space_).report(best.config), best.accuracy);
    } catch (const std::exception&) {
        fullView_->clearDiagram();   // the card says why (diagramError_)
    }
}

QString WinnerCard::winnerText() const
{
    if (!hasWinner()) return QStringLiteral("<i>no subnet</i>");
    const SearchCandidate& best = result_->best;
    QString text = QStringLiteral("<b>Winner</b>: %1 % predicted top-1 (generation %2)<br>"
                                  "MACs %3 M · peak SRAM (lab rule) %4 KB · params %5 · flash %6 KB")
                       .arg(best.accuracy, 0, 'f', 3)
                       .arg(best.generation)
                       .arg(best.cost.millionMacs(), 0, 'f', 3)
                       .arg(best.cost.peakKB(), 0, 'f', 1)
                       .arg(QString::fromStdString(groupThousands(best.cost.params)))
                       .arg(best.cost.flashKB(), 0, 'f', 1);
    // The SRAM limit under TFLM (search/SramRuntime.h): the figure it bounded, as core reports it.
    if (result_->best_reports.is_object() && result_->best_reports.contains("sram_figure")) {
        const Json& f = result_->best_reports["sram_figure"];
        const auto bytes = f.value("bytes", std::int64_t{0});
        QString parts;
        if (f.contains("head_bytes") && f.contains("tail_bytes"))
            parts = QStringLiteral(" = head %1 + tail %2 B").arg(QString::fromStdString(groupThousands(f["head_bytes"].get<std::int64_t>())),
                                                                 QString::fromStdString(groupThousands(f["tail_bytes"].get<std::int64_t>())));
        text += QStringLiteral("<br>%1: <b>%2 KB</b> (%3 B%4), the figure the SRAM limit (%5 KB) bounds")
                    .arg(QString::fromStdString(f.value("what", std::string("SRAM"))).toHtmlEscaped())
                    .arg(static_cast<double>(bytes) / 1024.0, 0, 'f', 1)
                    .arg(QString::fromStdString(groupThousands(bytes)), parts)
                    .arg(f.value("limit_kb", 0.0), 0, 'g', 6);
    }
    // The fine-tuning limit's report on the winner (TrainingMemoryLimit::report), as core keeps it.
    if (const auto t = TrainingMemoryLimit::reportOf(*result_)) {
        auto kb = [](std::int64_t bytes) { return static_cast<double>(bytes) / 1024.0; };
        text += QStringLiteral("<br>fine-tuning with <tt>%1</tt>: inference working set %2 KB + extra %3 KB = "
                               "<b>%4 KB</b> (budget %5 KB)")
                    .arg(QString::fromStdString(t->pattern).toHtmlEscaped())
                    .arg(kb(t->inference_peak_bytes), 0, 'f', 1)
                    .arg(kb(t->extra_bytes), 0, 'f', 1)
                    .arg(kb(t->total_bytes), 0, 'f', 1)
                    .arg(kb(t->budget_bytes), 0, 'f', 1);
    }
    // The TinyEngine limit's report (TinyEngineTrainingLimit): the scheme the winner trains with on the board.
    if (const auto p = TinyEngineTrainingLimit::reportOf(*result_)) {
        auto kb = [](std::int64_t bytes) { return static_cast<double>(bytes) / 1024.0; };
        const QString board = QString::fromStdString(p->board);
        const std::int64_t device = p->ledger_peak_bytes + kBoardSramMargin;
        {   // every subnet such a search returns is trainable (the limit rejects the others)
            text += QStringLiteral("<br>trains on TinyEngine (%1) with <tt>%2</tt>: inference working set %3 KB + extra %4 KB = "
                                   "<b>%5 KB</b> (budget %6 KB); device SRAM ≈ ledger %7 KB + %8 KB = %9 KB%10; %11 parameters updated")
                        .arg(board.toHtmlEscaped(), QString::fromStdString(p->scheme).toHtmlEscaped())
                        .arg(kb(p->inference_peak_bytes), 0, 'f', 1)
                        .arg(kb(p->extra_bytes), 0, 'f', 1)
                        .arg(kb(p->totalBytes()), 0, 'f', 1)
                        .arg(kb(p->budget_bytes), 0, 'f', 1)
                        .arg(kb(p->ledger_peak_bytes), 0, 'f', 1)
                        .arg(kBoardSramMargin / 1024)
                        .arg(kb(device), 0, 'f', 1)
                        .arg(QStringLiteral(" of %1 KB").arg(kb(p->board_sram_bytes), 0, 'f', 0))
                        .arg(QString::fromStdString(groupThousands(p->updated_parameters)));
        }
    }
    if (!diagramError_.isEmpty()) text += QStringLiteral("<br><i>%1</i>").arg(diagramError_.toHtmlEscaped());
    if (!result_->warnings.empty()) {
        QStringList lines;
        for (const std::string& w : result_->warnings) lines << QString::fromStdString(w).toHtmlEscaped();
        text += QStringLiteral("<br><span style='color:%1'>⚠ %2</span>").arg(paletteName("status.warn"), lines.join(QStringLiteral("<br>⚠ ")));
    }
    return text;
}

void WinnerCard::setMeasurement(const WinnerMeasurement& m, bool measuring, const QString& progress)
{
    measuring_ = measuring;
    measure_->setText(measuring ? QStringLiteral("Cancel measuring") : QStringLiteral("Measure on the supernet"));
    measure_->setEnabled(measuring || hasWinner());
    QString line;
    if (measuring) {
        line = QStringLiteral("<br><i>%1</i>").arg(progress.toHtmlEscaped());
    } else if (!m.measured_by.empty() && hasWinner() && m.search_space == space_.name && m.searched == result_->best.config) {
        line = QStringLiteral("<br><b>measured %1 %</b> top-1 on %2 test images (supernet of %3%4 at %5 px%6)")
                   .arg(m.measured, 0, 'f', 2)
                   .arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(m.evaluation.images))))
                   .arg(m.transferred ? QStringLiteral("the same blocks in ") : QString())
                   .arg(QString::fromStdString(m.supernet_space))
                   .arg(m.measured_config.image_size)
                   .arg(m.transferred ? QStringLiteral("; another task than the predictor's: compare rankings, not the numbers")
                                      : QString());
    }
    text_->setText(base_ + line);
    fitHeight(text_);
}

}  // namespace tinyscope::ui
