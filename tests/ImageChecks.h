#pragma once
// Checks on rendered widgets and screenshots.
#include <QImage>
#include <QSet>

namespace tinyscope::test {

// Number of distinct colours in a coarse sample: a blank or single-colour image has 1.
inline int distinctColours(const QImage& img, int step = 7)
{
    QSet<QRgb> seen;
    for (int y = 0; y < img.height(); y += step)
        for (int x = 0; x < img.width(); x += step) seen.insert(img.pixel(x, y));
    return seen.size();
}

}  // namespace tinyscope::test
