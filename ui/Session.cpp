#include "Session.h"

#include "AppState.h"
#include "DesignSpacePanel.h"
#include "EvaluationBox.h"
#include "EvaluationOptions.h"
#include "MainWindow.h"

#include "Error.h"
#include "io/JsonFile.h"
#include "nn/measure/EvalEngine.h"
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"
#include "workspace/Workspace.h"

#include <QSettings>
#include <QStringList>
#include <QTabWidget>

#include <algorithm>
#include <exception>

namespace tinyscope::ui {

namespace {

constexpr const char* kKey = "session/state";   // one JSON text: the parts are read together

bool isShipped(const Workspace& w)
{
    const std::vector<std::string> names = shippedWorkspaceNames();
    return std::find(names.begin(), names.end(), w.name) != names.end() && w.space_source == w.space.name;
}

}  // namespace

void saveSession(const MainWindow& window, QSettings& settings)
{
    const AppState& s = *window.state();
    const Workspace& w = s.workspace();
    Json j;
    if (isShipped(w)) {
        j["workspace"] = w.name;
        if (w.supernet != shippedWorkspace(w.name).supernet) j["supernet"] = w.supernet;
    } else {
        j["space_file"] = w.space_source;
        if (!w.supernet.empty()) j["supernet"] = w.supernet;
    }
    j["board"] = s.board().name;
    j["subnet"] = s.subnet().toJson();
    const EvaluationOptions& o = *window.designSpacePanel()->evaluationBox()->options();
    j["engine"] = evalEngineName(o.engine());
    j["dtype"] = o.int8() ? "int8" : evalDtypeName(o.dtype());
    j["tab"] = window.tabs()->currentIndex();
    settings.setValue(QString::fromLatin1(kKey), QString::fromStdString(j.dump()));
}

QString restoreSession(MainWindow& window, const QSettings& settings)
{
    const QString text = settings.value(QString::fromLatin1(kKey)).toString();
    if (text.isEmpty()) return QString();
    QStringList skipped;
    Json j;
    try {
        j = Json::parse(text.toStdString());
        if (!j.is_object()) throw std::runtime_error("not an object");
    } catch (const std::exception&) {
        return QStringLiteral("The last session's state could not be read; starting from the defaults.");
    }
    auto part = [&skipped](const char* what, auto&& apply) {
        try {
            apply();
        } catch (const std::exception& e) {
            skipped << QStringLiteral("%1 (%2)").arg(QString::fromLatin1(what), QString::fromUtf8(e.what()));
        }
    };
    AppState& s = *window.state();
    bool spaceBack = false;
    part("workspace", [&] {
        if (j.contains("space_file")) {
            const std::string path = j.at("space_file").get<std::string>();
            s.setSpace(DesignSpace::loadFile(path), QString::fromStdString(path));
        } else if (j.contains("workspace")) {
            s.setWorkspace(shippedWorkspace(j.at("workspace").get<std::string>()));
        }
        spaceBack = true;
    });
    if (spaceBack && j.contains("supernet")) part("supernet", [&] { s.useSupernet(QString::fromStdString(j.at("supernet").get<std::string>())); });
    if (j.contains("board")) part("board", [&] { s.setBoard(QString::fromStdString(j.at("board").get<std::string>())); });
    if (spaceBack && j.contains("subnet"))
        part("subnet", [&] { s.setSubnet(SubnetConfig::fromJson(j.at("subnet"), s.space(), "the last session's subnet")); });
    if (j.contains("engine") && j.contains("dtype"))
        part("measured by", [&] {
            EvaluationOptions& o = *window.designSpacePanel()->evaluationBox()->options();
            const EvalEngine engine = parseEvalEngine(j.at("engine").get<std::string>(), "engine");
            bool int8 = false;
            const EvalDtype dtype = parseMeasuredDtype(j.at("dtype").get<std::string>(), "dtype", engine, int8);
            if (int8) o.setMeasuredByInt8();
            else if (!o.setMeasuredBy(engine, dtype)) throw InputError("this CPU cannot run it");
        });
    if (j.contains("tab") && j.at("tab").is_number_integer()) {
        const int tab = j.at("tab").get<int>();
        if (tab >= 0 && tab < window.tabs()->count()) window.tabs()->setCurrentIndex(tab);
    }
    return skipped.isEmpty() ? QString() : QStringLiteral("Not restored from the last session: %1").arg(skipped.join(QStringLiteral("; ")));
}

}  // namespace tinyscope::ui
