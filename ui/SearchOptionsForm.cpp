#include "SearchOptionsForm.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSpinBox>

namespace tinyscope::ui {

SearchOptionsForm::SearchOptionsForm(QWidget* parent) : QGroupBox(QStringLiteral("Algorithm"), parent)
{
    auto* form = new QFormLayout(this);
    algorithm_ = new QComboBox;
    algorithm_->addItem(QStringLiteral("evolution"), QStringLiteral("evolution"));
    algorithm_->addItem(QStringLiteral("random"), QStringLiteral("random"));
    population_ = new QSpinBox;
    population_->setRange(1, 100000);
    generations_ = new QSpinBox;
    generations_->setRange(0, 1000000);
    parentRatio_ = new QDoubleSpinBox;
    mutationRatio_ = new QDoubleSpinBox;
    archProb_ = new QDoubleSpinBox;
    resProb_ = new QDoubleSpinBox;
    for (QDoubleSpinBox* b : {parentRatio_, mutationRatio_, archProb_, resProb_}) {
        b->setRange(0, 1);
        b->setSingleStep(0.05);
        b->setDecimals(2);
    }
    seed_ = new QSpinBox;
    algorithm_->setToolTip(QStringLiteral("Evolution (parents, mutation, crossover: Lab 3) or random sampling under the same limits"));
    population_->setToolTip(QStringLiteral("Subnets per generation (random: per batch)"));
    generations_->setToolTip(QStringLiteral("Generations after the first population (random: batches)"));
    parentRatio_->setToolTip(QStringLiteral("Fraction of the population kept as parents each generation"));
    mutationRatio_->setToolTip(QStringLiteral("Fraction of each new generation made by mutation; the rest by crossover"));
    archProb_->setToolTip(QStringLiteral("Probability that a mutation changes each block's kernel / expand, each stage's depth and the width"));
    resProb_->setToolTip(QStringLiteral("Probability that a mutation changes the resolution"));
    seed_->setToolTip(QStringLiteral("Random seed: the same seed and limits give the same search"));
    seed_->setRange(0, 1000000000);
    form->addRow(QStringLiteral("Algorithm"), algorithm_);
    form->addRow(QStringLiteral("Population"), population_);
    form->addRow(QStringLiteral("Generations"), generations_);
    form->addRow(QStringLiteral("Parent ratio"), parentRatio_);
    form->addRow(QStringLiteral("Mutation ratio"), mutationRatio_);
    form->addRow(QStringLiteral("Arch / width mutate p"), archProb_);
    form->addRow(QStringLiteral("Resolution mutate p"), resProb_);
    form->addRow(QStringLiteral("Seed"), seed_);
    setOptions(SearchOptions());
}

SearchOptions SearchOptionsForm::options() const
{
    SearchOptions o;
    o.algorithm = algorithm_->currentData().toString().toStdString();
    o.population = population_->value();
    o.generations = generations_->value();
    o.parent_ratio = parentRatio_->value();
    o.mutation_ratio = mutationRatio_->value();
    o.arch_mutate_prob = archProb_->value();
    o.resolution_mutate_prob = resProb_->value();
    o.seed = static_cast<std::uint64_t>(seed_->value());
    return o;
}

void SearchOptionsForm::setOptions(const SearchOptions& o)
{
    algorithm_->setCurrentIndex(algorithm_->findData(QString::fromStdString(o.algorithm)));
    population_->setValue(o.population);
    generations_->setValue(o.generations);
    parentRatio_->setValue(o.parent_ratio);
    mutationRatio_->setValue(o.mutation_ratio);
    archProb_->setValue(o.arch_mutate_prob);
    resProb_->setValue(o.resolution_mutate_prob);
    seed_->setValue(static_cast<int>(o.seed));
}

}  // namespace tinyscope::ui
