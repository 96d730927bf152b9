#pragma once
// The current predictor's card: where it came from (file or this session), its space, encoding and
// base accuracy, the recipe that trained it, its data and held-out metrics, and the features its
// data never had (predictions there are extrapolations); Load… / Save… ask for a file.
#include <QGroupBox>

class QLabel;

namespace tinyscope {
class AccuracyPredictor;
}

namespace tinyscope::ui {

class PredictorCardView : public QGroupBox {
    Q_OBJECT
public:
    explicit PredictorCardView(QWidget* parent = nullptr);

    void showPredictor(const AccuracyPredictor* predictor);   // nullptr: none yet

Q_SIGNALS:
    void loadRequested(const QString& path);   // a file the user chose
    void saveRequested(const QString& path);

private:
    QLabel* card_;
};

}  // namespace tinyscope::ui
