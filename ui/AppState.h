#pragma once
// The selection every panel shares: the design space and the current subnet. Panels read it and
// call setSubnet(); everyone listening to subnetChanged() redraws.
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"

#include <QObject>
#include <QString>

#include <memory>

namespace tinyscope::ui {

class AppState : public QObject {
    Q_OBJECT
public:
    explicit AppState(QObject* parent = nullptr);

    const DesignSpace& space() const { return *space_; }
    const SubnetConfig& subnet() const { return subnet_; }
    QString spaceSource() const { return spaceSource_; }   // preset name or file path

    void setSpace(const DesignSpace& space, const QString& source);   // resets the subnet to the lab max
    void setSubnet(const SubnetConfig& config);                       // must be valid for space()

Q_SIGNALS:
    void spaceChanged();
    void subnetChanged();
    // A short message for the status bar.
    void message(const QString& text);

private:
    std::shared_ptr<DesignSpace> space_;
    SubnetConfig subnet_;
    QString spaceSource_;
};

}  // namespace tinyscope::ui
