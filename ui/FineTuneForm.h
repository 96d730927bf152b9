#pragma once
// The Fine-tune tab's settings: the task's data (Debian's Fashion-MNIST or an image folder,
// class/*.png|jpg), epochs, training and test images (0 = all), QAS on or off and the learning
// rate per batch 256 — tiny-training's 0.075 with QAS, 0.1 without, following the checkbox until
// the user edits it. recipe() puts them into a FineTuneRecipe.
#include "nn/finetune/FineTuneJob.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace tinyscope::ui {

class FineTuneForm : public QWidget {
    Q_OBJECT
public:
    explicit FineTuneForm(QWidget* parent = nullptr);

    QString data() const;   // "fashion-mnist" or a folder
    void setData(const QString& data);
    void setEpochs(int epochs);
    void setImages(int train, int test);
    void setQas(bool on);
    void setLr(double bs256Lr);   // an edit: the rate no longer follows the checkbox
    bool lrEdited() const { return lrEdited_; }
    double lr() const;

    // `base` with the form's epochs, images, QAS and learning rate.
    FineTuneRecipe recipe(FineTuneRecipe base) const;

Q_SIGNALS:
    void changed();

private:
    void browse();

    QComboBox* data_;
    QSpinBox* epochs_;
    QSpinBox* train_;
    QSpinBox* test_;
    QCheckBox* qas_;
    QDoubleSpinBox* lr_;
    bool lrEdited_ = false;
    bool settingLr_ = false;
};

}  // namespace tinyscope::ui
