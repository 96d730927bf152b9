#pragma once
// The Search panel's algorithm group: evolution or random, population, generations, the
// evolution ratios and mutation probabilities, the seed (SearchOptions, docs/SEARCH.md).
#include "search/SearchOptions.h"

#include <QGroupBox>

class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace tinyscope::ui {

class SearchOptionsForm : public QGroupBox {
    Q_OBJECT
public:
    explicit SearchOptionsForm(QWidget* parent = nullptr);

    SearchOptions options() const;
    void setOptions(const SearchOptions& o);

private:
    QComboBox* algorithm_;
    QSpinBox* population_;
    QSpinBox* generations_;
    QDoubleSpinBox* parentRatio_;
    QDoubleSpinBox* mutationRatio_;
    QDoubleSpinBox* archProb_;
    QDoubleSpinBox* resProb_;
    QSpinBox* seed_;
};

}  // namespace tinyscope::ui
