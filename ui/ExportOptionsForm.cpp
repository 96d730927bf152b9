#include "ExportOptionsForm.h"

#include "BoardPicker.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>

namespace tinyscope::ui {

ExportOptionsForm::ExportOptionsForm(const ExportRequest& request, QWidget* parent) : QWidget(parent)
{
    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    folder_ = new QLineEdit;
    auto* browse = new QPushButton(QStringLiteral("Browse…"));
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(folder_, 1);
    folderRow->addWidget(browse);
    form->addRow(QStringLiteral("Output folder"), folderRow);
    name_ = new QLineEdit(QString::fromStdString(request.name));
    name_->setPlaceholderText(QStringLiteral("model name"));
    form->addRow(QStringLiteral("File stem"), name_);
    form_ = new QComboBox;
    form_->addItem(QStringLiteral("reference — MIT's compiler's graph (+ identity slices)"), int(ExportForm::Reference));
    form_->addItem(QStringLiteral("faithful — gradients summed at residual adds"), int(ExportForm::Faithful));
    setForm(request.form);
    form->addRow(QStringLiteral("Form"), form_);
    board_ = new BoardPicker(true);
    board_->setToolTip(QStringLiteral("Check the export's SRAM (memory ledger), flash (parameters), DSP and FPU needs against a board (models/boards)"));
    form->addRow(QStringLiteral("Board"), board_);
    strict_ = new QCheckBox(QStringLiteral("Refuse to write when the checker finds errors"));
    strict_->setChecked(true);
    form->addRow(QString(), strict_);

    connect(browse, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(this, QStringLiteral("Output folder"), folder_->text());
        if (!d.isEmpty()) folder_->setText(d);
    });
    connect(form_, &QComboBox::currentIndexChanged, this, &ExportOptionsForm::planChanged);
    connect(board_, &QComboBox::currentIndexChanged, this, [this] {
        Q_EMIT planChanged();
        Q_EMIT boardChanged();
    });
    connect(name_, &QLineEdit::textEdited, this, &ExportOptionsForm::planChanged);
    connect(folder_, &QLineEdit::textChanged, this, &ExportOptionsForm::folderChanged);
}

void ExportOptionsForm::setOutputFolder(const QString& dir) { folder_->setText(dir); }

QString ExportOptionsForm::outputFolder() const { return folder_->text(); }

void ExportOptionsForm::setForm(ExportForm form) { form_->setCurrentIndex(form == ExportForm::Reference ? 0 : 1); }

ExportForm ExportOptionsForm::form() const { return static_cast<ExportForm>(form_->currentData().toInt()); }

QString ExportOptionsForm::name() const { return name_->text().trimmed(); }

void ExportOptionsForm::setBoard(const QString& name) { board_->setBoard(name); }

QString ExportOptionsForm::boardName() const { return board_->boardName(); }

std::optional<BoardProfile> ExportOptionsForm::board() const { return board_->board(); }

bool ExportOptionsForm::strict() const { return strict_->isChecked(); }

void ExportOptionsForm::setLocked(bool locked)
{
    form_->setEnabled(!locked);
    board_->setEnabled(!locked);
    name_->setEnabled(!locked);
}

}  // namespace tinyscope::ui
