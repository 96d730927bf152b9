#include "CompressCharts.h"

#include "ChartStyle.h"
#include "Palette.h"

#include "nn/compress/PruningJob.h"
#include "nn/compress/WeightQuantizationJob.h"

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace tinyscope::ui {

namespace {

// n well-separated colours (hue steps), for one line per layer or one colour per cluster.
QColor spreadColour(int i, int n) { return QColor::fromHsv((i * 360 / std::max(n, 1)) % 360, 190, 205); }

// Hover text for a point of an XY series.
void hoverPoints(QXYSeries* s, std::function<QString(const QPointF&)> text)
{
    QObject::connect(s, &QXYSeries::hovered, s, [text = std::move(text)](const QPointF& p, bool on) { showHoverText(on ? text(p) : QString()); });
}

}  // namespace

QString shortLayerName(const std::string& name)
{
    QString n = QString::fromStdString(name);
    n.remove(QStringLiteral(".weight"));
    n.replace(QRegularExpression(QStringLiteral("^blocks\\.(\\d+)\\.mobile_inverted_conv\\.")), QStringLiteral("b\\1 "));
    n.replace(QStringLiteral("inverted_bottleneck.conv"), QStringLiteral("pw1"));
    n.replace(QStringLiteral("depth_conv.se.fc.reduce"), QStringLiteral("se↓"));
    n.replace(QStringLiteral("depth_conv.se.fc.expand"), QStringLiteral("se↑"));
    n.replace(QStringLiteral("depth_conv.conv"), QStringLiteral("dw"));
    n.replace(QStringLiteral("point_linear.conv"), QStringLiteral("pw2"));
    n.replace(QStringLiteral("first_conv.conv"), QStringLiteral("stem"));
    n.replace(QStringLiteral("feature_mix_layer.conv"), QStringLiteral("mix"));
    n.replace(QStringLiteral("classifier.linear"), QStringLiteral("fc"));
    return n;
}

QChart* sensitivityChart(const std::vector<SensitivityCurve>& curves, double denseTop1)
{
    QChart* chart = styledChart(QStringLiteral("Sensitivity: top-1 with one layer pruned"));
    QValueAxis* x = addValueAxis(chart, Qt::AlignBottom, QStringLiteral("sparsity of that layer"));
    QValueAxis* y = addValueAxis(chart, Qt::AlignLeft, QStringLiteral("top-1 %"));
    double lo = 1, hi = 0, ylo = denseTop1, yhi = denseTop1;
    const int n = static_cast<int>(curves.size());
    for (int i = 0; i < n; ++i) {
        const SensitivityCurve& c = curves[static_cast<std::size_t>(i)];
        auto* s = new QLineSeries;
        s->setName(shortLayerName(c.layer));
        s->setColor(spreadColour(i, n));
        s->setPointsVisible(true);
        for (std::size_t k = 0; k < c.sparsity.size(); ++k) {
            s->append(c.sparsity[k], c.top1[k]);
            ylo = std::min(ylo, c.top1[k]);
            yhi = std::max(yhi, c.top1[k]);
        }
        if (!c.sparsity.empty()) lo = std::min(lo, c.sparsity.front()), hi = std::max(hi, c.sparsity.back());
        const QString layer = QString::fromStdString(c.layer);
        hoverPoints(s, [layer](const QPointF& p) {
            return QStringLiteral("%1\nsparsity %2: top-1 %3 %").arg(layer).arg(p.x(), 0, 'f', 2).arg(p.y(), 0, 'f', 2);
        });
        addSeriesOn(chart, s, {x, y});
    }
    if (lo > hi) lo = 0, hi = 1;
    auto* dense = new QLineSeries;
    dense->setName(QStringLiteral("dense"));
    QPen pen(paletteColor("chart.budget"));
    pen.setStyle(Qt::DashLine);
    dense->setPen(pen);
    dense->append(lo, denseTop1);
    dense->append(hi, denseTop1);
    addSeriesOn(chart, dense, {x, y});
    setNiceRange(x, lo, hi);
    setNiceRange(y, std::max(0.0, ylo - 2), std::min(100.0, yhi + 2));
    chart->legend()->setVisible(n <= 16);   // beyond that the hover names the layer
    return chart;
}

QChart* parameterBarsChart(const std::vector<std::string>& layers, const std::vector<std::int64_t>& params)
{
    QChart* chart = styledChart(QStringLiteral("Parameters per layer"));
    auto* set = new QBarSet(QStringLiteral("parameters"));
    set->setColor(paletteColor("chart.series"));
    QStringList names;
    double most = 1;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        *set << static_cast<double>(params[i]);
        names << shortLayerName(layers[i]);
        most = std::max(most, static_cast<double>(params[i]));
    }
    auto* series = new QBarSeries;
    series->append(set);
    showValueOnHover(series, [layers, params](int i, QBarSet*) {
        return i < static_cast<int>(layers.size())
                   ? QStringLiteral("%1: %2 parameters").arg(QString::fromStdString(layers[static_cast<std::size_t>(i)])).arg(params[static_cast<std::size_t>(i)])
                   : QString();
    });
    chart->addSeries(series);
    chart->legend()->hide();
    auto* x = new QBarCategoryAxis;   // the names on hover: fifty do not fit under the bars
    x->append(names);
    x->setLabelsVisible(false);
    x->setGridLineVisible(false);
    x->setTitleText(QStringLiteral("layer (hover: name)"));
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(x);
    QValueAxis* y = addValueAxis(chart, Qt::AlignLeft, QStringLiteral("parameters"), QStringLiteral("%.0f"));
    series->attachAxis(y);
    setNiceRange(y, 0, most);
    return chart;
}

QChart* histogramChart(const QString& title, const std::vector<std::pair<QString, WeightHistogram>>& histograms)
{
    QChart* chart = styledChart(title);
    QValueAxis* x = addValueAxis(chart, Qt::AlignBottom, QStringLiteral("weight"));
    QValueAxis* y = addValueAxis(chart, Qt::AlignLeft, QStringLiteral("share of weights %"));
    double lo = 0, hi = 0, top = 1;
    const QColor colours[] = {paletteColor("chart.series"), paletteColor("chart.front"), paletteColor("chart.budget")};
    for (std::size_t k = 0; k < histograms.size(); ++k) {
        const WeightHistogram& h = histograms[k].second;
        if (h.counts.empty()) continue;
        auto* s = new QLineSeries;   // a step outline per histogram
        s->setName(histograms[k].first);
        s->setColor(colours[k % 3]);
        const double width = (h.hi - h.lo) / static_cast<double>(h.counts.size()), total = static_cast<double>(std::max<std::int64_t>(1, h.total()));
        for (std::size_t b = 0; b < h.counts.size(); ++b) {
            const double share = 100.0 * static_cast<double>(h.counts[b]) / total;
            s->append(h.lo + width * static_cast<double>(b), share);
            s->append(h.lo + width * static_cast<double>(b + 1), share);
            top = std::max(top, share);
        }
        lo = std::min(lo, h.lo), hi = std::max(hi, h.hi);
        hoverPoints(s, [name = histograms[k].first](const QPointF& p) {
            return QStringLiteral("%1: %2 % of weights near %3").arg(name).arg(p.y(), 0, 'f', 2).arg(p.x(), 0, 'g', 3);
        });
        addSeriesOn(chart, s, {x, y});
    }
    setNiceRange(x, lo, hi == lo ? lo + 1 : hi);
    setNiceRange(y, 0, top);
    return chart;
}

QChart* speedupChart(const PruneResult& r)
{
    QChart* chart = styledChart(QStringLiteral("Channel pruning: the pruned network, % of the original"));
    const NetworkCost& a = r.original;
    const NetworkCost& b = r.narrowed;
    struct Row {
        QString name;
        double before, after;
        QString unit;
    };
    const std::vector<Row> rows = {{QStringLiteral("MACs"), static_cast<double>(a.macs) / 1e6, static_cast<double>(b.macs) / 1e6, QStringLiteral("M")},
                                   {QStringLiteral("parameters"), static_cast<double>(a.params) / 1e3, static_cast<double>(b.params) / 1e3, QStringLiteral("k")},
                                   {QStringLiteral("peak memory"), static_cast<double>(a.peak_bytes) / 1e3, static_cast<double>(b.peak_bytes) / 1e3, QStringLiteral("KB")},
                                   {QStringLiteral("latency"), a.latency.ms, b.latency.ms, QStringLiteral("ms")}};
    auto* original = new QBarSet(QStringLiteral("original"));
    auto* pruned = new QBarSet(QStringLiteral("pruned"));
    original->setColor(paletteColor("chart.budget"));
    pruned->setColor(paletteColor("chart.series"));
    QStringList names;
    for (const Row& row : rows) {
        *original << 100.0;
        *pruned << (row.before > 0 ? 100.0 * row.after / row.before : 0.0);
        names << row.name;
    }
    auto* series = new QBarSeries;
    series->append(original);
    series->append(pruned);
    showValueOnHover(series, [rows](int i, QBarSet*) {
        if (i < 0 || i >= static_cast<int>(rows.size())) return QString();
        const Row& row = rows[static_cast<std::size_t>(i)];
        return QStringLiteral("%1: %2 → %3 %4 (×%5 less)")
            .arg(row.name)
            .arg(row.before, 0, 'g', 4)
            .arg(row.after, 0, 'g', 4)
            .arg(row.unit)
            .arg(row.after > 0 ? row.before / row.after : 0.0, 0, 'f', 2);
    });
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(names);
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(x);
    QValueAxis* y = addValueAxis(chart, Qt::AlignLeft, QStringLiteral("% of the original"));
    series->attachAxis(y);
    setNiceRange(y, 0, 100);
    return chart;
}

QChart* accuracySizeChart(const WeightQuantResult& r)
{
    QChart* chart = styledChart(QStringLiteral("Top-1 against model size (parameters × bits)"));
    QValueAxis* x = addValueAxis(chart, Qt::AlignBottom, QStringLiteral("model size KiB"));
    QValueAxis* y = addValueAxis(chart, Qt::AlignLeft, QStringLiteral("top-1 %"));
    double xmax = static_cast<double>(r.float_bits) / 8192.0, ylo = r.float_top1, yhi = r.float_top1;
    const WeightQuantMethod methods[] = {WeightQuantMethod::Linear, WeightQuantMethod::KMeans};
    for (int m = 0; m < 2; ++m)
        for (int qat = 0; qat < 2; ++qat) {
            auto* s = new QLineSeries;
            s->setName(QStringLiteral("%1%2").arg(QString::fromLatin1(methodName(methods[m])), qat ? QStringLiteral(" after QAT") : QString()));
            s->setColor(m == 0 ? paletteColor("chart.series") : paletteColor("chart.front"));
            if (qat) {
                QPen pen = s->pen();
                pen.setStyle(Qt::DashLine);
                s->setPen(pen);
            }
            s->setPointsVisible(true);
            std::vector<QPointF> points;
            for (const WeightQuantRun& run : r.runs) {
                if (run.method != methods[m] || (qat && run.qat.empty())) continue;
                const double top1 = qat ? run.qat_top1 : run.top1;
                points.emplace_back(static_cast<double>(run.lab_size_bits) / 8192.0, top1);
                ylo = std::min(ylo, top1), yhi = std::max(yhi, top1);
            }
            if (points.empty()) {
                delete s;
                continue;
            }
            std::sort(points.begin(), points.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
            for (const QPointF& p : points) s->append(p);
            hoverPoints(s, [name = s->name(), params = r.params](const QPointF& p) {
                return QStringLiteral("%1: %2 bits, %3 KiB, top-1 %4 %")
                    .arg(name)
                    .arg(std::lround(p.x() * 8192.0 / static_cast<double>(std::max<std::int64_t>(params, 1))))
                    .arg(p.x(), 0, 'f', 1)
                    .arg(p.y(), 0, 'f', 2);
            });
            addSeriesOn(chart, s, {x, y});
        }
    auto* full = new QScatterSeries;
    full->setName(QStringLiteral("float32"));
    full->setColor(paletteColor("chart.budget"));
    full->append(xmax, r.float_top1);
    addSeriesOn(chart, full, {x, y});
    setNiceRange(x, 0, xmax);
    setNiceRange(y, std::max(0.0, ylo - 2), std::min(100.0, yhi + 2));
    return chart;
}

QChart* clusterChart(const WeightQuantRun& run)
{
    const bool kmeans = run.method == WeightQuantMethod::KMeans;
    QChart* chart = styledChart(QStringLiteral("%1, %2-bit %3: each weight coloured by its %4")
                                    .arg(shortLayerName(run.sample_tensor))
                                    .arg(run.bits)
                                    .arg(QString::fromLatin1(methodName(run.method)), kmeans ? QStringLiteral("cluster") : QStringLiteral("level")));
    QValueAxis* x = addValueAxis(chart, Qt::AlignBottom, QStringLiteral("weight (every k-th of the tensor)"), QStringLiteral("%.0f"));
    QValueAxis* y = addValueAxis(chart, Qt::AlignLeft, QStringLiteral("value"));
    const int clusters = 1 << run.bits;
    std::vector<QScatterSeries*> series(static_cast<std::size_t>(clusters), nullptr);
    double lo = 0, hi = 0;
    for (std::size_t i = 0; i < run.sample_values.size(); ++i) {
        const int c = std::clamp(run.sample_labels[i], 0, clusters - 1);
        QScatterSeries*& s = series[static_cast<std::size_t>(c)];
        if (!s) {
            s = new QScatterSeries;
            s->setMarkerSize(5);
            s->setBorderColor(Qt::transparent);
            s->setColor(spreadColour(c, std::min(clusters, 24)));
        }
        s->append(static_cast<double>(i), run.sample_values[i]);
        lo = std::min<double>(lo, run.sample_values[i]), hi = std::max<double>(hi, run.sample_values[i]);
    }
    for (std::size_t c = 0; c < series.size(); ++c) {
        if (!series[c]) continue;
        const QString centroid = c < run.centroids.size() ? QStringLiteral(", centroid %1").arg(run.centroids[c], 0, 'g', 4) : QString();
        hoverPoints(series[c], [c, centroid, kmeans](const QPointF& p) {
            return QStringLiteral("%1 %2%3: weight %4").arg(kmeans ? QStringLiteral("cluster") : QStringLiteral("level")).arg(c).arg(centroid).arg(p.y(), 0, 'g', 4);
        });
        addSeriesOn(chart, series[c], {x, y});
    }
    for (float c : run.centroids) {   // the codebook as horizontal lines
        auto* line = new QLineSeries;
        QPen pen(paletteColor("chart.budget"));
        pen.setWidthF(0.5);
        line->setPen(pen);
        line->append(0, c);
        line->append(static_cast<double>(std::max<std::size_t>(run.sample_values.size(), 1)), c);
        addSeriesOn(chart, line, {x, y});
    }
    chart->legend()->hide();
    setNiceRange(x, 0, static_cast<double>(std::max<std::size_t>(run.sample_values.size(), 1)), 6, true);
    setNiceRange(y, lo, hi == lo ? lo + 1 : hi);
    return chart;
}

}  // namespace tinyscope::ui
