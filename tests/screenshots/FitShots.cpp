#include "FitShots.h"

#include "AppState.h"
#include "DeployDialog.h"
#include "DesignSpacePanel.h"
#include "DeviceVerdictView.h"
#include "EvaluationBox.h"
#include "EvaluationOptions.h"
#include "EventWait.h"
#include "ExportDialog.h"
#include "FineTunePane.h"
#include "MainWindow.h"
#include "PredictorPanel.h"
#include "SchemeCompareView.h"
#include "SearchPanel.h"
#include "SvgGraphView.h"
#include "TrainingGraphPane.h"
#include "TrainingInspectorPanel.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QScreen>
#include <QStyle>
#include <QStyleOptionComboBox>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextDocument>
#include <QToolButton>
#include <QtCharts/QChartView>

#include <iostream>

namespace tinyscope::screenshots {

using namespace tinyscope::ui;

namespace {

// "…" between two letters or digits: a name or number cut in the middle.
bool elidedInside(const QString& t)
{
    for (int i = 1; i + 1 < t.size(); ++i)
        if (t[i] == QChar(0x2026) && t[i - 1].isLetterOrNumber() && t[i + 1].isLetterOrNumber()) return true;
    return false;
}

// The widget sits in a scroll area's viewport: it may lie outside the window and is reached by scrolling.
bool inViewport(const QWidget* w, const QWidget* window)
{
    for (const QWidget* p = w->parentWidget(); p && p != window; p = p->parentWidget())
        if (auto* area = qobject_cast<const QAbstractScrollArea*>(p->parentWidget()); area && area->viewport() == p) return true;
    return false;
}

// The part of `w` in view: its rectangle in window coordinates, clipped by every ancestor.
QRect visibleRect(const QWidget* w, const QWidget* window)
{
    QRect r(w->mapTo(window, QPoint(0, 0)), w->size());
    for (const QWidget* p = w->parentWidget(); p && p != window; p = p->parentWidget())
        r &= QRect(p->mapTo(window, QPoint(0, 0)), p->size());
    return r & window->rect();
}

// The widget and where it is, for people: class, object name or text, and the first named ancestor.
QString describe(const QWidget* w, const QString& text)
{
    QString d = QString::fromLatin1(w->metaObject()->className());
    if (!w->objectName().isEmpty()) d += QLatin1Char(' ') + w->objectName();
    if (!text.isEmpty()) d += QStringLiteral(" \"%1\"").arg(text.left(80));
    for (const QWidget* p = w->parentWidget(); p; p = p->parentWidget()) {
        const QString cls = QString::fromLatin1(p->metaObject()->className());
        if (cls.startsWith(QLatin1String("tinyscope::"))) {
            d += QStringLiteral(" in ") + cls.mid(cls.lastIndexOf(QLatin1Char(':')) + 1);
            break;
        }
    }
    return d;
}

QString plainButtonText(QString t)
{
    t.replace(QStringLiteral("&&"), QStringLiteral("\x01"));
    t.remove(QLatin1Char('&'));
    t.replace(QStringLiteral("\x01"), QStringLiteral("&"));
    return t;
}

// The text problem of one widget ("" when it fits).
QString textProblem(QWidget* w)
{
    const QFontMetrics fm = w->fontMetrics();
    auto tooWide = [](int need, int have) { return QStringLiteral("needs %1 px, has %2").arg(need).arg(have); };
    if (auto* l = qobject_cast<QLabel*>(w)) {
        if (l->text().isEmpty() || !l->pixmap().isNull()) return {};
        QString plain = l->text();
        if (Qt::mightBeRichText(plain) || l->textFormat() == Qt::RichText) {
            QTextDocument doc;
            doc.setHtml(plain);
            plain = doc.toPlainText();
        }
        if (elidedInside(plain)) return describe(w, plain) + QStringLiteral(": elided");
        if (l->wordWrap()) {
            const int need = l->heightForWidth(l->width());
            if (need > l->height() + 1) return describe(w, plain) + QStringLiteral(": wraps to %1 px high, has %2").arg(need).arg(l->height());
        } else if (l->sizeHint().width() > l->width() + 1) {
            return describe(w, plain) + QStringLiteral(": ") + tooWide(l->sizeHint().width(), l->width());
        }
        return {};
    }
    if (auto* b = qobject_cast<QAbstractButton*>(w)) {
        if (qobject_cast<QTabBar*>(b->parentWidget())) return {};
        const QString t = plainButtonText(b->text());
        if (t.isEmpty()) return {};
        if (elidedInside(t)) return describe(w, t) + QStringLiteral(": elided");
        int need = 0;
        if (qobject_cast<QCheckBox*>(b) || qobject_cast<QRadioButton*>(b) || qobject_cast<QToolButton*>(b)) {
            auto* tb = qobject_cast<QToolButton*>(b);
            if (tb && tb->toolButtonStyle() == Qt::ToolButtonIconOnly && !tb->icon().isNull()) return {};
            need = b->sizeHint().width();
        } else {
            need = fm.horizontalAdvance(t) + (b->icon().isNull() ? 0 : b->iconSize().width() + 4) + 6;
        }
        if (need > b->width() + 1) return describe(w, t) + QStringLiteral(": ") + tooWide(need, b->width());
        return {};
    }
    if (auto* s = qobject_cast<QAbstractSpinBox*>(w)) {
        auto* edit = s->findChild<QLineEdit*>();
        if (!edit) return {};
        const QString t = s->text();
        const QMargins m = edit->textMargins();
        const int room = edit->width() - 4 - m.left() - m.right();
        const int need = edit->fontMetrics().horizontalAdvance(t);
        if (need > room) return describe(w, t) + QStringLiteral(": value ") + tooWide(need, room);
        return {};
    }
    if (auto* c = qobject_cast<QComboBox*>(w)) {
        const QString t = c->currentText();
        if (t.isEmpty() || (c->isEditable() && t.contains(QLatin1Char('/')))) return {};
        QStyleOptionComboBox opt;
        opt.initFrom(c);
        opt.editable = c->isEditable();
        opt.frame = c->hasFrame();
        const QRect field = c->style()->subControlRect(QStyle::CC_ComboBox, &opt, QStyle::SC_ComboBoxEditField, c);
        int room = field.width() - (c->isEditable() ? 4 : 2);
        if (!c->itemIcon(c->currentIndex()).isNull()) room -= c->iconSize().width() + 4;
        const int need = fm.horizontalAdvance(t);
        if (need > room) return describe(w, t) + QStringLiteral(": ") + tooWide(need, room);
        return {};
    }
    if (auto* e = qobject_cast<QLineEdit*>(w)) {
        if (qobject_cast<QAbstractSpinBox*>(e->parentWidget()) || qobject_cast<QComboBox*>(e->parentWidget())) return {};
        const QString t = e->displayText();
        if (t.isEmpty() || t.contains(QLatin1Char('/'))) return {};
        const QMargins m = e->textMargins();
        const int frame = e->hasFrame() ? 2 * e->style()->pixelMetric(QStyle::PM_DefaultFrameWidth, nullptr, e) : 0;
        const int room = e->width() - 4 - frame - m.left() - m.right();
        const int need = fm.horizontalAdvance(t);
        if (need > room) return describe(w, t) + QStringLiteral(": ") + tooWide(need, room);
        return {};
    }
    return {};
}

// Text Qt Charts truncated: "..." (its ellipsis) or "…" inside a word, in a title, axis title or label.
QStringList chartProblems(QChartView* view)
{
    QStringList out;
    if (!view->scene()) return out;
    const QString title = view->chart() ? view->chart()->title() : QString();
    for (QGraphicsItem* item : view->scene()->items()) {
        if (!item->isVisible()) continue;
        QString t;
        if (auto* text = dynamic_cast<QGraphicsTextItem*>(item)) t = text->toPlainText();
        else if (auto* simple = dynamic_cast<QGraphicsSimpleTextItem*>(item)) t = simple->text();
        if (t.isEmpty()) continue;
        if (t.contains(QStringLiteral("...")) || t == QStringLiteral("…") || t.endsWith(QStringLiteral("…")) || elidedInside(t))
            out << describe(view, title) + QStringLiteral(": chart text truncated to \"%1\"").arg(t);
    }
    return out;
}

}  // namespace

QStringList fitProblems(QWidget* window, const QString& shot, const QList<QWidget*>& mustShow)
{
    QStringList problems;
    auto add = [&](const QString& p) { problems << shot + QStringLiteral(": ") + p; };
    if (window->width() > kFitScreen.width() || window->height() > kFitScreen.height())
        add(QStringLiteral("the window is %1x%2, larger than the %3x%4 screen (minimum size %5x%6)")
                .arg(window->width()).arg(window->height()).arg(kFitScreen.width()).arg(kFitScreen.height())
                .arg(window->minimumSizeHint().width()).arg(window->minimumSizeHint().height()));
    const QRect inside = window->rect().adjusted(-1, -1, 1, 1);
    for (QWidget* w : window->findChildren<QWidget*>()) {
        if (!w->isVisible() || w->isWindow() || w->window() != window) continue;
        if (visibleRect(w, window).isEmpty() && inViewport(w, window)) continue;   // scrolled out of view
        const bool scrolls = inViewport(w, window);
        const QRect r(w->mapTo(window, QPoint(0, 0)), w->size());
        const bool textual = qobject_cast<QLabel*>(w) || qobject_cast<QAbstractButton*>(w) || qobject_cast<QLineEdit*>(w) ||
                             qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w);
        if (!scrolls && textual && !inside.contains(r))
            add(describe(w, QString()) + QStringLiteral(": outside the window (%1,%2 %3x%4 in %5x%6)")
                    .arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height()).arg(window->width()).arg(window->height()));
        if (scrolls && textual) {
            // Cut at the side of its scroll area: the area does not scroll sideways far enough, or the
            // column is narrower than its controls.
            const QRect seen = visibleRect(w, window);
            if (!seen.isEmpty() && seen.width() < r.width() - 1)
                add(describe(w, qobject_cast<QAbstractButton*>(w) ? plainButtonText(static_cast<QAbstractButton*>(w)->text()) : QString()) +
                    QStringLiteral(": %1 of %2 px in view across (cut at the side)").arg(seen.width()).arg(r.width()));
        }
        if (textual) {
            const QString p = textProblem(w);
            if (!p.isEmpty()) add(p);
        }
        if (auto* chart = qobject_cast<QChartView*>(w))
            for (const QString& p : chartProblems(chart)) add(p);
    }
    for (QWidget* w : mustShow) {
        if (!w) continue;
        const QRect full(w->mapTo(window, QPoint(0, 0)), w->size());
        if (!w->isVisible() || visibleRect(w, window) != full)
            add(describe(w, qobject_cast<QAbstractButton*>(w) ? plainButtonText(static_cast<QAbstractButton*>(w)->text()) : QString()) +
                QStringLiteral(": not wholly in view without scrolling"));
    }
    return problems;
}

namespace {

void settle()
{
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
}

QPushButton* buttonNamed(QWidget* root, const QString& text)
{
    for (QPushButton* b : root->findChildren<QPushButton*>())
        if (plainButtonText(b->text()) == text) return b;
    return nullptr;
}

struct Shooter {
    QString dir;
    QString mode;   // "" or "-presentation"
    QStringList problems;
    int written = 0;

    void shoot(QWidget* window, const QString& shot, const QList<QWidget*>& mustShow = {})
    {
        settle();
        const QString name = QStringLiteral("fit-") + shot + mode;
        written += window->grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png")) ? 1 : 0;
        problems << fitProblems(window, name, mustShow);
    }
};

// A verdict as the Export dialog shows it after "Verify on an emulated Cortex-M7" (the figures of a
// real 49kb run on the stm32f411, which does not fit it): the longest lines the view has.
DeviceRunResult sampleVerdict()
{
    DeviceRunResult r;
    r.images = 2;
    r.steps = 1;
    r.classes = 10;
    r.inference_match = true;
    r.training_checked = true;
    r.training_match = true;
    r.params.resize(25);
    r.classifier_bias = "v15_bias";
    r.classifier_bias_delta_device = r.classifier_bias_delta_predicted = {0, 0, 0, 7, 0, -5, 0, 0, 0, 0};
    r.instructions_per_inference = {65035271};
    r.instructions_per_step = {106370604};
    r.text_bytes = 116276;
    r.rodata_bytes = 545940;
    r.data_bytes = 36288;
    r.bss_bytes = 196880;
    r.stack_inference_bytes = 21936;
    r.sram_bytes = 255104;
    r.flash_bytes = 698504;
    r.ledger_sram_bytes = 195944;
    r.params_flash_bytes = 513151;
    r.codegen_s = 6.8;
    r.compile_s = 11.3;
    r.emulate_s = 0.7;
    r.kernel_archive_reused = true;
    return r;
}

void shootDialogs(MainWindow& window, Shooter& s)
{
    DesignSpacePanel* ds = window.designSpacePanel();
    window.tabs()->setCurrentWidget(ds);
    if (ds->evaluationBox()->ready()) {
        if (DeployDialog* deploy = ds->evaluationBox()->openDeployDialog()) {
            settle();
            s.shoot(deploy, QStringLiteral("deploy-dialog"), {buttonNamed(deploy, QStringLiteral("Deploy")), buttonNamed(deploy, QStringLiteral("Close"))});
            QTemporaryDir out;
            deploy->setOutputFile(out.path() + QStringLiteral("/fit.tflite"));
            deploy->setCalibrationImages(50);
            deploy->setBnImages(50);
            deploy->deploy();
            deploy->waitForIdle(120000);
            s.shoot(deploy, QStringLiteral("deploy-dialog-deployed"), {buttonNamed(deploy, QStringLiteral("Close"))});
            deploy->close();
            deploy->deleteLater();
        }
    } else {
        std::cerr << "tinyscope-screenshots --fit: no Deploy dialog shots (the workspace's supernet or data is missing)\n";
    }
    TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    ExportDialog dialog(ti->exportRequest(), &window);
    QTemporaryDir folder;
    dialog.setOutputFolder(folder.path());
    dialog.show();
    s.shoot(&dialog, QStringLiteral("export-dialog"), {buttonNamed(&dialog, QStringLiteral("Close"))});
    dialog.check();
    dialog.waitForIdle(120000);
    s.shoot(&dialog, QStringLiteral("export-dialog-checked"), {buttonNamed(&dialog, QStringLiteral("Close"))});
    if (auto* verdict = dialog.findChild<DeviceVerdictView*>()) {
        dialog.setBoard(QStringLiteral("stm32f411"));
        verdict->showResult(sampleVerdict(), QStringLiteral("2 synthetic LCG images, one training step on image 0 with class 3"));
        verdict->show();
        s.shoot(&dialog, QStringLiteral("export-dialog-verdict"), {buttonNamed(&dialog, QStringLiteral("Close"))});
    }
    dialog.close();
}

void shootAll(MainWindow& window, Shooter& s)
{
    window.resize(kFitScreen);
    settle();
    QPushButton* evaluate = buttonNamed(window.designSpacePanel(), QStringLiteral("Evaluate"));
    QPushButton* run = buttonNamed(window.searchPanel(), QStringLiteral("Run"));
    for (const auto& p : window.panels()) {
        window.tabs()->setCurrentWidget(p.widget);
        if (p.widget == window.trainingInspectorPanel()) {
            window.trainingInspectorPanel()->rightTabs()->setCurrentIndex(0);
            window.trainingInspectorPanel()->graphPane()->view()->fitAll();
        }
        QList<QWidget*> primary;   // in view without scrolling at 1280×720
        if (p.widget == window.designSpacePanel()) primary << evaluate;
        if (p.widget == window.searchPanel()) primary << run;
        s.shoot(&window, p.stem, primary);
    }
    // Compare mode: two diagrams and the B / A chart beside the costs (min pinned as A, the lab max as B).
    DesignSpacePanel* ds = window.designSpacePanel();
    window.tabs()->setCurrentWidget(ds);
    const SubnetConfig before = window.state()->subnet();
    ds->selectMin();
    ds->pinCompare();
    ds->selectLabMax();
    s.shoot(&window, QStringLiteral("design-space-compare"));
    ds->unpinCompare();
    window.state()->setSubnet(before);
    TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    window.tabs()->setCurrentWidget(ti);
    for (const auto& [stem, page] : {std::pair{QStringLiteral("training-inspector-finetune"), static_cast<QWidget*>(ti->fineTunePane())},
                                     std::pair{QStringLiteral("training-inspector-compare-schemes"), static_cast<QWidget*>(ti->schemeCompare())}}) {
        ti->rightTabs()->setCurrentWidget(page);
        s.shoot(&window, stem);
    }
    ti->rightTabs()->setCurrentIndex(0);
    shootDialogs(window, s);
}

}  // namespace

QStringList writeFitSet(MainWindow& window, const QString& dir, int& written)
{
    QDir().mkpath(dir);
    window.resize(kFitScreen);
    window.show();
    settle();
    QTemporaryDir history;
    // The panels after their work: a search (not recorded in the user's history), an evaluation
    // with its per-class chart, the inspector on mcunet-5fps with two schemes compared.
    SearchPanel* search = window.searchPanel();
    search->setHistoryPath(history.filePath(QStringLiteral("search-history.json")));
    window.tabs()->setCurrentWidget(search);
    processEventsUntil([search] { return search->lastResult() && !search->busy(); }, 120000);
    DesignSpacePanel* ds = window.designSpacePanel();
    window.tabs()->setCurrentWidget(ds);
    if (ds->evaluationBox()->ready()) {
        if (auto* options = ds->evaluationBox()->findChild<EvaluationOptions*>()) options->setMeasuredBy(EvalEngine::OneDnn, EvalDtype::Fp32);
        ds->evaluationBox()->setImageCounts(200, 100);
        ds->evaluationBox()->evaluate();
        ds->evaluationBox()->waitForIdle(120000);
    }
    TrainingInspectorPanel* ti = window.trainingInspectorPanel();
    window.tabs()->setCurrentWidget(ti);
    ti->selectModel(QStringLiteral("mcunet-5fps"));
    ti->applyBiasOnly(12);
    ti->schemeCompare()->pin();
    ti->loadPublishedScheme(QStringLiteral("49kb"));
    if (!ti->waitForGraph(120000)) std::cerr << "tinyscope-screenshots --fit: the training graph was still laying out after 120 s\n";

    Shooter s{dir, QString(), {}, 0};
    shootAll(window, s);
    window.presentationAction()->setChecked(true);
    s.mode = QStringLiteral("-presentation");
    shootAll(window, s);
    window.presentationAction()->setChecked(false);
    written = s.written;
    return s.problems;
}

}  // namespace tinyscope::screenshots
