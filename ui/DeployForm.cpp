#include "DeployForm.h"

#include "BoardPicker.h"
#include "Palette.h"
#include "workspace/CalibrationData.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

#include <algorithm>

namespace tinyscope::ui {

namespace {

QString extensionOf(DeployFormat f) { return f == DeployFormat::TFLite ? QStringLiteral(".tflite") : QStringLiteral(".onnx"); }

}  // namespace

DeployForm::DeployForm(const QString& stem, const ModelSource& model, QWidget* parent)
    : QWidget(parent), stem_(stem), bnApplies_(model.asSubnet() != nullptr), ownData_(QString::fromLatin1(kZooCalibrationData))
{
    if (const SubnetSource* s = model.asSubnet()) {
        // The space's own calibration data and what its task's images are: the rule the deploy applies.
        ownData_ = QString::fromStdString(ownCalibrationData(s->space));
        expected_ = QString::fromStdString(calibrationExpectation(s->space));
        spaceName_ = QString::fromStdString(s->space.name);
    }
    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    format_ = new QComboBox;
    format_->addItem(QStringLiteral("TFLite, int8 — TensorFlow Lite Micro, TinyEngine, ST Edge AI, Netron"), int(DeployFormat::TFLite));
    format_->addItem(QStringLiteral("ONNX, float32 — ONNX Runtime and everything else"), int(DeployFormat::Onnx));
    form->addRow(QStringLiteral("Format"), format_);
    form->addRow(QStringLiteral("Calibration data"), calibrationDataRow());
    calib_ = new QSpinBox;
    calib_->setRange(1, 100000);
    calib_->setValue(200);
    calib_->setToolTip(QStringLiteral("Images of the calibration data whose activations set the int8 scales and zero points "
                                      "(TFLite only; `tinyscope deploy --calib-images`, default 200)"));
    form->addRow(QStringLiteral("Calibration images"), calib_);
    form->addRow(QStringLiteral("BN images"), bnImagesRow());
    board_ = new BoardPicker(false);
    board_->setBoard(QStringLiteral("stm32f746"));
    board_->setToolTip(QStringLiteral("Each engine's memory figure is checked against this board's SRAM, ours flash against its flash (models/boards)"));
    form->addRow(QStringLiteral("Board"), board_);
    form->addRow(QStringLiteral("Output file"), outputFileRow());
    connect(format_, &QComboBox::currentIndexChanged, this, &DeployForm::followFormat);
    connect(board_, &QComboBox::currentIndexChanged, this, &DeployForm::boardChanged);
}

QHBoxLayout* DeployForm::calibrationDataRow()
{
    data_ = new QComboBox;
    data_->setEditable(true);
    if (!ownData_.isEmpty()) data_->addItem(ownData_);
    if (ownData_ == QStringLiteral("fashion-mnist:holdout")) data_->addItem(QStringLiteral("fashion-mnist:fit"));
    QString tip = QStringLiteral("The images BatchNorm is re-calibrated on and the int8 ranges are calibrated on (never the test "
                                 "split): a dataset name such as fashion-mnist:holdout, or a folder of class sub-folders / IDX files (--calib-data).");
    if (!expected_.isEmpty()) {
        tip += QStringLiteral(" They must be images of %1's task (%2); others are refused.").arg(spaceName_, expected_);
        if (ownData_.isEmpty())
            data_->lineEdit()->setPlaceholderText(QStringLiteral("images of %1's task: %2").arg(spaceName_, expected_));
    }
    data_->setToolTip(tip);
    auto* browse = new QPushButton(QStringLiteral("…"));
    browse->setMaximumWidth(30);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(this, QStringLiteral("Calibration images (class sub-folders or IDX files)"));
        if (!d.isEmpty()) data_->setCurrentText(d);
    });
    auto* row = new QHBoxLayout;
    row->addWidget(data_, 1);
    row->addWidget(browse);
    return row;
}

QHBoxLayout* DeployForm::bnImagesRow()
{
    bn_ = new QSpinBox;
    bn_->setRange(0, 100000);
    bn_->setSpecialValueText(QStringLiteral("0: keep"));
    bn_->setValue(500);
    bn_->setToolTip(QStringLiteral("A subnet's BatchNorm statistics are re-computed on these calibration images before export. The CLI's "
                                   "default is 2,000 (--bn-images); 500 is the dialog's default because it takes a quarter of the time. "
                                   "0 keeps the checkpoint's statistics (--bn-images 0): the ONNX file then computes the supernet's own "
                                   "forward (tinyscope forward); TFLite still calibrates its int8 ranges on the calibration data"));
    bn_->setEnabled(bnApplies_);
    auto* note = new QLabel(bnApplies_ && ownData_.isEmpty() && !spaceName_.isEmpty()
                                ? QStringLiteral("%1 has no images of its own: choose some, or 0 keeps the checkpoint's").arg(spaceName_)
                                : QStringLiteral("BatchNorm re-calibration; 0 keeps the checkpoint's (the CLI uses 2,000)"));
    note->setStyleSheet(QStringLiteral("color: %1").arg(paletteName("text.note")));
    auto* row = new QHBoxLayout;
    row->addWidget(bn_);
    row->addWidget(note, 1);
    return row;
}

QHBoxLayout* DeployForm::outputFileRow()
{
    out_ = new QLineEdit(QDir::homePath() + QStringLiteral("/tinyscope-deploy/") + stem_ + extensionOf(DeployFormat::TFLite));
    browse_ = new QPushButton(QStringLiteral("Browse…"));
    connect(browse_, &QPushButton::clicked, this, [this] {
        const QString filter = format() == DeployFormat::TFLite ? QStringLiteral("TFLite model (*.tflite)") : QStringLiteral("ONNX model (*.onnx)");
        const QString p = QFileDialog::getSaveFileName(this, QStringLiteral("Output file"), out_->text(), filter);
        if (!p.isEmpty()) out_->setText(p);
    });
    auto* row = new QHBoxLayout;
    row->addWidget(out_, 1);
    row->addWidget(browse_);
    return row;
}

void DeployForm::followFormat()
{
    // The extension follows the format; any other name is the user's and is kept.
    QString p = out_->text();
    for (const QString& ext : {QStringLiteral(".tflite"), QStringLiteral(".onnx")})
        if (p.endsWith(ext)) p = p.left(p.size() - ext.size()) + extensionOf(format());
    out_->setText(p);
    calib_->setEnabled(!locked_ && format() == DeployFormat::TFLite);
}

void DeployForm::setFormat(DeployFormat f) { format_->setCurrentIndex(std::max(0, format_->findData(int(f)))); }

DeployFormat DeployForm::format() const { return static_cast<DeployFormat>(format_->currentData().toInt()); }

void DeployForm::setCalibrationImages(int n) { calib_->setValue(n); }

void DeployForm::setCalibrationData(const QString& data) { data_->setCurrentText(data); }

QString DeployForm::calibrationData() const { return data_->currentText().trimmed(); }

void DeployForm::setBnImages(int n) { bn_->setValue(n); }

void DeployForm::setBoard(const QString& name) { board_->setBoard(name); }

QString DeployForm::boardName() const { return board_->boardName(); }

void DeployForm::setOutputFile(const QString& path) { out_->setText(path); }

QString DeployForm::outputFile() const { return out_->text(); }

DeployRequest DeployForm::request(const ModelSource& model) const
{
    DeployRequest rq;
    rq.model = model;
    rq.format = format();
    rq.int8 = rq.format == DeployFormat::TFLite;
    QString out = out_->text().trimmed();
    if (out.startsWith(QStringLiteral("~/"))) out = QDir::homePath() + out.mid(1);
    rq.out = out.toStdString();
    rq.quantize.calib_images = static_cast<std::size_t>(calib_->value());
    rq.quantize.calib_data = calibrationData().toStdString();   // "": the space's own (refused when it has none)
    rq.quantize.bn_images = bnApplies_ ? static_cast<std::size_t>(bn_->value()) : 0;
    rq.quantize.words = {"the Calibration data field", "BN images 0"};
    return rq;
}

void DeployForm::setLocked(bool locked)
{
    locked_ = locked;
    format_->setEnabled(!locked);
    calib_->setEnabled(!locked && format() == DeployFormat::TFLite);
    data_->setEnabled(!locked);
    bn_->setEnabled(!locked && bnApplies_);
    out_->setEnabled(!locked);
    browse_->setEnabled(!locked);
}

}  // namespace tinyscope::ui
