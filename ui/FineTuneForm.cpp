#include "FineTuneForm.h"

#include "FlowLayout.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QToolButton>

namespace tinyscope::ui {

namespace {

constexpr double kQasLr = 0.075;    // tiny-training's bs256_lr with QAS
constexpr double kPlainLr = 0.1;    // and without

QSpinBox* imageCount(int value, const QString& tip)
{
    auto* s = new QSpinBox;
    s->setRange(0, 10000000);
    s->setSingleStep(500);
    s->setGroupSeparatorShown(true);
    s->setSpecialValueText(QStringLiteral("all"));
    s->setValue(value);
    s->setToolTip(tip);
    return s;
}

}  // namespace

FineTuneForm::FineTuneForm(QWidget* parent) : QWidget(parent)
{
    data_ = new QComboBox;
    data_->setEditable(true);
    data_->addItem(QStringLiteral("fashion-mnist"));
    data_->setMinimumContentsLength(14);
    data_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    data_->setToolTip(QStringLiteral("fashion-mnist: Debian's dataset-fashion-mnist (train split to train, test split for top-1); "
                                     "or a folder of class sub-folders (its train/ and test/ or val/, else every 5th image held out)"));
    auto* browse = new QToolButton;
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(QStringLiteral("An image folder: class/*.png|jpg"));
    epochs_ = new QSpinBox;
    epochs_->setRange(1, 10000);
    epochs_->setValue(3);
    epochs_->setToolTip(QStringLiteral("Epochs (tiny-training runs 50; warm-up is at most a tenth of the run)"));
    train_ = imageCount(2000, QStringLiteral("Training images: the first N after a seeded shuffle (0 = the whole split)"));
    test_ = imageCount(1000, QStringLiteral("Test images for top-1 (0 = the whole split)"));
    qas_ = new QCheckBox(QStringLiteral("QAS"));
    qas_->setChecked(true);
    qas_->setToolTip(QStringLiteral("Quantization-aware scaling of the gradients (tiny-training's sgd_scale); off: plain SGD"));
    lr_ = new QDoubleSpinBox;
    lr_->setDecimals(4);
    lr_->setRange(0.0001, 100);
    lr_->setSingleStep(0.005);
    lr_->setValue(kQasLr);
    lr_->setToolTip(QStringLiteral("Learning rate per batch 256 (tiny-training's bs256_lr): 0.075 with QAS, 0.1 without, "
                                   "following the QAS box until you edit it"));
    // Each label stays with its field; the fields wrap on a narrow tab (1280×720 screens).
    auto* flow = new FlowLayout(this, 12, 4);
    flow->setContentsMargins(0, 0, 0, 0);
    const QList<QList<QPair<QString, QWidget*>>> groups = {
        {{QStringLiteral("Data"), data_}, {QString(), browse}},  {{QStringLiteral("Epochs"), epochs_}},
        {{QStringLiteral("Train images"), train_}},             {{QStringLiteral("Test images"), test_}},
        {{QString(), qas_}, {QStringLiteral("lr / 256"), lr_}}};
    for (const auto& group : groups) {
        auto* box = new QWidget;
        auto* row = new QHBoxLayout(box);
        row->setContentsMargins(0, 0, 0, 0);
        row->setSpacing(4);
        for (const auto& [label, w] : group) {
            if (!label.isEmpty()) row->addWidget(new QLabel(label));
            row->addWidget(w);
        }
        flow->addWidget(box);
    }
    connect(browse, &QToolButton::clicked, this, &FineTuneForm::browse);
    connect(qas_, &QCheckBox::toggled, this, [this](bool on) {
        if (!lrEdited_) {
            settingLr_ = true;
            lr_->setValue(on ? kQasLr : kPlainLr);
            settingLr_ = false;
        }
        Q_EMIT changed();
    });
    connect(lr_, &QDoubleSpinBox::valueChanged, this, [this] {
        if (!settingLr_) lrEdited_ = true;
        Q_EMIT changed();
    });
    connect(data_, &QComboBox::currentTextChanged, this, &FineTuneForm::changed);
    for (QSpinBox* s : {epochs_, train_, test_}) connect(s, &QSpinBox::valueChanged, this, &FineTuneForm::changed);
}

QString FineTuneForm::data() const { return data_->currentText().trimmed(); }

void FineTuneForm::setData(const QString& data) { data_->setCurrentText(data); }

void FineTuneForm::setEpochs(int epochs) { epochs_->setValue(epochs); }

void FineTuneForm::setImages(int train, int test)
{
    train_->setValue(train);
    test_->setValue(test);
}

void FineTuneForm::setQas(bool on) { qas_->setChecked(on); }

void FineTuneForm::setLr(double bs256Lr)
{
    lr_->setValue(bs256Lr);
    lrEdited_ = true;
}

double FineTuneForm::lr() const { return lr_->value(); }

FineTuneRecipe FineTuneForm::recipe(FineTuneRecipe base) const
{
    base.epochs = epochs_->value();
    base.train_images = static_cast<std::size_t>(train_->value());
    base.test_images = static_cast<std::size_t>(test_->value());
    base.qas = qas_->isChecked();
    base.bs256_lr = lr_->value();
    return base;
}

void FineTuneForm::browse()
{
    const QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Image folder (class/*.png|jpg)"));
    if (!dir.isEmpty()) setData(dir);
}

}  // namespace tinyscope::ui
