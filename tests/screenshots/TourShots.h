#pragma once
// The guided tours' screenshots (issue 22): each shipped tour at its first and its last step, in a
// fresh window as on a 1280×720 screen, as DIR/tour-<name>-first-1280x720.png and -last-1280x720.png.
#include <QString>

namespace tinyscope::screenshots {

int writeTourSet(const QString& dir);   // returns the number of images written

}  // namespace tinyscope::screenshots
