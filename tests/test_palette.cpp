// The one colour palette (resources/palette.json, core/viz/Palette.h): every role the diagrams and
// the app use resolves to a colour, the file holds no role nobody uses, an unknown role and a
// malformed file say what and where (issue 19).
#include "TestSupport.h"

#include "viz/ArchDiagram.h"
#include "viz/Palette.h"
#include "viz/TrainingGraphDot.h"

#include <QFile>

using namespace tinyscope;

namespace {

// Every role passed to paletteColour (core/viz) or paletteColor / paletteName (ui/), by file.
const std::vector<std::string> kRolesUsed = {
    // core/viz/ArchDiagram.cpp
    "arch.kernel3", "arch.kernel5", "arch.kernel7", "arch.kernel-other", "arch.input", "arch.layer", "arch.block0", "arch.stage",
    "arch.edge", "highlight",
    // core/viz/TrainingGraphDot.cpp
    "graph.forward.fill", "graph.forward.border", "graph.forward.text", "graph.loss.fill", "graph.loss.border", "graph.loss.text",
    "graph.backward.fill", "graph.backward.border", "graph.backward.text", "graph.gradient.fill", "graph.gradient.border",
    "graph.gradient.text", "graph.pruned.fill", "graph.pruned.border", "graph.pruned.text", "graph.edge.data", "graph.edge.saved",
    "graph.edge.pruned", "graph.legend",
    // ui/: charts (PeakMemoryChart, SearchPanel, PredictorPanel, EvaluationBox, TrainingMemoryChart, CapacityBar)
    "chart.series", "chart.front", "chart.budget", "chart.peak-term", "pareto.band0", "pareto.band1", "pareto.band2", "pareto.band3",
    "pareto.band4", "memory.masks", "memory.biases", "memory.saved-inputs", "memory.weights", "memory.total", "capacity.frame",
    "capacity.empty", "capacity.unbounded",
    // ui/: status text (DeviceVerdictView, DeployDialog, DeployMemoryView, ExportDialog, ExportFindingsView, SearchPanel,
    // EvaluationBox, TrainingInspectorPanel)
    "status.error", "status.pass", "status.fits", "status.over", "status.warn", "status.warn-dark", "status.finding", "search.error",
    // ui/: search playback (ParetoChart)
    "search.initial", "search.mutation", "search.crossover",
    // ui/: text, cards, banners, tables (NodeInspector, TrainingInspectorPanel, SvgGraphView, CostTableModel, TrainingLayerModel)
    "text.strong", "text.note", "text.caption", "text.faint", "text.dim", "text.frozen", "rule", "card.background", "card.border",
    "banner.background", "banner.border", "overlay.background", "overlay.border", "overlay.text", "table.peak", "layers.warning",
    "layers.weight", "layers.bias",
};

QRegularExpression hexColour() { return QRegularExpression(QStringLiteral("^#[0-9a-f]{6}$")); }

}  // namespace

class TestPalette : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyRoleUsedResolves()
    {
        for (const std::string& role : kRolesUsed) {
            const QString c = QString::fromStdString(paletteColour(role));
            QVERIFY2(hexColour().match(c).hasMatch(), (role + " = " + c.toStdString()).c_str());
        }
    }

    // The file holds exactly the roles used: a role renamed in code but not in the file fails above,
    // one left in the file after its last user went fails here.
    void paletteHoldsOnlyRolesInUse()
    {
        std::vector<std::string> used = kRolesUsed;
        std::sort(used.begin(), used.end());
        QVERIFY(std::adjacent_find(used.begin(), used.end()) == used.end());
        QCOMPARE(paletteRoles(), used);
    }

    // The compiled-in palette is the file in resources/ (one place to change a colour).
    void compiledInPaletteIsTheResourceFile()
    {
        QFile f(test::sourceDir() + QStringLiteral("/resources/palette.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto fromFile = parsePalette(f.readAll().toStdString(), "resources/palette.json");
        for (const auto& [role, colour] : fromFile) QCOMPARE(paletteColour(role), colour);
        QCOMPARE(fromFile.size(), paletteRoles().size());
    }

    // The diagrams draw with the palette: the kernel colours of the lab's block diagram and the
    // training graph's node styles are the palette's roles (the same strings, not copies).
    void diagramsDrawWithThePalette()
    {
        QCOMPARE(std::string(kernelColour(3)), paletteColour("arch.kernel3"));
        QCOMPARE(std::string(kernelColour(5)), paletteColour("arch.kernel5"));
        QCOMPARE(std::string(kernelColour(7)), paletteColour("arch.kernel7"));
        QCOMPARE(std::string(kernelColour(9)), paletteColour("arch.kernel-other"));
        QCOMPARE(kernelColour(3), paletteColour("arch.kernel3").c_str());
        QCOMPARE(std::string(trainingGraphNodeStyle(TrainingGraphNodeClass::Loss).border), paletteColour("graph.loss.border"));
        QCOMPARE(std::string(trainingGraphEdgeStyle(TrainingGraphEdgeClass::Saved).color), paletteColour("graph.edge.saved"));
    }

    void unknownRoleIsAClearError()
    {
        const QString e = test::inputErrorOf([] { paletteColour("arch.kernel4"); });
        QCOMPARE(e, QStringLiteral("resources/palette.json: no colour role 'arch.kernel4'"));
    }

    void malformedPaletteSaysWhere()
    {
        const auto errorOf = [](const std::string& text) {
            return test::inputErrorOf([&] { parsePalette(text, "my-palette.json"); });
        };
        QCOMPARE(errorOf(R"({"format": "tinyscope-palette", "colours": {"a": "#12345"}})"),
                 QStringLiteral("my-palette.json: colours.a must be \"#rrggbb\" (lower-case hex), not \"#12345\""));
        QCOMPARE(errorOf(R"({"format": "tinyscope-palette", "colours": {"a": 5}})"),
                 QStringLiteral("my-palette.json: colours.a must be \"#rrggbb\" (lower-case hex), not 5"));
        QCOMPARE(errorOf(R"({"format": "tinyscope-palette", "colours": {}})"),
                 QStringLiteral("my-palette.json: \"colours\" must be an object of role: \"#rrggbb\""));
        QCOMPARE(errorOf(R"({"colours": {"a": "#123456"}})"),
                 QStringLiteral("my-palette.json: not a palette (\"format\" must be \"tinyscope-palette\")"));
        QVERIFY(errorOf("{").startsWith(QStringLiteral("my-palette.json")));
    }
};

QTEST_MAIN(TestPalette)
#include "test_palette.moc"
