#pragma once
// Waiting for a worker thread on the GUI thread (screenshots and tests): the event loop runs and
// sleeps between events, so the waiting thread does not take a core from the worker.
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

namespace tinyscope::ui {

// Processes events until `done()` holds or `timeoutMs` passed; returns done(). A 20 ms timer wakes
// the loop to check `done` and the time; between events the thread sleeps.
template <class Done>
bool processEventsUntil(Done done, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    QTimer tick;
    tick.start(20);
    while (!done() && t.elapsed() < timeoutMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
    return done();
}

}  // namespace tinyscope::ui
