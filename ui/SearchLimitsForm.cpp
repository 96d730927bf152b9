#include "SearchLimitsForm.h"

#include "AppState.h"
#include "Palette.h"

#include "Error.h"
#include "io/Text.h"
#include "search/Feasibility.h"
#include "search/TrainingMemoryLimit.h"
#include "workspace/Workspace.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QSlider>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tinyscope::ui {

namespace {
constexpr int kSliderSteps = 1000;
}

struct SearchLimitsForm::LimitRow {
    std::shared_ptr<const ConstraintQuantity> quantity;
    QCheckBox* on = nullptr;
    QSlider* slider = nullptr;
    QDoubleSpinBox* spin = nullptr;
    double lo = 0, hi = 1;   // slider range: least and greatest value in the space

    int toSlider(double v) const
    {
        return static_cast<int>(std::lround(std::clamp((v - lo) / (hi - lo), 0.0, 1.0) * kSliderSteps));
    }
    double fromSlider(int s) const { return lo + (hi - lo) * s / kSliderSteps; }
};

SearchLimitsForm::SearchLimitsForm(AppState* state, QWidget* parent) : QWidget(parent), state_(state)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(buildLimits());
    layout->addWidget(buildTrainingLimit());
    syncRanges();
    setLimit("params", 1000000, false);
    setLimit("KBFlash", 1000, false);
    applyWorkspaceLimits();
    connect(state_, &AppState::spaceChanged, this, [this] {
        syncRanges();
        applyWorkspaceLimits();
    });
}

SearchLimitsForm::~SearchLimitsForm() = default;

QWidget* SearchLimitsForm::buildLimits()
{
    auto* box = new QGroupBox(QStringLiteral("Limits"));
    auto* grid = new QGridLayout(box);
    int row = 0;
    for (const auto& q : Constraints::builtinQuantities()) {
        auto r = std::make_unique<LimitRow>();
        r->quantity = q;
        QString unit = QString::fromStdString(q->unit);
        r->on = new QCheckBox(QString::fromStdString(q->label));
        r->on->setToolTip(QStringLiteral("limit key %1").arg(QString::fromStdString(q->key)));
        r->spin = new QDoubleSpinBox;
        r->spin->setDecimals(q->key == "params" ? 0 : (q->key == "millionMACs" ? 2 : 1));
        r->spin->setSuffix(unit.isEmpty() ? QString() : QLatin1Char(' ') + unit);
        r->spin->setMinimumWidth(110);
        r->spin->setToolTip(QStringLiteral("Upper limit on %1: every subnet the search returns stays at or below it").arg(QString::fromStdString(q->label)));
        r->slider = new QSlider(Qt::Horizontal);
        r->slider->setRange(0, kSliderSteps);
        r->slider->setToolTip(QStringLiteral("Drag over the space's range of %1 (live mode re-runs the search as you drag)").arg(QString::fromStdString(q->label)));
        grid->addWidget(r->on, row, 0);
        grid->addWidget(r->spin, row, 1);
        grid->addWidget(r->slider, row + 1, 0, 1, 2);
        row += 2;
        LimitRow* raw = r.get();
        connect(r->spin, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this, raw](double v) {
            QSignalBlocker b(raw->slider);
            raw->slider->setValue(raw->toSlider(v));
            onEdited(false);
        });
        connect(r->slider, &QSlider::valueChanged, this, [this, raw](int s) {
            QSignalBlocker b(raw->spin);
            raw->spin->setValue(raw->fromSlider(s));
            onEdited(raw->slider->isSliderDown());
        });
        connect(r->slider, &QSlider::sliderReleased, this, [this] { onEdited(false); });
        connect(r->on, &QCheckBox::toggled, this, [this, raw](bool on) {
            raw->spin->setEnabled(on);
            raw->slider->setEnabled(on);
            onEdited(false);
        });
        limits_.push_back(std::move(r));
    }
    return box;
}

QWidget* SearchLimitsForm::buildTrainingLimit()
{
    trainBox_ = new QGroupBox(QStringLiteral("Fine-tuning memory on the device"));
    trainBox_->setCheckable(true);
    trainBox_->setChecked(false);
    trainBox_->setToolTip(QStringLiteral("inference peak + extra memory of sparse-update training with the pattern "
                                         "(docs/TRAINING_INSPECTOR.md), limit key %1")
                              .arg(QString::fromLatin1(TrainingMemoryLimit::kKey)));
    auto* form = new QFormLayout(trainBox_);
    trainBudget_ = new QDoubleSpinBox;
    trainBudget_->setRange(1, 100000);
    trainBudget_->setDecimals(1);
    trainBudget_->setSingleStep(8);
    trainBudget_->setSuffix(QStringLiteral(" KB"));
    trainBudget_->setValue(320);
    trainBudget_->setToolTip(QStringLiteral("SRAM available for fine-tuning on the device: inference working set + the pattern's extra memory must fit"));
    trainPattern_ = new QLineEdit(QStringLiteral("bias-only:12"));
    trainPattern_->setToolTip(QStringLiteral("bias-only[:N] | last:K | full | pw1:K@R[,R…] | classifier, joined by +\n"
                                             "e.g. bias-only:12+pw1:3@1/4"));
    trainNote_ = new QLabel;
    trainNote_->setWordWrap(true);
    trainNote_->setTextFormat(Qt::RichText);
    form->addRow(QStringLiteral("Budget"), trainBudget_);
    form->addRow(QStringLiteral("Scheme pattern"), trainPattern_);
    form->addRow(trainNote_);
    connect(trainBox_, &QGroupBox::toggled, this, [this] { onEdited(false); });
    connect(trainBudget_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this] { onEdited(false); });
    connect(trainPattern_, &QLineEdit::textChanged, this, [this] {
        checkTrainingPattern();
        onEdited(false);
    });
    checkTrainingPattern();
    return trainBox_;
}

void SearchLimitsForm::onEdited(bool fromDrag)
{
    if (!restoring_) Q_EMIT edited(fromDrag);
}

void SearchLimitsForm::checkTrainingPattern()
{
    try {
        TrainingSchemePattern::parse(trainPattern_->text().toStdString());
        trainNote_->setText(QStringLiteral("<span style='color:%1'>inference peak + extra memory of the pattern ≤ budget</span>")
                                .arg(paletteName("text.note")));
    } catch (const std::exception& e) {
        trainNote_->setText(QStringLiteral("<span style='color:%1'>%2</span>")
                                .arg(paletteName("search.error"), QString::fromUtf8(e.what()).toHtmlEscaped()));
    }
}

void SearchLimitsForm::setTrainingLimit(double kb, const QString& pattern, bool enabled)
{
    restoring_ = true;
    trainBudget_->setValue(kb);
    trainPattern_->setText(pattern);
    trainBox_->setChecked(enabled);
    restoring_ = false;
    checkTrainingPattern();
}

void SearchLimitsForm::setConstraints(const Constraints& c, const QString& trainingPattern)
{
    for (auto& lr : limits_) {
        const Limit* l = c.find(lr->quantity->key);
        setLimit(lr->quantity->key, l ? l->max : lr->spin->value(), l != nullptr);
    }
    const Limit* t = c.find(TrainingMemoryLimit::kKey);
    setTrainingLimit(t ? t->max : trainBudget_->value(), t ? trainingPattern : trainPattern_->text(), t != nullptr);
}

void SearchLimitsForm::syncRanges()
{
    // The slider spans what the space can reach; the spin box goes beyond, so an impossible
    // limit can be typed and is explained.
    restoring_ = true;
    for (auto& r : limits_) {
        QuantityRange range = quantityRange(state_->space(), *r->quantity);
        r->lo = range.least;
        r->hi = std::max(range.greatest, range.least * 1.01);
        const double v = r->spin->value();
        r->spin->setRange(r->quantity->key == "params" ? 1000 : 1, r->hi * 2);
        r->spin->setSingleStep(r->quantity->key == "params" ? 10000 : (r->quantity->key == "millionMACs" ? 1 : 5));
        r->spin->setValue(v);
        r->slider->setValue(r->toSlider(v));
        r->slider->setToolTip(QStringLiteral("%1 to %2 %3 in this space")
                                  .arg(QString::fromStdString(formatQuantity(r->lo)), QString::fromStdString(formatQuantity(r->hi)),
                                       QString::fromStdString(r->quantity->unit)));
    }
    restoring_ = false;
}

void SearchLimitsForm::applyWorkspaceLimits()
{
    // Limits of one space rarely mean anything in another (VWW's 250 KB is more than the whole
    // Fashion-MNIST space needs): a workspace brings its own starting limits.
    for (const auto& [key, value] : state_->workspace().search_limits) setLimit(key, value, true);
}

void SearchLimitsForm::setLimit(const std::string& key, double value, bool enabled)
{
    for (auto& r : limits_) {
        if (r->quantity->key != key) continue;
        restoring_ = true;
        r->spin->setValue(value);
        r->on->setChecked(enabled);
        r->spin->setEnabled(enabled);
        r->slider->setEnabled(enabled);
        restoring_ = false;
        return;
    }
    throw InputError("unknown constraint '" + key + "'");
}

Constraints SearchLimitsForm::constraints() const
{
    Constraints c;
    for (const auto& r : limits_)
        if (r->on->isChecked()) c.set(r->quantity, r->spin->value());
    if (trainBox_->isChecked()) {
        // After the cheap limits, so they reject a draw before its training memory is priced.
        const std::string pattern = trainPattern_->text().toStdString();
        const std::string key = state_->space().name + '\n' + pattern;
        if (!trainLimit_ || key != trainLimitKey_) {
            trainLimit_ = std::make_shared<TrainingMemoryLimit>(state_->space(), pattern);   // InputError on a bad pattern
            trainLimitKey_ = key;
        }
        c.set(trainLimit_->quantity(), trainBudget_->value());
    }
    return c;
}

}  // namespace tinyscope::ui
