#include "AppState.h"

#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

namespace tinyscope::ui {

AppState::AppState(QObject* parent) : QObject(parent)
{
    space_ = std::make_shared<DesignSpace>(presetSpace(defaultSpaceName()));
    spaceSource_ = QString::fromUtf8(defaultSpaceName());
    subnet_ = ArchSampler(*space_).labMaxConfig(space_->resolutions.front());
}

void AppState::setSpace(const DesignSpace& space, const QString& source)
{
    space_ = std::make_shared<DesignSpace>(space);
    spaceSource_ = source;
    subnet_ = ArchSampler(*space_).labMaxConfig(space_->resolutions.front());
    Q_EMIT spaceChanged();
    Q_EMIT subnetChanged();
}

void AppState::setSubnet(const SubnetConfig& config)
{
    if (config == subnet_) return;
    subnet_ = config;
    Q_EMIT subnetChanged();
}

}  // namespace tinyscope::ui
