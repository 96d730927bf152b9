// The CLI as a user runs it: JSON shapes, exact values, and bad input as one line on stderr
// with exit code 2.
#include "TestSupport.h"
#include "Version.h"

#include "io/AtomicFile.h"
#include "io/Text.h"
#include "io/JsonFile.h"

#include <QProcess>
#include <QTemporaryDir>

using namespace tinyscope;

namespace {
using Run = test::CliRun;
}  // namespace

class TestCli : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;

private Q_SLOTS:
    // Every command's --help names every option the command accepts, and its usage lines name none
    // it does not: the dispatcher checks the text against the options the command declares
    // (cli/CliArgs.h, helpProblems) and exits 1 naming the option otherwise.
    void everyCommandsHelpMatchesItsOptions()
    {
        const Run list = test::runCli({QStringLiteral("help")});
        QCOMPARE(list.code, 0);
        QStringList commands;
        bool inList = false;
        for (const QString& line : QString::fromStdString(list.out).split(QLatin1Char('\n'))) {
            if (line == QStringLiteral("commands:")) inList = true;
            else if (inList && line.startsWith(QStringLiteral("  "))) commands << line.trimmed().section(QLatin1Char(' '), 0, 0);
            else if (inList) break;
        }
        QVERIFY2(commands.size() >= 20, qPrintable(commands.join(QLatin1Char(' '))));
        for (const QString& c : commands) {
            const Run r = test::runCli({c, QStringLiteral("--help")});
            QVERIFY2(r.code == 0 && r.err.empty(), qPrintable(c + QStringLiteral(": ") + QString::fromStdString(r.err)));
            QVERIFY2(r.out.find("usage:") != std::string::npos, qPrintable(c));
        }
    }

    // The version comes from CMake's project(VERSION), the one place it is written (issue 19: the
    // About box had its own copy).
    void versionIsTheProjects()
    {
        const auto r = test::runTinyscope({"--version"});
        QCOMPARE(r.code, 0);
        QCOMPARE(QString::fromStdString(r.out), QStringLiteral("tinyscope %1\n").arg(QStringLiteral(TINYSCOPE_PROJECT_VERSION)));
        QCOMPARE(std::string(tinyscopeVersion()), std::string(TINYSCOPE_PROJECT_VERSION));
    }

    void costJsonOfOneSubnet()
    {
        Run r = test::runCli({QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--json"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(r.code, 0);
        Json j = Json::parse(r.out);
        QVERIFY(j.is_object());
        QCOMPARE(j["macs"].get<long long>(), 8302128LL);
        QCOMPARE(j["macs_without_bn"].get<long long>(), 7237104LL);
        QCOMPARE(j["params"].get<long long>(), 304538LL);
        QCOMPARE(j["peak_activation_bytes"].get<long long>(), 73728LL);
        QVERIFY(j["flash_bytes"].get<long long>() > 0);
        QVERIFY(j["layers"].is_array() && j["layers"].size() > 50);
        QCOMPARE(j["config"]["image_size"].get<int>(), 96);
    }

    void costRandomReproducesTheLabsSeedZeroDraws()
    {
        REQUIRE_SHARED();
        Json ref = readJsonFile(test::sharedPath("reference/mcunet-vww/cost_reference.json"));
        Run r = test::runCli({QStringLiteral("cost"), QStringLiteral("--random"), QStringLiteral("10"), QStringLiteral("--seed"),
                     QStringLiteral("0"), QStringLiteral("--json"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(r.code, 0);
        Json j = Json::parse(r.out);
        QVERIFY(j.is_array());
        QCOMPARE(j.size(), std::size_t(10));
        for (int i = 0; i < 10; ++i) {
            const Json& e = ref["entries"][std::size_t(15 + i)];
            QCOMPARE(j[std::size_t(i)]["macs"].get<long long>(), e["macs"].get<long long>());
            QCOMPARE(j[std::size_t(i)]["peak_activation_bytes"].get<long long>(), e["peak_activation_bytes"].get<long long>());
            QCOMPARE(j[std::size_t(i)]["params"].get<long long>(), e["params"].get<long long>());
        }
    }

    void costOfConfigFileAndHumanTable()
    {
        std::string cfg = (tmp.path() + QStringLiteral("/max.json")).toStdString();
        writeFileAtomic(cfg, R"({"wid": 1, "ks": [7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7], "e": [6,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6,6], "d": [2,2,2,2,2,2], "image_size": 96})");
        Run r = test::runCli({QStringLiteral("cost"), QString::fromStdString(cfg), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.find("79.416432 M") != std::string::npos, r.out.c_str());
        QVERIFY(r.out.find("270.00 KB") != std::string::npos);
        QVERIFY(r.out.find("2,478,862") != std::string::npos);
        Run same = test::runCli({QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--resolution"), QStringLiteral("96"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(same.out, r.out);
        Run many = test::runCli({QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--max"), QStringLiteral("--json"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QVERIFY(Json::parse(many.out).is_array());
    }

    void costDrawsTheBlockDiagram()
    {
        // The lab's draw: title with the subnet's own MACs and peak SRAM, one node per active block
        // coloured by kernel size, the peak-SRAM block outlined; the format follows the suffix.
        auto file = [this](const char* name) { return tmp.path() + QLatin1Char('/') + QLatin1String(name); };
        Run j = test::runCli({QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--json"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(j.code, 0);
        const Json cost = Json::parse(j.out);
        for (const char* name : {"max.dot", "max.svg", "max.png"}) {
            Run r = test::runCli({QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--diagram"), file(name), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
            QCOMPARE(r.code, 0);
            QVERIFY2(r.out.rfind("wrote " + file(name).toStdString() + "\n", 0) == 0, r.out.c_str());
        }
        const std::string dot = readFileBytes(file("max.dot").toStdString());
        const std::string title = "MACs(M): " + formatFixed(cost["macs"].get<double>() / 1e6, 2) +
                                  "  PeakMem(KB): " + formatFixed(cost["peak_activation_bytes"].get<double>() / 1024, 2);
        QCOMPARE(title, std::string("MACs(M): 220.05  PeakMem(KB): 750.00"));
        QVERIFY2(dot.find("label=\"" + title + "\"") != std::string::npos, dot.c_str());
        auto count = [](const std::string& text, const std::string& what) {
            int n = 0;
            for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
            return n;
        };
        QCOMPARE(count(dot, "label=\"MBConv6-7x7\" fillcolor=\"#991400\""), 20);
        QCOMPARE(count(dot, "penwidth=4 color=\"#d62728\""), 1);
        const std::string svg = readFileBytes(file("max.svg").toStdString());
        QVERIFY(svg.find("<svg") != std::string::npos);
        QCOMPARE(count(svg, ">MBConv6&#45;7x7</text>") + count(svg, ">MBConv6-7x7</text>"), 20);
        const std::string png = readFileBytes(file("max.png").toStdString());
        QVERIFY(png.rfind("\x89PNG\r\n", 0) == 0);
        // --json stays parseable with --diagram: nothing but the JSON on stdout.
        Run both = test::runCli({QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--json"), QStringLiteral("--diagram"), file("min.gv"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(both.code, 0);
        QCOMPARE(Json::parse(both.out)["macs"].get<long long>(), 8302128LL);
        QVERIFY(readFileBytes(file("min.gv").toStdString()).rfind("digraph subnet {", 0) == 0);
    }

    void encodeDecodeRoundTrip()
    {
        std::string cfg = (tmp.path() + QStringLiteral("/min.json")).toStdString();
        writeFileAtomic(cfg, R"({"wid": 0, "ks": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "e": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "d": [0,0,0,0,0,0], "image_size": 96})");
        Run r = test::runCli({QStringLiteral("encode"), QString::fromStdString(cfg), QStringLiteral("--json"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(r.code, 0);
        Json j = Json::parse(r.out);
        QCOMPARE(j["one_hot_indices"].get<std::vector<int>>(),
                 (std::vector<int>{0, 5, 8, 17, 20, 29, 32, 41, 44, 53, 56, 65, 68, 77, 80, 89, 92, 101, 104, 113, 116, 125}));
        QCOMPARE(j["bits"].get<std::string>().size(), std::size_t(128));
        Run d = test::runCli({QStringLiteral("decode"), QString::fromStdString(j["bits"].get<std::string>()), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(d.code, 0);
        Json c = Json::parse(d.out);
        QCOMPARE(c["wid"].get<int>(), 0);
        QCOMPARE(c["d"].get<std::vector<int>>(), (std::vector<int>{0, 0, 0, 0, 0, 1}));
        QCOMPARE(c["ks"][2].get<int>(), 0);   // inactive block
        Run d2 = test::runCli({QStringLiteral("decode"), QStringLiteral("--indices"), QStringLiteral("0,5,8,17,20,29,32,41,44,53,56,65,68,77,80,89,92,101,104,113,116,125"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")});
        QCOMPARE(d2.out, d.out);
    }

    void spaceShow()
    {
        Run r = test::runCli({QStringLiteral("space"), QStringLiteral("show"), QStringLiteral("mcunet-vww")});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.find("mcunet-vww") != std::string::npos);
        QVERIFY(r.out.find("128 dims") != std::string::npos);
        Run j = test::runCli({QStringLiteral("space"), QStringLiteral("show"), QStringLiteral("mcunet-vww"), QStringLiteral("--json")});
        QCOMPARE(Json::parse(j.out)["n_classes"].get<int>(), 2);
    }

    // Without --space the CLI works in the default space, mcunet-fmnist: the GUI's first-start
    // workspace (space/SpacePresets.h, defaultSpaceName).
    void theDefaultSpaceIsFashionMnist()
    {
        Run show = test::runCli({QStringLiteral("space"), QStringLiteral("show")});
        QCOMPARE(show.code, 0);
        QVERIFY2(show.out.rfind("mcunet-fmnist (mcunet)\n", 0) == 0, show.out.c_str());
        QVERIFY(show.out.find("126 dims") != std::string::npos);
        Run cost = test::runCli({QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--json")});
        QCOMPARE(cost.code, 0);
        Run named = test::runCli({QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--json"), QStringLiteral("--space"), QStringLiteral("mcunet-fmnist")});
        QCOMPARE(cost.out, named.out);
        const Json j = Json::parse(cost.out);
        QCOMPARE(j["config"]["image_size"].get<int>(), 28);   // the smallest Fashion-MNIST resolution
        QCOMPARE(j["macs"].get<long long>(), 868008LL);
        QCOMPARE(j["peak_activation_bytes"].get<long long>(), 6272LL);
        QCOMPARE(j["params"].get<long long>(), 307618LL);
    }

    void badInputIsOneLineAndExitCode2()
    {
        std::string bad = (tmp.path() + QStringLiteral("/bad.json")).toStdString();
        writeFileAtomic(bad, R"({"wid": 0, "ks": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,9], "e": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "d": [0,0,0,0,0,0], "image_size": 96})");
        std::string broken = (tmp.path() + QStringLiteral("/broken.json")).toStdString();
        writeFileAtomic(broken, "{\"wid\": 0,");
        struct Case {
            QStringList args;
            const char* expect;
        } cases[] = {
            {{QStringLiteral("cost"), QString::fromStdString(bad), QStringLiteral("--space"), QStringLiteral("mcunet-vww")}, "bad.json: ks[19]: 9 is not one of [3, 5, 7]"},
            {{QStringLiteral("cost"), QString::fromStdString(broken)}, "broken.json: line 1"},
            {{QStringLiteral("cost"), QStringLiteral("/no/such/file.json")}, "/no/such/file.json: cannot open"},
            {{QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--macz")}, "unknown option --macz"},
            {{QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--resolution"), QStringLiteral("100")}, "--resolution 100 is not one of"},
            {{QStringLiteral("cost"), QStringLiteral("--random"), QStringLiteral("x")}, "--random: expected an integer"},
            {{QStringLiteral("cost")}, "nothing to cost"},
            {{QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--space"), QStringLiteral("mars")}, "unknown design space 'mars'"},
            {{QStringLiteral("decode"), QStringLiteral("0101"), QStringLiteral("--space"), QStringLiteral("mcunet-vww")}, "uses 128"},
            {{QStringLiteral("frobnicate")}, "unknown command 'frobnicate'"},
            {{QStringLiteral("cost"), QStringLiteral("--random"), QStringLiteral("2"), QStringLiteral("--diagram"), QStringLiteral("x.svg")},
             "--diagram draws one subnet; 2 are given"},
            {{QStringLiteral("cost"), QStringLiteral("--min"), QStringLiteral("--diagram"), QStringLiteral("x.pdf")},
             "x.pdf: unknown drawing format '.pdf' (use .svg, .png or .dot)"},
        };
        for (const Case& c : cases) {
            Run r = test::runCli(c.args);
            QVERIFY2(r.code == 2, qPrintable(c.args.join(QLatin1Char(' ')) + QStringLiteral(" exit %1").arg(r.code)));
            QVERIFY2(r.err.find(c.expect) != std::string::npos, r.err.c_str());
            QCOMPARE(test::lineCount(r.err), 1);
            QVERIFY(r.out.empty());
        }
    }

    // Issue 45: "--epochs 1 … --epochs 50" silently took the last; every command refuses an option
    // given twice, valued or flag, before doing anything.
    void anOptionGivenTwiceIsRefused()
    {
        const std::pair<QStringList, std::string> cases[] = {
            {{"cost", "--min", "--resolution", "96", "--resolution=128"}, "--resolution"},
            {{"cost", "--min", "--json", "--json"}, "--json"},
            {{"finetune", "--model", "mcunet-5fps", "--epochs", "1", "--epochs", "50"}, "--epochs"},
        };
        for (const auto& [args, option] : cases) {
            const Run r = test::runCli(args);
            QVERIFY2(r.code == 2, qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(" exit %1").arg(r.code)));
            QVERIFY2(r.err.find("option " + option + " is given twice; give it once") != std::string::npos, r.err.c_str());
            QCOMPARE(test::lineCount(r.err), 1);
            QVERIFY(r.out.empty());
        }
    }

    // Issue 45: finetune / finetune-table with --out a file ended as "internal error (please report)"
    // (exit 1) after loading the model; "--schemes ," gave an empty table with exit 0; a scheme given
    // twice ran twice into one folder. Each is refused first, naming what is wrong (exit 2).
    void fineTuneRefusesABadOutOrSchemeListFirst()
    {
        const QString file = tmp.path() + QStringLiteral("/ft-file"), dir = tmp.path() + QStringLiteral("/ft-table");
        writeFileAtomic(file.toStdString(), "x");
        const QStringList model{"--model", "mcunet-5fps"};
        struct Case {
            QStringList args;
            std::string expect;
        } cases[] = {
            {QStringList{"finetune"} + model + QStringList{"--out", file}, "--out " + file.toStdString() + ": exists and is not a folder"},
            {QStringList{"finetune", "--budget", "49"} + model + QStringList{"--out", file + "/sub"},
             "--out " + file.toStdString() + "/sub: cannot create it: " + file.toStdString() + " is not a folder"},
            {QStringList{"finetune-table", "--schemes", "bias-only"} + model + QStringList{"--out", file}, "--out " + file.toStdString() + ": exists and is not a folder"},
            {QStringList{"finetune-table", "--schemes", ","} + model + QStringList{"--out", dir}, "--schemes ',': entry 1 is empty (give S1,S2,…)"},
            {QStringList{"finetune-table", "--schemes", "full,,bias-only"} + model + QStringList{"--out", dir}, "--schemes 'full,,bias-only': entry 2 is empty"},
            {QStringList{"finetune-table", "--schemes", "bias-only,full,bias-only"} + model + QStringList{"--out", dir}, "--schemes: 'bias-only' is given twice"},
            {QStringList{"finetune-table", "--schemes", "full", "--no-qas-for", "full,full"} + model + QStringList{"--out", dir},
             "--no-qas-for: 'full' is given twice"},
            {QStringList{"finetune-table", "--schemes", "a/49kb,b/49kb"} + model + QStringList{"--out", dir},
             "--schemes: 'a/49kb' and 'b/49kb' would share the run folder 49kb"},
        };
        for (const Case& c : cases) {
            const Run r = test::runCli(c.args);
            QVERIFY2(r.code == 2, qPrintable(c.args.join(QLatin1Char(' ')) + QStringLiteral(" exit %1: ").arg(r.code) + QString::fromStdString(r.err)));
            QVERIFY2(r.err.find(c.expect) != std::string::npos, r.err.c_str());
            QCOMPARE(test::lineCount(r.err), 1);
            QVERIFY(r.out.empty());
        }
        QVERIFY(!QFileInfo::exists(dir));   // refused before any work
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
