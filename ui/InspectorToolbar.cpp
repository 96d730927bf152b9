#include "InspectorToolbar.h"

#include "ToolButton.h"

#include "graph/Autodiff.h"

#include <QAction>
#include <QComboBox>
#include <QSignalBlocker>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace tinyscope::ui {

namespace {

QSpinBox* spin(const QString& tip)
{
    auto* s = new QSpinBox;
    s->setToolTip(tip);
    return s;
}

}  // namespace

InspectorToolbar::InspectorToolbar(QAction* undo, QAction* redo, QWidget* parent) : QWidget(parent)
{
    auto* rows = new QVBoxLayout(this);
    rows->setContentsMargins(0, 0, 0, 0);
    rows->addLayout(modelRow(undo, redo));
    rows->addLayout(schemeRow());
}

QHBoxLayout* InspectorToolbar::modelRow(QAction* undo, QAction* redo)
{
    modelBox = new QComboBox;
    modelBox->setToolTip(QStringLiteral("A zoo model, or the subnet selected in the Design-space panel"));
    // Not as wide as its longest entry: the toolbar fits 1280×720 beside the tour dock.
    modelBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    modelBox->setMinimumContentsLength(16);
    modeBox = new QComboBox;
    modeBox->addItem(QStringLiteral("correct"), int(AutodiffMode::Correct));
    modeBox->addItem(QStringLiteral("reference (MIT)"), int(AutodiffMode::Reference));
    modeBox->setToolTip(QStringLiteral("correct: gradients reaching a tensor twice are summed;\n"
                                       "reference: MIT's compiler (skip-path gradients lost, zero point ignored, dummy leaves)"));
    budget = new QDoubleSpinBox;
    budget->setRange(1, 100000);
    budget->setDecimals(0);
    budget->setSuffix(QStringLiteral(" KB"));
    budget->setValue(320);   // STM32F746; the panel sets the workspace board's SRAM
    budget->setToolTip(QStringLiteral("SRAM of the device; the chart's dashed line. It starts from the workspace board's SRAM "
                                      "(Board, in the Design-space panel) and follows it"));
    auto* undoB = new QToolButton;
    undoB->setDefaultAction(undo);
    auto* redoB = new QToolButton;
    redoB->setDefaultAction(redo);
    auto* open = new QPushButton(QStringLiteral("Open scheme…"));
    open->setToolTip(QStringLiteral("Load a tiny-training config (backward_config in .json/.yaml)"));
    auto* save = new QPushButton(QStringLiteral("Save scheme…"));
    save->setToolTip(QStringLiteral("Save as a tiny-training config (.json with lists, .yaml with dash strings)"));
    auto* exportB = toolButton(QStringLiteral("Export"));
    exportB->setPopupMode(QToolButton::InstantPopup);
    exportB->setToolTip(QStringLiteral("Export the scheme's training graph (TinyEngine JSON), the ledger (CSV) or the graph (SVG / PNG / DOT)"));
    auto* menu = new QMenu(exportB);
    for (const QString& suffix : {QStringLiteral("svg"), QStringLiteral("png"), QStringLiteral("dot")})
        menu->addAction(QStringLiteral("Graph as %1…").arg(suffix.toUpper()), this, [this, suffix] { Q_EMIT exportGraphRequested(suffix); });
    menu->addSeparator();
    menu->addAction(QStringLiteral("Ledger as CSV…"), this, [this] { Q_EMIT exportCsvRequested(); });
    menu->addSeparator();
    menu->addAction(QStringLiteral("TinyEngine graph + params…"), this, [this] { Q_EMIT exportTinyEngineRequested(); });
    menu->addAction(QStringLiteral("Use int8 weights (params .pkl)…"), this, [this] { Q_EMIT weightsRequested(); });
    exportB->setMenu(menu);

    auto* row1 = new QHBoxLayout;
    row1->addWidget(new QLabel(QStringLiteral("Model")));
    row1->addWidget(modelBox);
    row1->addSpacing(8);
    row1->addWidget(new QLabel(QStringLiteral("Autodiff")));
    row1->addWidget(modeBox);
    row1->addSpacing(8);
    row1->addWidget(new QLabel(QStringLiteral("SRAM budget")));
    row1->addWidget(budget);
    row1->addStretch(1);
    for (QWidget* w : {static_cast<QWidget*>(undoB), static_cast<QWidget*>(redoB)}) row1->addWidget(w);
    row1->addSpacing(8);
    for (QWidget* w : {static_cast<QWidget*>(open), static_cast<QWidget*>(save), static_cast<QWidget*>(exportB)}) row1->addWidget(w);
    connect(open, &QPushButton::clicked, this, [this] { Q_EMIT schemeFileRequested(false); });
    connect(save, &QPushButton::clicked, this, [this] { Q_EMIT schemeFileRequested(true); });
    return row1;
}

QHBoxLayout* InspectorToolbar::schemeRow()
{
    publishedBox = new QComboBox;
    publishedBox->setMinimumWidth(150);
    publishedBox->setToolTip(QStringLiteral("The schemes MIT published for this model (named after their analytic extra memory)"));
    loadPublished = toolButton(QStringLiteral("Load"));
    loadPublished->setToolTip(QStringLiteral("Apply the published scheme chosen beside"));
    biasN = spin(QStringLiteral("Update the biases of the last N backbone convs (and nothing else but the classifier)"));
    auto* biasApply = toolButton(QStringLiteral("Apply"));
    biasApply->setToolTip(QStringLiteral("Update only the biases of the last N convs"));
    lastK = spin(QStringLiteral("Update the last k backbone convs fully: bias and every weight"));
    auto* lastApply = toolButton(QStringLiteral("Apply"));
    lastApply->setToolTip(QStringLiteral("Update weights and biases of the last k convs"));
    auto* reset = toolButton(QStringLiteral("Reset"), QStringLiteral("Update only the classifier"));
    scheme = new QLabel;
    scheme->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A scheme of many layers is a long line: it is cut at the panel's edge (whole text in the
    // tooltip) rather than widening the window.
    scheme->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    scheme->setMinimumWidth(120);
    auto* row2 = new QHBoxLayout;
    row2->addWidget(new QLabel(QStringLiteral("Published")));
    row2->addWidget(publishedBox);
    row2->addWidget(loadPublished);
    row2->addSpacing(12);
    row2->addWidget(new QLabel(QStringLiteral("Bias-only, last")));
    row2->addWidget(biasN);
    row2->addWidget(biasApply);
    row2->addSpacing(12);
    row2->addWidget(new QLabel(QStringLiteral("Last")));
    row2->addWidget(lastK);
    row2->addWidget(new QLabel(QStringLiteral("layers")));
    row2->addWidget(lastApply);
    row2->addSpacing(12);
    row2->addWidget(reset);
    row2->addSpacing(12);
    row2->addWidget(scheme, 1);
    connect(loadPublished, &QToolButton::clicked, this, [this] { Q_EMIT loadPublishedRequested(publishedBox->currentText()); });
    connect(biasApply, &QToolButton::clicked, this, [this] { Q_EMIT biasOnlyRequested(biasN->value()); });
    connect(lastApply, &QToolButton::clicked, this, [this] { Q_EMIT lastLayersRequested(lastK->value()); });
    connect(reset, &QToolButton::clicked, this, &InspectorToolbar::resetRequested);
    return row2;
}

void InspectorToolbar::showModel(const QStringList& published, int backboneConvs, int biasOnlyN)
{
    publishedBox->clear();
    publishedBox->addItems(published);
    publishedBox->setEnabled(!published.isEmpty());
    loadPublished->setEnabled(!published.isEmpty());
    if (published.isEmpty()) publishedBox->addItem(QStringLiteral("none for this model"));
    biasN->setRange(0, backboneConvs);
    lastK->setRange(0, backboneConvs);
    biasN->setValue(biasOnlyN);
    lastK->setValue(std::min(4, backboneConvs));
}

void InspectorToolbar::showScheme(const QString& description)
{
    scheme->setText(description.isEmpty() ? QString() : QStringLiteral("<b>Scheme:</b> %1").arg(description.toHtmlEscaped()));
    scheme->setToolTip(description);
}

void InspectorToolbar::pickModel(const QString& data, const QString& fallbackData, const QString& fallbackText)
{
    const QSignalBlocker quiet(modelBox);
    int i = data.isEmpty() ? -1 : modelBox->findData(data);
    if (i < 0) {
        i = modelBox->findData(fallbackData);
        if (i < 0) {
            modelBox->addItem(QString(), fallbackData);
            i = modelBox->count() - 1;
        }
        modelBox->setItemText(i, fallbackText);
    }
    modelBox->setCurrentIndex(i);
}

}  // namespace tinyscope::ui
