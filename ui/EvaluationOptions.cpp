#include "EvaluationOptions.h"

#include "nn/OneDnnInfo.h"
#include "workspace/CalibrationData.h"
#include "workspace/Workspace.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>

#include <algorithm>

namespace tinyscope::ui {

namespace {
QPushButton* browseButton()
{
    auto* b = new QPushButton(QStringLiteral("…"));
    b->setToolTip(QStringLiteral("Choose a file"));
    b->setMaximumWidth(30);
    return b;
}
}  // namespace

EvaluationOptions::EvaluationOptions(QWidget* parent) : QWidget(parent)
{
    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->addRow(QStringLiteral("Supernet"), supernetRow());
    form->addRow(QStringLiteral("Data"), dataRow());
    form->addRow(countsRow());
    form->addRow(QStringLiteral("Measured by"), measuredByBox());
}

namespace {
struct Measure {
    const char* label;
    EvalEngine engine;
    EvalDtype dtype;
    bool int8;
};
const Measure kMeasures[] = {
    {"oneDNN fp32", EvalEngine::OneDnn, EvalDtype::Fp32, false},
    {"oneDNN bf16", EvalEngine::OneDnn, EvalDtype::Bf16, false},
    {"LibTorch fp32", EvalEngine::LibTorch, EvalDtype::Fp32, false},
    {"int8, deployed (our PTQ)", EvalEngine::OneDnn, EvalDtype::Fp32, true},
};
constexpr int kInt8Item = 3;
}  // namespace

QWidget* EvaluationOptions::measuredByBox()
{
    measuredBy_ = new QComboBox;
    measuredBy_->setToolTip(QStringLiteral("What computes the subnet's outputs (docs/ONEDNN.md): oneDNN primitives built for the "
                                           "subnet (fp32, or bf16 where the CPU has it), LibTorch, the training path, or the "
                                           "deployed int8 model: our PTQ on 200 calibration images, then Int8Forward's exact "
                                           "arithmetic on oneDNN"));
    for (const Measure& m : kMeasures) measuredBy_->addItem(QString::fromLatin1(m.label));
    // bf16 only on native instructions (as `eval --dtype bf16`): otherwise the item says why.
    if (!oneDnnHasBf16()) {
        auto* model = static_cast<QStandardItemModel*>(measuredBy_->model());
        QStandardItem* bf16 = model->item(1);
        bf16->setEnabled(false);
        bf16->setToolTip(QStringLiteral("needs AVX-512 BF16 or AMX; oneDNN runs %1 on this CPU").arg(QString::fromStdString(oneDnnIsa())));
    }
    return measuredBy_;
}

EvalEngine EvaluationOptions::engine() const { return kMeasures[std::max(0, measuredBy_->currentIndex())].engine; }

EvalDtype EvaluationOptions::dtype() const { return kMeasures[std::max(0, measuredBy_->currentIndex())].dtype; }

bool EvaluationOptions::int8() const { return kMeasures[std::max(0, measuredBy_->currentIndex())].int8; }

void EvaluationOptions::setMeasuredByInt8() { measuredBy_->setCurrentIndex(kInt8Item); }

bool EvaluationOptions::setMeasuredBy(EvalEngine engine, EvalDtype dtype)
{
    for (int i = 0; i < measuredBy_->count(); ++i) {
        const Measure& m = kMeasures[i];
        if (m.int8 || m.engine != engine || m.dtype != dtype) continue;
        const auto* model = static_cast<const QStandardItemModel*>(measuredBy_->model());
        if (!model->item(i)->isEnabled()) return false;
        measuredBy_->setCurrentIndex(i);
        return true;
    }
    return false;
}

QLayout* EvaluationOptions::supernetRow()
{
    supernet_ = new QLineEdit;
    supernet_->setToolTip(QStringLiteral("The supernet checkpoint the subnet is extracted from"));
    supernet_->setPlaceholderText(QStringLiteral("supernet checkpoint (.pth)"));
    auto* browse = browseButton();
    auto* row = new QHBoxLayout;
    row->addWidget(supernet_);
    row->addWidget(browse);
    connect(browse, &QPushButton::clicked, this, [this] {
        QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Supernet checkpoint"), supernet_->text(),
                                                 QStringLiteral("PyTorch checkpoint (*.pth *.pt *.tar);;All files (*)"));
        if (!p.isEmpty()) Q_EMIT supernetChosen(p);
    });
    connect(supernet_, &QLineEdit::editingFinished, this, [this] {
        if (supernet_->text() != shownSupernet_) Q_EMIT supernetChosen(supernet_->text());
    });
    return row;
}

QLayout* EvaluationOptions::dataRow()
{
    data_ = new QComboBox;
    data_->setToolTip(QStringLiteral("The images to evaluate on"));
    data_->setEditable(true);
    data_->addItems({QStringLiteral("fashion-mnist:test"), QStringLiteral("fashion-mnist:holdout")});
    auto* browse = browseButton();
    auto* row = new QHBoxLayout;
    row->addWidget(data_, 1);
    row->addWidget(browse);
    connect(browse, &QPushButton::clicked, this, [this] {
        QString p = QFileDialog::getExistingDirectory(this, QStringLiteral("Dataset folder (class sub-folders or IDX files)"));
        if (!p.isEmpty()) data_->setCurrentText(p);
        Q_EMIT dataChanged();
    });
    connect(data_, &QComboBox::currentTextChanged, this, &EvaluationOptions::dataChanged);
    return row;
}

QLayout* EvaluationOptions::countsRow()
{
    images_ = new QSpinBox;
    images_->setToolTip(QStringLiteral("Test images to evaluate (0: all)"));
    images_->setRange(0, 1000000);
    images_->setSpecialValueText(QStringLiteral("all"));
    images_->setValue(2000);
    calibImages_ = new QSpinBox;
    calibImages_->setRange(0, 100000);
    calibImages_->setSpecialValueText(QStringLiteral("off"));
    calibImages_->setValue(1000);   // the tooltip follows the workspace (showCalibration)
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(QStringLiteral("images")));
    row->addWidget(images_);
    row->addWidget(new QLabel(QStringLiteral("BN calib.")));
    row->addWidget(calibImages_);
    return row;
}

void EvaluationOptions::showWorkspace(const Workspace& w)
{
    shownSupernet_ = QString::fromStdString(w.supernet);
    supernet_->setText(shownSupernet_);
    supernet_->setPlaceholderText(w.hasSupernet() ? QString()
                                                  : QStringLiteral("none for space %1: choose a checkpoint of it").arg(QString::fromStdString(w.space.name)));
    data_->setCurrentText(QString::fromStdString(w.data));
    showCalibration(w);
}

void EvaluationOptions::showCalibration(const Workspace& w)
{
    // The images the evaluator re-calibrates on: the workspace's, else its space's own — what
    // runEvaluation chooses (workspace/CalibrationData.h). Without any, BatchNorm keeps the
    // checkpoint's statistics: the count is off and fixed (the evaluator takes no other images).
    const std::string own = w.calib_data.empty() ? ownCalibrationData(w.space) : w.calib_data;
    const QString space = QString::fromStdString(w.space.name);
    if (own.empty()) {
        if (!calibFixed_) calibBeforeNone_ = calibImages_->value();
        calibFixed_ = true;
        calibImages_->setValue(0);
        calibImages_->setEnabled(false);
        calibImages_->setToolTip(QStringLiteral("Space %1 has no calibration images of its own, so BatchNorm keeps the checkpoint's statistics. "
                                                "`tinyscope eval --calib-data DATASET` re-calibrates it on images of its task (%2)")
                                     .arg(space, QString::fromStdString(calibrationExpectation(w.space))));
        return;
    }
    if (calibFixed_) {
        calibFixed_ = false;
        calibImages_->setEnabled(true);
        calibImages_->setValue(calibBeforeNone_);
    }
    calibImages_->setToolTip(QStringLiteral("BatchNorm re-calibration of the extracted subnet (as once-for-all does) on this many images of %1, "
                                            "the calibration data of space %2 (0: keep the checkpoint's statistics)")
                                 .arg(QString::fromStdString(own), space));
}

QString EvaluationOptions::data() const { return data_->currentText(); }

int EvaluationOptions::images() const { return images_->value(); }

int EvaluationOptions::calibrationImages() const { return calibImages_->value(); }

void EvaluationOptions::setImageCounts(int images, int calibrationImages)
{
    images_->setValue(images);
    if (!calibFixed_) calibImages_->setValue(calibrationImages);
    else calibBeforeNone_ = calibrationImages;   // no calibration images in this workspace: for the next one
}

}  // namespace tinyscope::ui
