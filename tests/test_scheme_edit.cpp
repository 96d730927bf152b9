// Per-layer scheme edits (the Training inspector's toggles) and what they mean for export:
// toggling convs one by one gives exactly the scheme tiny-training's keys describe; every
// published scheme survives the way back to its keys; choices the keys cannot express say why;
// TinyEngine's kernel coverage (spec §9.7) flags exactly the choices it cannot compile; the
// ledger's CSV carries the ledger's integers.
#include "TestSupport.h"

#include "Error.h"
#include "graph/KernelCoverage.h"
#include "graph/LedgerCsv.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"
#include "graph/SchemeEdit.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"

#include <set>
#include <sstream>

using namespace tinyscope;
using test::inputErrorOf;

namespace {

std::set<int> convsWith(const std::vector<CoverageFinding>& f, const char* needle)
{
    std::set<int> s;
    for (const CoverageFinding& x : f)
        if (x.message.find(needle) != std::string::npos) s.insert(x.conv_index);
    return s;
}

std::vector<std::string> splitLines(const std::string& text)
{
    std::vector<std::string> lines;
    std::stringstream ss(text);
    std::string l;
    while (std::getline(ss, l)) lines.push_back(l);
    return lines;
}

std::vector<std::string> splitCommas(const std::string& line)
{
    std::vector<std::string> f;
    std::string cur;
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) {
            f.push_back(cur);
            cur.clear();
        } else cur += c;
    }
    f.push_back(cur);
    return f;
}

}  // namespace

class TestSchemeEdit : public QObject {
    Q_OBJECT
    Network mcunet = zooModel("mcunet-5fps");

private Q_SLOTS:
    void togglingConvsOneByOneGivesTheKeysScheme()
    {
        ResolvedScheme s = classifierOnlyScheme(mcunet);
        QCOMPARE(s.n_bias_update, 0);
        QCOMPARE(s.first_updated, 42);
        for (int i = 41; i >= 22; --i) setConvUpdate(s, mcunet, i, true, 0.0);
        setConvUpdate(s, mcunet, 24, true, 0.25);
        setConvUpdate(s, mcunet, 27, true, 0.5);
        setConvUpdate(s, mcunet, 30, true, 0.5);
        const ResolvedScheme published = schemeByName("mcunet-5fps/49kb", &mcunet).resolve(mcunet);
        QVERIFY(sameUpdates(s, published));
        QCOMPARE(s.n_bias_update, 20);
        QCOMPARE(s.first_updated, 22);
        QCOMPARE(s.conv(24).k, 12);
        QCOMPARE(s.conv(24).k_compiler, 12);
        // And back: toggling the weight off restores the bias-only row.
        setConvUpdate(s, mcunet, 24, true, 0.0);
        QCOMPARE(s.conv(24).k, 0);
        QVERIFY(!s.conv(24).weight());
    }

    void everyPublishedSchemeSurvivesTheWayBackToItsKeys()
    {
        for (const PublishedScheme& p : publishedSchemes()) {
            const Network net = zooModel(p.model);
            const ResolvedScheme r = p.scheme.resolve(net);
            QVERIFY2(schemeExpressibilityProblem(r, net).empty(), qPrintable(QString::fromStdString(p.id())));
            const SparseScheme keys = sparseSchemeOf(r, net);
            QCOMPARE(keys.n_bias_update, r.n_bias_update);
            QVERIFY2(sameUpdates(keys.resolve(net), r), qPrintable(QString::fromStdString(p.id())));
        }
    }

    void choicesTheKeysCannotExpressSayWhy()
    {
        ResolvedScheme s = classifierOnlyScheme(mcunet);
        setConvUpdate(s, mcunet, 41, true, 0.0);
        setConvUpdate(s, mcunet, 40, true, 0.0);
        setConvUpdate(s, mcunet, 38, true, 0.0);   // 39 is off: not one tail
        QCOMPARE(s.n_bias_update, 3);
        QCOMPARE(s.first_updated, 38);
        QString m = QString::fromStdString(schemeExpressibilityProblem(s, mcunet));
        QVERIFY2(m.contains(QStringLiteral("the bias of conv 38 is updated but not of conv 39")), qPrintable(m));
        QVERIFY2(m.contains(QStringLiteral("convs 40..41 form the tail")), qPrintable(m));
        m = inputErrorOf([&] { sparseSchemeOf(s, mcunet); });
        QVERIFY2(m.startsWith(QStringLiteral("mcunet-5fps: no tiny-training config")), qPrintable(m));

        ResolvedScheme w = classifierOnlyScheme(mcunet);
        setConvUpdate(w, mcunet, 41, true, 0.0);
        setConvUpdate(w, mcunet, 30, false, 0.5);   // weight without its bias, outside the tail
        m = QString::fromStdString(schemeExpressibilityProblem(w, mcunet));
        QVERIFY2(m.contains(QStringLiteral("the weight of conv 30 is updated outside the bias-updated tail (convs 41)")), qPrintable(m));

        // The ledger and the memory model take such choices as they are.
        const MemoryLedger l = TrainingMemoryModel(mcunet).ledger(s);
        QCOMPARE(l.extra.mask_bits, mcunet.conv(41).out.elems() + mcunet.conv(40).out.elems() + mcunet.conv(38).out.elems());
        QCOMPARE(l.extra.biases, 4LL * (mcunet.conv(41).cout + mcunet.conv(40).cout + mcunet.conv(38).cout));
    }

    void badEditsNameTheConv()
    {
        ResolvedScheme s = classifierOnlyScheme(mcunet);
        QString m = inputErrorOf([&] { setConvUpdate(s, mcunet, 24, true, 1.0 / 3); });
        QVERIFY2(m.contains(QStringLiteral("conv 24 (blocks.8.pw1)")) && m.contains(QStringLiteral("not one of 0, 1/8")), qPrintable(m));
        m = inputErrorOf([&] { setConvUpdate(s, mcunet, 42, true, 0.0); });
        QVERIFY2(m.contains(QStringLiteral("the classifier is always updated")), qPrintable(m));
        m = inputErrorOf([&] { setConvUpdate(s, mcunet, 0, false, 0.125); });   // stem: 3 input channels
        QVERIFY2(m.contains(QStringLiteral("ratio 1/8 selects no input channel of its 3")), qPrintable(m));
        QVERIFY(!ratioSelectsChannels(mcunet.conv(0), 0.125));
        QVERIFY(ratioSelectsChannels(mcunet.conv(0), 0.5));
        QVERIFY(sameUpdates(s, classifierOnlyScheme(mcunet)));   // failed edits change nothing
    }

    void theDemoSchemeCompilesOnTinyEngine()
    {
        // MIT's demo: mcunet-5fps with "49kb" runs on TinyEngine, so nothing may be flagged.
        const ResolvedScheme r = schemeByName("mcunet-5fps/49kb", &mcunet).resolve(mcunet);
        const std::vector<CoverageFinding> f = kernelCoverageFindings(mcunet, r);
        for (const CoverageFinding& x : f) qWarning("%d: %s", x.conv_index, x.message.c_str());
        QVERIFY(f.empty());
        // Back-propagation runs through the convs after the first updated one (22).
        const std::vector<char> passes = convsPassingGradient(mcunet, r);
        for (int i = 0; i < mcunet.numConvs(); ++i) QCOMPARE(bool(passes[std::size_t(i)]), i > 22);
    }

    void kernelCoverageFlagsWhatTheLibraryLacks()
    {
        REQUIRE_SHARED();
        // Depthwise weight updates: exactly where schemes.json's flag says the published schemes have them.
        const Json ref = readJsonFile(test::sharedPath("reference/tiny-training/schemes.json"));
        int flagged = 0;
        for (const Json& e : ref["schemes"]) {
            const Network net = zooModel(e["model"].get<std::string>());
            const ResolvedScheme r = schemeByName(e["model"].get<std::string>() + "/" + e["name"].get<std::string>(), &net).resolve(net);
            std::set<int> dw;
            for (int i = 0; i < net.numBackboneConvs(); ++i)
                if (r.conv(i).weight() && net.conv(i).depthwise()) dw.insert(i);
            QCOMPARE(convsWith(kernelCoverageFindings(net, r), "depthwise weight update"), dw);
            QCOMPARE(!dw.empty(), e["flags"]["depthwise_weight_update"].get<bool>());
            flagged += !dw.empty();
        }
        QCOMPARE(flagged, 2);   // mbv2-w0.35/49kb and mcunet-5fps/readme_last12_layers
    }

    void kernelCoverageExplainsEachRule()
    {
        ResolvedScheme s = classifierOnlyScheme(mcunet);
        setConvUpdate(s, mcunet, 12, true, 1.0);   // blocks.4.pw1 on a 16×16 map
        std::vector<CoverageFinding> f = kernelCoverageFindings(mcunet, s);
        QCOMPARE(convsWith(f, "weight gradient needs a 1×1 stride-1 conv on a 4×4 or 8×8 map"), std::set<int>{12});
        QCOMPARE(convsWith(f, "the map is 16×16"), std::set<int>{12});

        s = schemeByName("bias-only:20", &mcunet).resolve(mcunet);
        setConvUpdate(s, mcunet, 24, true, 0.125);   // k = 6 with the input gradient needed
        QCOMPARE(convsWith(kernelCoverageFindings(mcunet, s), "needs k % 4 == 0 (k = 6)"), std::set<int>{24});
        setConvUpdate(s, mcunet, 24, true, 0.25);    // k = 12: fine
        QVERIFY(kernelCoverageFindings(mcunet, s).empty());

        s = schemeByName("bias-only", &mcunet).resolve(mcunet);
        f = kernelCoverageFindings(mcunet, s);
        QCOMPARE(convsWith(f, "the stem cannot be trained"), std::set<int>{0});

        // Design-space subnets: squeeze-excite is outside the vocabulary; VWW has 2 classes.
        const DesignSpace space = presetSpace("mcunet-vww");
        const Network sub = networkFromSubnet(space, ArchSampler(space).labMaxConfig(space.resolutions.front()));
        f = kernelCoverageFindings(sub, schemeByName("bias-only:4", &sub).resolve(sub));
        QCOMPARE(convsWith(f, "squeeze-excite gates"), std::set<int>{-1});
        QCOMPARE(convsWith(f, "exactly 10 classes (this head has 2)"), std::set<int>{sub.numConvs() - 1});

        // MLPerf Tiny's ResNet-8: dense 3×3 convs have no _fpreq kernel.
        const Network resnet = zooModel("resnet-8");
        f = kernelCoverageFindings(resnet, schemeByName("classifier", &resnet).resolve(resnet));
        QCOMPARE(convsWith(f, "dense k×k convs"), std::set<int>{-1});
    }

    void ledgerCsvCarriesTheLedgersIntegers()
    {
        const ResolvedScheme r = schemeByName("mcunet-5fps/49kb", &mcunet).resolve(mcunet);
        const MemoryLedger m = TrainingMemoryModel(mcunet).ledger(r);
        ResolvedScheme odd = r;
        setConvUpdate(odd, mcunet, 27, true, 0.125);   // k = 6 of 48: a finding on row 27
        const std::vector<CoverageFinding> f = kernelCoverageFindings(mcunet, odd);
        const std::vector<std::string> lines = splitLines(memoryLedgerCsv(m, mcunet, "mcunet-5fps/49kb", f));
        QCOMPARE(lines[0], std::string("# model mcunet-5fps, autodiff correct"));
        QCOMPARE(lines[1], std::string("# scheme mcunet-5fps/49kb"));
        QCOMPARE(lines[2], std::string("# extra_bytes 50944, extra_bits 407552"));
        QCOMPARE(lines[3], "# peak_bytes " + std::to_string(m.peak_bytes) + ", peak_bytes_no_reorder " +
                               std::to_string(m.peak_bytes_no_reorder) + ", inference_peak_bytes 163840, trainable_bytes " +
                               std::to_string(m.trainable_bytes));
        QCOMPARE(lines[4], std::string("index,layer,role,bias,weight_ratio,k,cin,mask_bits,mask_bytes,bias_bytes,saved_input_bytes,"
                                       "weight_bytes,classifier_input_bytes,extra_bytes,tinyengine"));
        QCOMPARE(int(lines.size()), 5 + 43 + 1);
        const std::vector<std::string> row24 = splitCommas(lines[5 + 24]);
        QCOMPARE(row24, (std::vector<std::string>{"24", "blocks.8.pw1", "pw1", "1", "1/4", "12", "48", "9216", "1152", "576", "768",
                                                  "1728", "0", "4224", ""}));
        const std::vector<std::string> row27 = splitCommas(lines[5 + 27]);
        QVERIFY(row27[14].find("k % 4 == 0 (k = 6)") != std::string::npos);
        QCOMPARE(row27[4], std::string("1/2"));   // the ledger's scheme; the finding is the edited one's
        const std::vector<std::string> total = splitCommas(lines.back());
        QCOMPARE(total[0], std::string("total"));
        QCOMPARE(total[8], std::string("16480"));    // masks
        QCOMPARE(total[9], std::string("18368"));    // biases
        QCOMPARE(total[10], std::string("3840"));    // saved inputs
        QCOMPARE(total[11], std::string("12096"));   // weights
        QCOMPARE(total[12], std::string("160"));     // classifier input
        QCOMPARE(total[13], std::string("50944"));
        std::int64_t sum = 0;
        for (std::size_t i = 5; i + 1 < lines.size(); ++i) sum += std::stoll(splitCommas(lines[i])[13]);
        QVERIFY(sum >= 50944 && sum <= 50944 + 43);   // per-row mask bytes round up
    }
};

QTEST_MAIN(TestSchemeEdit)
#include "test_scheme_edit.moc"
