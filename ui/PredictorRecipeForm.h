#pragma once
// The Predictor panel's inputs: the accuracy dataset folder (Browse…, remembered across sessions,
// with a line saying what was read from it) and the training recipe (a named recipe, then epochs,
// learning rate, schedule, batch, seed, validation fraction, ensemble, threads; values changed from
// the named recipe make it "<name>+custom").
#include "predict/PredictorRecipe.h"

#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace tinyscope {
class AccuracyPredictor;
}

namespace tinyscope::ui {

class PredictorRecipeForm : public QWidget {
    Q_OBJECT
public:
    explicit PredictorRecipeForm(QWidget* parent = nullptr);

    QString datasetPath() const;
    void setDatasetPath(const QString& path);     // and remember it for the next session
    // The path remembered from the last session, if it still exists (false: none shown).
    bool restoreDatasetPath();
    // The dataset `predictor` was trained on (its card's data origin, relative to the data root), if
    // it exists; shown, not remembered. nullptr: nothing offered.
    void offerDataOrigin(const AccuracyPredictor* predictor);
    static void rememberDatasetPath(const QString& path);
    // What was read from `path` (the line under the path until the path is edited).
    void setDatasetInfo(const QString& info);
    void setDatasetLoadedFrom(const QString& path) { loadedFrom_ = path; }

    PredictorRecipe recipe() const;
    PredictorRecipe validatedRecipe() const;   // InputError naming the field when a value is out of range
    void setRecipe(const PredictorRecipe& r);
    int epochs() const;

private:
    QWidget* makeDatasetBox();
    QWidget* makeRecipeBox();

    QString loadedFrom_;
    QLineEdit* dataPath_;
    QLabel* dataInfo_;
    QComboBox* recipeBox_;
    QSpinBox* epochs_;
    QDoubleSpinBox* lr_;
    QComboBox* schedule_;
    QSpinBox* batch_;
    QSpinBox* seed_;
    QDoubleSpinBox* validation_;
    QSpinBox* ensemble_;
    QSpinBox* threads_;
};

}  // namespace tinyscope::ui
