#include "TourDriver.h"

#include "Palette.h"

#include "Error.h"

#include <QEvent>
#include <QPainter>
#include <QScrollArea>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTimer>

#include <functional>

namespace tinyscope::ui {

namespace {

// A frame drawn around a widget, over the window. It follows the widget when it moves, resizes,
// shows or hides, and (a 250 ms check) when a splitter or a tab moves one of its ancestors; it
// changes its own geometry only when the target's changed, so it never feeds an event loop.
class TourFrame : public QWidget {
public:
    explicit TourFrame(QWidget* target) : QWidget(target->window()), target_(target)
    {
        setAttribute(Qt::WA_TransparentForMouseEvents);
        setAttribute(Qt::WA_NoSystemBackground);
        setObjectName(QStringLiteral("tourHighlight"));
        target->installEventFilter(this);
        auto* follow = new QTimer(this);
        follow->setInterval(250);
        connect(follow, &QTimer::timeout, this, [this] { place(); });
        follow->start();
        place();
        raise();
    }

protected:
    bool eventFilter(QObject* o, QEvent* e) override
    {
        switch (e->type()) {
        case QEvent::Move:
        case QEvent::Resize:
        case QEvent::Show:
        case QEvent::Hide: place(); break;
        default: break;
        }
        return QWidget::eventFilter(o, e);
    }

    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        QPen pen(paletteColor("highlight"), kPen);
        p.setPen(pen);
        p.drawRoundedRect(QRectF(rect()).adjusted(kPen / 2.0, kPen / 2.0, -kPen / 2.0, -kPen / 2.0), 6, 6);
    }

private:
    static constexpr int kPen = 4;
    void place()
    {
        if (!target_) return;
        const bool visible = target_->isVisible();
        if (visible != isVisible()) setVisible(visible);
        const QRect r = QRect(target_->mapTo(window(), QPoint(0, 0)), target_->size()).adjusted(-kPen, -kPen, kPen, kPen);
        if (r != geometry()) setGeometry(r);
    }
    QPointer<QWidget> target_;
};

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

TourDriver::TourDriver(QObject* parent) : QObject(parent) {}

TourDriver::~TourDriver()
{
    clearHighlights();
    closeDialogs();
}

QStringList TourDriver::targetNames()
{
    QStringList names;
    for (const std::string& t : tourHighlightTargets()) names << qs(t);
    return names;
}

QWidget* TourDriver::target(const QString& name) const { return targetNames().contains(name) ? actions_.target(name) : nullptr; }

int TourDriver::highlightCount() const
{
    int n = 0;
    for (const QPointer<QWidget>& f : frames_) n += f ? 1 : 0;
    return n;
}

int TourDriver::openDialogs() const
{
    int n = 0;
    for (const QPointer<QWidget>& d : dialogs_) n += d && d->isVisible() ? 1 : 0;
    return n;
}

void TourDriver::clearHighlights()
{
    // Deleted at once (nothing of a frame is on the stack here): a deferred delete waits for the event
    // loop the step was started from, and a frame's own timer would show it again meanwhile.
    for (QPointer<QWidget>& f : frames_) delete f.data();
    frames_.clear();
}

void TourDriver::closeDialogs()
{
    for (QPointer<QWidget>& d : dialogs_)
        if (d) d->close();   // WA_DeleteOnClose
    dialogs_.clear();
}

void TourDriver::stop()
{
    ++generation_;
    if (busy_) actions_.stop();   // a running search is cancelled
    queue_.clear();
    next_ = 0;
    busy_ = false;
}

void TourDriver::perform(const std::vector<TourStep>& steps)
{
    stop();
    clearHighlights();
    for (std::size_t s = 0; s < steps.size(); ++s)
        for (const TourAction& a : steps[s].actions) queue_.emplace_back(a, s + 1 == steps.size());
    busy_ = true;
    runNext();
}

void TourDriver::runNext()
{
    while (next_ < queue_.size()) {
        const auto [action, highlight] = queue_[next_++];
        try {
            if (!perform(action, highlight)) return;   // continues when its job ends
        } catch (const std::exception& e) {
            fail(action, QString::fromUtf8(e.what()));
            return;
        }
    }
    queue_.clear();
    next_ = 0;
    busy_ = false;
    Q_EMIT finished(true, QString());
}

void TourDriver::fail(const TourAction& a, const QString& reason)
{
    queue_.clear();
    next_ = 0;
    busy_ = false;
    Q_EMIT finished(false, qs(a.where) + QStringLiteral(" (") + qs(a.action) + QStringLiteral("): ") + reason);
}

void TourDriver::reveal(QWidget* w)
{
    for (QWidget* c = w; c && c->parentWidget(); c = c->parentWidget()) {
        auto* stack = qobject_cast<QStackedWidget*>(c->parentWidget());
        if (!stack) continue;
        if (auto* tabs = qobject_cast<QTabWidget*>(stack->parentWidget())) tabs->setCurrentWidget(c);
        else stack->setCurrentWidget(c);
    }
    for (QWidget* c = w->parentWidget(); c; c = c->parentWidget())
        if (auto* area = qobject_cast<QScrollArea*>(c)) area->ensureWidgetVisible(w);
}

void TourDriver::highlight(QWidget* w)
{
    reveal(w);
    frames_.emplace_back(new TourFrame(w));
}

bool TourDriver::perform(const TourAction& a, bool highlightIt)
{
    const Json& g = a.args;
    const std::string& what = a.action;
    if (what == "highlight") {
        const QString name = qs(g["target"].get<std::string>());
        QWidget* w = target(name);
        if (!w) throw InputError("no part of the window is called '" + name.toStdString() + "' (names: " + targetNames().join(QStringLiteral(", ")).toStdString() + ")");
        if (highlightIt) highlight(w);
        return true;
    }
    if (what == "close-dialogs") {
        closeDialogs();
        return true;
    }
    const TourActions::Action* perform = actions_.action(what);
    if (!perform) throw InputError("this version of Tinyscope cannot perform '" + what + "'");
    current_ = a;
    return (*perform)(g, *this);
}

void TourDriver::keepDialog(QWidget* dialog) { dialogs_.emplace_back(dialog); }

void TourDriver::status(const QString& what) { Q_EMIT progress(what); }

TourRun::Later TourDriver::later()
{
    const int generation = ++generation_;
    QPointer<TourDriver> self(this);
    auto current = [self, generation] { return self && self->generation_ == generation; };
    return {current, [self, current, a = current_](bool ok, const QString& reason) {
                if (!current()) return;
                if (ok) self->runNext();
                else self->fail(a, reason);
            }};
}

}  // namespace tinyscope::ui
