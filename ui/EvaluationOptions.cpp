#include "EvaluationOptions.h"

#include "workspace/Workspace.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

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
    calibImages_->setToolTip(QStringLiteral("Held-out images used to re-calibrate batch norm for the extracted subnet (as once-for-all does)"));
    calibImages_->setRange(0, 100000);
    calibImages_->setSpecialValueText(QStringLiteral("off"));
    calibImages_->setValue(1000);
    calibImages_->setToolTip(QStringLiteral("BN re-calibration on Fashion-MNIST holdout images (0: keep the checkpoint's statistics)"));
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
}

QString EvaluationOptions::data() const { return data_->currentText(); }

int EvaluationOptions::images() const { return images_->value(); }

int EvaluationOptions::calibrationImages() const { return calibImages_->value(); }

void EvaluationOptions::setImageCounts(int images, int calibrationImages)
{
    images_->setValue(images);
    calibImages_->setValue(calibrationImages);
}

}  // namespace tinyscope::ui
