#include "PredictorCardView.h"

#include "io/Text.h"
#include "nn/predictor/AccuracyPredictor.h"
#include "predict/PredictorCard.h"
#include "space/ArchEncoder.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStringList>
#include <QVBoxLayout>

namespace tinyscope::ui {

namespace {

QString unseenLine(const AccuracyPredictor& p)
{
    const PredictorCard& c = p.card();
    if (c.unseen_features.empty()) return QString();
    ArchEncoder enc(p.space());
    QStringList names;
    for (int f : c.unseen_features) names << QString::fromStdString(featureName(enc, f));
    return QStringLiteral("<br><b>never in its data:</b> %1 (predictions there are extrapolations)").arg(names.join(QStringLiteral(", ")));
}

QString cardText(const AccuracyPredictor& p)
{
    const PredictorCard& c = p.card();
    return QStringLiteral("<b>%1</b><br>space %2 · %3-dim encoding · base accuracy %4 %<br>"
                          "recipe %5: %6 epochs, lr %7 %8, batch %9%10<br>"
                          "data: %11 pairs (%12 train / %13 held out)<br>"
                          "held-out MAE %14 · RMSE %15 points · τ %16%17")
        .arg(p.path().empty() ? QStringLiteral("trained in this session (not saved)") : QString::fromStdString(p.path()).toHtmlEscaped())
        .arg(QString::fromStdString(c.space_name))
        .arg(c.encoder_dims)
        .arg(c.base_accuracy * 100, 0, 'f', 3)
        .arg(QString::fromStdString(c.recipe.name))
        .arg(c.recipe.epochs)
        .arg(c.recipe.learning_rate)
        .arg(QString::fromStdString(c.recipe.schedule))
        .arg(c.recipe.batch_size)
        .arg(c.recipe.ensemble > 1 ? QStringLiteral(", ensemble of %1").arg(c.recipe.ensemble) : QString())
        .arg(QString::fromStdString(groupThousands(static_cast<std::int64_t>(c.data_pairs))))
        .arg(c.train_pairs)
        .arg(c.validation_pairs)
        .arg(c.validation.mae, 0, 'f', 4)
        .arg(c.validation.rmse, 0, 'f', 4)
        .arg(c.validation.kendall_tau, 0, 'f', 4)
        .arg(unseenLine(p));
}

}  // namespace

PredictorCardView::PredictorCardView(QWidget* parent) : QGroupBox(QStringLiteral("Current predictor"), parent)
{
    auto* layout = new QVBoxLayout(this);
    card_ = new QLabel;
    card_->setWordWrap(true);
    card_->setTextFormat(Qt::RichText);
    card_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(card_);
    auto* files = new QHBoxLayout;
    auto* load = new QPushButton(QStringLiteral("Load…"));
    auto* save = new QPushButton(QStringLiteral("Save…"));
    load->setToolTip(QStringLiteral("Load a trained predictor (its card says what it was trained on)"));
    save->setToolTip(QStringLiteral("Save the current predictor with its card"));
    files->addWidget(load);
    files->addWidget(save);
    layout->addLayout(files);
    connect(load, &QPushButton::clicked, this, [this] {
        QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Load predictor"), QString(),
                                                 QStringLiteral("Tinyscope predictor (*.json *.bin)"));
        if (!p.isEmpty()) Q_EMIT loadRequested(p);
    });
    connect(save, &QPushButton::clicked, this, [this] {
        QString p = QFileDialog::getSaveFileName(this, QStringLiteral("Save predictor"), QStringLiteral("predictor.bin"),
                                                 QStringLiteral("Tinyscope predictor (*.bin)"));
        if (!p.isEmpty()) Q_EMIT saveRequested(p);
    });
}

void PredictorCardView::showPredictor(const AccuracyPredictor* predictor)
{
    card_->setText(predictor ? cardText(*predictor) : QStringLiteral("<i>none: train one or load a .bin / .json</i>"));
}

}  // namespace tinyscope::ui
