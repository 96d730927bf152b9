#include "PredictorRecipeForm.h"

#include "io/DataPaths.h"
#include "nn/predictor/AccuracyPredictor.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

namespace tinyscope::ui {

namespace {
const QString kDatasetKey = QStringLiteral("predictor/dataset");
}

namespace {

// A combo box never narrower than its longest name, at the current font: QComboBox keeps the
// minimum size hint it computed at the font before (presentation mode), its size hint it does not.
class WholeNameCombo : public QComboBox {
public:
    using QComboBox::QComboBox;
    QSize minimumSizeHint() const override { return sizeHint(); }
};

}  // namespace

PredictorRecipeForm::PredictorRecipeForm(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(makeDatasetBox());
    layout->addWidget(makeRecipeBox());
    setRecipe(PredictorRecipe::standard());
}

QWidget* PredictorRecipeForm::makeDatasetBox()
{
    auto* box = new QGroupBox(QStringLiteral("Accuracy dataset"));
    auto* layout = new QVBoxLayout(box);
    auto* pathRow = new QHBoxLayout;
    dataPath_ = new QLineEdit;
    dataPath_->setPlaceholderText(QStringLiteral("folder with src/*_acc_table.json or acc.dict"));
    auto* browse = new QPushButton(QStringLiteral("Browse…"));
    browse->setToolTip(QStringLiteral("Choose the accuracy dataset folder (measured subnet / accuracy pairs)"));
    dataPath_->setToolTip(QStringLiteral("The accuracy dataset: a folder of measured (subnet, top-1) pairs, e.g. from tinyscope make-accdata"));
    pathRow->addWidget(dataPath_, 1);
    pathRow->addWidget(browse);
    layout->addLayout(pathRow);
    dataInfo_ = new QLabel(QStringLiteral("not loaded"));
    dataInfo_->setWordWrap(true);
    layout->addWidget(dataInfo_);
    connect(browse, &QPushButton::clicked, this, [this] {
        QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Accuracy dataset folder"), dataPath_->text());
        if (!dir.isEmpty()) setDatasetPath(dir);
    });
    connect(dataPath_, &QLineEdit::editingFinished, this, [this] { rememberDatasetPath(dataPath_->text()); });
    connect(dataPath_, &QLineEdit::textChanged, this, [this](const QString& path) {
        // The line under the path describes that path's data, or none yet.
        if (path != loadedFrom_) dataInfo_->setText(QStringLiteral("not loaded yet: read by Train or Evaluate"));
    });
    return box;
}

QWidget* PredictorRecipeForm::makeRecipeBox()
{
    auto* box = new QGroupBox(QStringLiteral("Training recipe"));
    auto* form = new QFormLayout(box);
    recipeBox_ = new WholeNameCombo;
    // Short names, so the box fits the column in presentation mode (issue 47); what each sets is in
    // its tooltip and the box's, and in the fields below.
    recipeBox_->addItem(QStringLiteral("Tinyscope default"), QStringLiteral("default"));
    recipeBox_->setItemData(0, QStringLiteral("Tinyscope default: cosine lr 2e-3, batch 128"), Qt::ToolTipRole);
    recipeBox_->addItem(QStringLiteral("Lab 3"), QStringLiteral("lab"));
    recipeBox_->setItemData(1, QStringLiteral("Lab 3: Adam 1e-3 constant, batch 256"), Qt::ToolTipRole);
    recipeBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    epochs_ = new QSpinBox;
    epochs_->setRange(1, 1000);
    lr_ = new QDoubleSpinBox;
    lr_->setDecimals(5);
    lr_->setRange(0.00001, 1.0);
    lr_->setSingleStep(0.0005);
    schedule_ = new QComboBox;
    schedule_->addItems({QStringLiteral("constant"), QStringLiteral("cosine")});
    batch_ = new QSpinBox;
    batch_->setRange(1, 100000);
    seed_ = new QSpinBox;
    seed_->setRange(0, 1000000);
    validation_ = new QDoubleSpinBox;
    validation_->setRange(0.0, 0.9);
    validation_->setSingleStep(0.05);
    ensemble_ = new QSpinBox;
    ensemble_->setRange(1, 16);
    ensemble_->setToolTip(QStringLiteral("Members averaged at prediction: more accurate, slower search"));
    threads_ = new QSpinBox;
    recipeBox_->setToolTip(QStringLiteral("Training recipe preset: fills the fields below. Tinyscope default: cosine lr 2e-3, "
                                          "batch 128; Lab 3: Adam 1e-3 constant, batch 256"));
    epochs_->setToolTip(QStringLiteral("Passes over the training pairs"));
    lr_->setToolTip(QStringLiteral("Learning rate (the peak of the schedule)"));
    schedule_->setToolTip(QStringLiteral("Learning-rate schedule: constant or cosine decay"));
    batch_->setToolTip(QStringLiteral("Pairs per optimizer step"));
    seed_->setToolTip(QStringLiteral("Seed of the initial weights and of the shuffling: the same seed gives the same predictor"));
    validation_->setToolTip(QStringLiteral("Fraction of the pairs held out to measure the predictor (MAE, RMSE, Kendall τ)"));
    threads_->setToolTip(QStringLiteral("Threads used to train"));
    threads_->setRange(1, 64);
    form->addRow(QStringLiteral("Recipe"), recipeBox_);
    form->addRow(QStringLiteral("Epochs"), epochs_);
    form->addRow(QStringLiteral("Learning rate"), lr_);
    form->addRow(QStringLiteral("Schedule"), schedule_);
    form->addRow(QStringLiteral("Batch size"), batch_);
    form->addRow(QStringLiteral("Seed"), seed_);
    form->addRow(QStringLiteral("Validation fraction"), validation_);
    form->addRow(QStringLiteral("Ensemble"), ensemble_);
    form->addRow(QStringLiteral("Threads"), threads_);
    connect(recipeBox_, qOverload<int>(&QComboBox::activated), this, [this] {
        PredictorRecipe r = PredictorRecipe::named(recipeBox_->currentData().toString().toStdString());
        r.seed = static_cast<std::uint64_t>(seed_->value());
        setRecipe(r);
    });
    return box;
}

QString PredictorRecipeForm::datasetPath() const { return dataPath_->text(); }

void PredictorRecipeForm::setDatasetPath(const QString& path)
{
    dataPath_->setText(path);
    rememberDatasetPath(path);
}

bool PredictorRecipeForm::restoreDatasetPath()
{
    const QString path = QSettings().value(kDatasetKey).toString();
    if (path.isEmpty() || !QFileInfo::exists(path)) return false;
    dataPath_->setText(path);
    return true;
}

void PredictorRecipeForm::offerDataOrigin(const AccuracyPredictor* predictor)
{
    if (!predictor || predictor->card().data_origin.empty()) return;
    // Relative origins are relative to the data root (the README's command runs from the
    // repository root with ../shared beside it).
    const QString origin = QString::fromStdString(predictor->card().data_origin);
    const QString path = QDir::isAbsolutePath(origin) ? origin : QDir::cleanPath(QDir(QString::fromStdString(dataRoot())).filePath(origin));
    if (QFileInfo::exists(path)) dataPath_->setText(path);
}

void PredictorRecipeForm::rememberDatasetPath(const QString& path) { QSettings().setValue(kDatasetKey, path); }

void PredictorRecipeForm::setDatasetInfo(const QString& info) { dataInfo_->setText(info); }

PredictorRecipe PredictorRecipeForm::recipe() const
{
    PredictorRecipe r = PredictorRecipe::named(recipeBox_->currentData().toString().toStdString());
    const PredictorRecipe base = r;
    r.epochs = epochs_->value();
    r.learning_rate = lr_->value();
    r.schedule = schedule_->currentText().toStdString();
    r.batch_size = batch_->value();
    r.seed = static_cast<std::uint64_t>(seed_->value());
    r.validation_fraction = validation_->value();
    r.ensemble = ensemble_->value();
    r.threads = threads_->value();
    if (r.epochs != base.epochs || r.learning_rate != base.learning_rate || r.schedule != base.schedule ||
        r.batch_size != base.batch_size || r.ensemble != base.ensemble)
        r.name += "+custom";
    return r;
}

PredictorRecipe PredictorRecipeForm::validatedRecipe() const
{
    PredictorRecipe r = recipe();
    r.validate();
    return r;
}

void PredictorRecipeForm::setRecipe(const PredictorRecipe& r)
{
    std::string base = r.name.substr(0, r.name.find('+'));
    int i = recipeBox_->findData(QString::fromStdString(base));
    if (i >= 0) recipeBox_->setCurrentIndex(i);
    epochs_->setValue(r.epochs);
    lr_->setValue(r.learning_rate);
    schedule_->setCurrentText(QString::fromStdString(r.schedule));
    batch_->setValue(r.batch_size);
    seed_->setValue(static_cast<int>(r.seed));
    validation_->setValue(r.validation_fraction);
    ensemble_->setValue(r.ensemble);
    threads_->setValue(r.threads);
}

int PredictorRecipeForm::epochs() const { return epochs_->value(); }

}  // namespace tinyscope::ui
