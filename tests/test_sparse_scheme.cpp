// Sparse-update schemes: tiny-training's config keys read from JSON and YAML in every form the
// Python tools write (lists, dash strings, single numbers, "all", fractions), written back so
// that tiny-training's own parser reads the same scheme, and invalid schemes rejected with a
// message naming the entry.
#include "TestSupport.h"

#include "Error.h"
#include "graph/PublishedSchemes.h"
#include "io/AtomicFile.h"
#include "io/YamlSubset.h"
#include "zoo/ZooCatalog.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

using namespace tinyscope;
using test::inputErrorOf;

class TestSparseScheme : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;
    Network mcunet = zooModel("mcunet-5fps");

    std::string path(const char* name) { return (tmp.path() + QLatin1Char('/') + QLatin1String(name)).toStdString(); }

private Q_SLOTS:
    void yamlSubsetReadsATinyTrainingStyleConfig()
    {
        const Json j = parseYamlSubset(R"(# a run config
run_dir: null
manual_seed: 0
evaluate: false
data_provider:
  dataset: image_folder   # comment after a value
  resize_scale: 0.08
  image_size: 128
run_config:
  no_wd_keys: ['norm', 'bias']
  base_lr: 2.5e-2
  flags:
  - 1
  - two
backward_config:
  enable_backward_config: 1
  n_bias_update: 20
  manual_weight_idx: 23-24-27-30-33-39
  weight_update_ratio: 0-0.25-0.5-0.5-0-0
  weight_select_criteria: "magnitude+"
  pw1_weight_only: no
)",
                                       "run.yaml");
        QVERIFY(j["run_dir"].is_null());
        QCOMPARE(j["manual_seed"].get<int>(), 0);
        QCOMPARE(j["evaluate"].get<bool>(), false);
        QCOMPARE(j["data_provider"]["dataset"].get<std::string>(), std::string("image_folder"));
        QCOMPARE(j["data_provider"]["resize_scale"].get<double>(), 0.08);
        QCOMPARE(j["run_config"]["no_wd_keys"], Json::array({"norm", "bias"}));
        QCOMPARE(j["run_config"]["base_lr"].get<double>(), 0.025);
        QCOMPARE(j["run_config"]["flags"], Json::array({1, "two"}));
        QCOMPARE(j["backward_config"]["manual_weight_idx"].get<std::string>(), std::string("23-24-27-30-33-39"));
        QCOMPARE(j["backward_config"]["pw1_weight_only"].get<bool>(), false);
        // The whole config is accepted as a scheme file: the keys sit under backward_config.
        const SparseScheme s = SparseScheme::fromJson(j, "run.yaml");
        QVERIFY(s == schemeByName("mcunet-5fps/49kb", nullptr));
    }

    void yamlErrorsNameTheLine()
    {
        const QString e = inputErrorOf([] { parseYamlSubset("a: 1\nb:\n  c: [1, 2\n", "bad.yaml"); });
        QVERIFY2(e.contains("bad.yaml: line 3"), qPrintable(e));
        QVERIFY(inputErrorOf([] { parseYamlSubset("a: 1\n\tb: 2\n", "tab.yaml"); }).contains("line 2"));
        QVERIFY(inputErrorOf([] { parseYamlSubset("a: &x 1\n", "anchor.yaml"); }).contains("not supported"));
        QVERIFY(inputErrorOf([] { parseYamlSubset("a: 1\na: 2\n", "dup.yaml"); }).contains("duplicate key 'a'"));
    }

    void everyWayToWriteTheKeysReadsTheSameScheme()
    {
        const SparseScheme want = schemeByName("mcunet-5fps/49kb", nullptr);
        const char* forms[] = {
            R"({"n_bias_update": 20, "manual_weight_idx": [23, 24, 27, 30, 33, 39], "weight_update_ratio": [0, 0.25, 0.5, 0.5, 0, 0]})",
            R"({"backward_config": {"n_bias_update": 20, "manual_weight_idx": "23-24-27-30-33-39", "weight_update_ratio": "0-0.25-0.5-0.5-0-0"}})",
            R"({"n_bias_update": 20, "manual_weight_idx": ["23", 24, 27, 30, 33, 39], "weight_update_ratio": ["0", "1/4", "1/2", 0.5, "0", 0]})",
        };
        for (const char* f : forms) QVERIFY2(SparseScheme::fromJson(Json::parse(f), "form") == want, f);
        // A single ratio applies to every index; "all" is the whole backbone.
        SparseScheme s = SparseScheme::fromJson(Json::parse(R"({"n_bias_update": "all", "manual_weight_idx": "39-40", "weight_update_ratio": 0.5})"), "x");
        QCOMPARE(s.weight_update_ratio, (std::vector<double>{0.5, 0.5}));
        const ResolvedScheme r = s.resolve(mcunet);
        QCOMPARE(r.n_bias_update, 42);
        QCOMPARE(r.first_updated, 0);
        QCOMPARE(r.conv(39).k, 48);   // ½ of 96
        QCOMPARE(r.conv(40).k, 288);  // depthwise: ½ of 576 channels
        QCOMPARE(parseRatio("1/8", "r"), 0.125);
        QCOMPARE(formatRatio(0.125), std::string("1/8"));
    }

    void readmeLast12LayersUsesNWeightUpdate()
    {
        const ResolvedScheme r = schemeByName("mcunet-5fps/readme_last12_layers", nullptr).resolve(mcunet);
        for (int i = 0; i < 42; ++i) {
            QCOMPARE(r.conv(i).bias, i >= 30);
            QCOMPARE(r.conv(i).weight(), i >= 30);
            if (i >= 30) QCOMPARE(r.conv(i).k, mcunet.conv(i).cin);   // all channels
        }
    }

    void pw1WeightOnlyDropsOtherLayers()
    {
        SparseScheme s = SparseScheme::lastLayers(mcunet, 6);   // convs 36..41
        s.pw1_weight_only = true;
        const ResolvedScheme r = s.resolve(mcunet);
        for (int i = 36; i < 42; ++i) QCOMPARE(r.conv(i).weight(), mcunet.conv(i).role == "pw1");
    }

    void jsonAndYamlRoundTrip()
    {
        for (const PublishedScheme& p : publishedSchemes()) {
            for (const char* file : {"s.json", "s.yaml"}) {
                p.scheme.saveFile(path(file));
                QVERIFY2(SparseScheme::loadFile(path(file)) == p.scheme, (p.id() + " " + file).c_str());
            }
        }
        // YAML holds dash strings, JSON holds lists.
        schemeByName("mcunet-5fps/49kb", nullptr).saveFile(path("d.yaml"));
        QVERIFY(QString::fromStdString(readFileBytes(path("d.yaml"))).contains("manual_weight_idx: 23-24-27-30-33-39"));
        schemeByName("mcunet-5fps/49kb", nullptr).saveFile(path("d.json"));
        QCOMPARE(readJsonFile(path("d.json"))["backward_config"]["manual_weight_idx"], Json::array({23, 24, 27, 30, 33, 39}));
    }

    void tinyTrainingsParserReadsOurYaml()
    {
        // What algorithm/core/utils/partial_backward.py does with the loaded YAML values.
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (python.isEmpty()) QSKIP("python3 not installed");
        QProcess probe;
        probe.start(python, {QStringLiteral("-c"), QStringLiteral("import yaml")});
        probe.waitForFinished();
        if (probe.exitCode() != 0) QSKIP("python3-yaml not installed");
        for (const char* id : {"mbv2-w0.35/73kb", "proxyless-w0.3/49kb", "mcunet-5fps/readme_last12_layers"}) {
            const SparseScheme s = schemeByName(id, nullptr);
            s.saveFile(path("py.yaml"));
            QProcess p;
            p.start(python, {QStringLiteral("-c"),
                             QStringLiteral("import sys, yaml, json\n"
                                            "c = yaml.safe_load(open(sys.argv[1]))['backward_config']\n"
                                            "idx = [int(v) for v in str(c['manual_weight_idx']).split('-')] if c['manual_weight_idx'] is not None else None\n"
                                            "r = c['weight_update_ratio']\n"
                                            "r = None if r is None else ([r] * len(idx) if isinstance(r, (int, float)) else [float(v) for v in r.split('-')])\n"
                                            "print(json.dumps({'n_bias_update': c['n_bias_update'], 'idx': idx, 'ratio': r, 'n_weight_update': c.get('n_weight_update')}))\n"),
                             QString::fromStdString(path("py.yaml"))});
            QVERIFY(p.waitForFinished(30000));
            QCOMPARE(p.exitCode(), 0);
            const Json got = Json::parse(p.readAllStandardOutput().toStdString());
            QCOMPARE(got["n_bias_update"].get<int>(), s.n_bias_update);
            if (s.manual_weight_idx.empty()) {
                QVERIFY(got["idx"].is_null());
                QCOMPARE(got["n_weight_update"].get<int>(), s.n_weight_update);
            } else {
                QCOMPARE(got["idx"].get<std::vector<int>>(), s.manual_weight_idx);
                QCOMPARE(got["ratio"].get<std::vector<double>>(), s.weight_update_ratio);
            }
        }
    }

    void invalidSchemesNameTheEntry()
    {
        auto resolveError = [&](const char* json) {
            return inputErrorOf([&] { SparseScheme::fromJson(Json::parse(json), "my.json").resolve(mcunet, "my.json"); });
        };
        QString e = resolveError(R"({"n_bias_update": 20, "manual_weight_idx": [23, 45], "weight_update_ratio": [1, 1]})");
        QVERIFY2(e.contains("my.json") && e.contains("manual_weight_idx[1] = 45") && e.contains("out of range"), qPrintable(e));
        e = resolveError(R"({"n_bias_update": 20, "manual_weight_idx": [23, 24], "weight_update_ratio": [1, 0.3]})");
        QVERIFY2(e.contains("weight_update_ratio[1] = 0.3") && e.contains("not allowed"), qPrintable(e));
        e = resolveError(R"({"n_bias_update": 20, "manual_weight_idx": [23, 24], "weight_update_ratio": [1]})");
        QVERIFY2(e.contains("2 entries") && e.contains("has 1"), qPrintable(e));
        e = resolveError(R"({"n_bias_update": 5, "manual_weight_idx": [23], "weight_update_ratio": [1]})");
        QVERIFY2(e.contains("manual_weight_idx[0] = 23") && e.contains("outside the bias-updated tail"), qPrintable(e));
        e = resolveError(R"({"n_bias_update": 20, "manual_weight_idx": [30, 30], "weight_update_ratio": [1, 1]})");
        QVERIFY2(e.contains("manual_weight_idx[1] = 30") && e.contains("twice"), qPrintable(e));
        e = resolveError(R"({"n_bias_update": 43})");
        QVERIFY2(e.contains("n_bias_update = 43"), qPrintable(e));
        e = resolveError(R"({"n_bias_update": 20, "manual_weight_idx": "23-x"})");
        QVERIFY2(e.contains("manual_weight_idx") && e.contains("'x'"), qPrintable(e));
        e = resolveError(R"({"n_bias_update": 20, "manual_weigth_idx": [23]})");
        QVERIFY2(e.contains("unknown key 'manual_weigth_idx'"), qPrintable(e));
        e = resolveError(R"({"manual_weight_idx": [23]})");
        QVERIFY2(e.contains("missing key 'n_bias_update'"), qPrintable(e));
        // ⅛ of the DS-CNN stem's single input channel selects none; ⅛ of the autoencoder's
        // 8-feature bottleneck output layer selects one.
        const Network dscnn = zooModel("ds-cnn-s"), ae = zooModel("autoencoder");
        e = inputErrorOf([&] {
            SparseScheme s;
            s.n_bias_update = 9;
            s.manual_weight_idx = {0};
            s.weight_update_ratio = {0.125};
            s.resolve(dscnn, "k.json");
        });
        QVERIFY2(e.contains("selects no input channel of conv 0"), qPrintable(e));
        SparseScheme one;
        one.n_bias_update = 9;
        one.manual_weight_idx = {5};
        one.weight_update_ratio = {0.125};
        QCOMPARE(one.resolve(ae).conv(5).k, 1);
        QVERIFY(inputErrorOf([] { schemeByName("mcunet-5fps/50kb", nullptr); }).contains("mcunet-5fps/49kb"));
        QVERIFY(inputErrorOf([] { parseRatio("1/0", "--weight-ratio: entry 3"); }).contains("entry 3"));
    }
};

QTEST_GUILESS_MAIN(TestSparseScheme)
#include "test_sparse_scheme.moc"
