#pragma once
// The teaching views' screenshots (issue 22), each in a fresh window as on a 1280×720 screen.
#include <QString>

namespace tinyscope::screenshots {

// Each shipped tour at its first and its last step: DIR/tour-<name>-first-1280x720.png, -last-….
int writeTourSet(const QString& dir);   // returns the number of images written
// Compare mode: the smallest subnet pinned as A, the lab's largest as B, the Compare A/B tab shown:
// DIR/design-space-compare-1280x720.png; two schemes of mcunet-5fps (bias-only:12 pinned, 49kb):
// DIR/training-compare-schemes-1280x720.png; then presentation mode on those two panels:
// DIR/presentation-{design-space,training-inspector}-1280x720.png.
int writeCompareSet(const QString& dir);

}  // namespace tinyscope::screenshots
