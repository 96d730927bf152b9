// The supernet evaluator on the real checkpoint format: reference logits, parameter counts equal
// to the cost model, checkpoint validation messages, saving files Python's torch.load reads.
#include "ReferenceLogits.h"
#include "TestSupport.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "io/AtomicFile.h"
#include "nn/supernet/Supernet.h"
#include "nn/supernet/SubnetWeights.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <QProcess>
#include <QTemporaryDir>

#include <cstring>
#include <fstream>

using namespace tinyscope;
using test::errorOf;

namespace {
const char* kCkpt = "reference/mcunet-vww/ofa_mcunet384_vww_seed0_perturbed.pth";


long procStatusKB(const char* field)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
    return -1;
}

QString systemPython() { return QFileInfo::exists(QStringLiteral("/usr/bin/python3")) ? QStringLiteral("/usr/bin/python3") : QStringLiteral("python3"); }
}  // namespace

class TestSupernet : public QObject {
    Q_OBJECT
    DesignSpace space = presetSpace("mcunet-vww");
    QTemporaryDir tmp;

private Q_SLOTS:
    void initTestCase() { REQUIRE_SHARED(); }

    void reproducesReferenceLogits()
    {
        Json ref = test::referenceLogits();
        Supernet net = Supernet::load(space, test::sharedPath(kCkpt));
        const at::Tensor x = test::referenceLogitsInput();
        if (!x.defined()) return;
        int cases = 0;
        for (auto& [name, c] : ref["seed0_perturbed"].items()) {
            Subnet sub = net.extract(SubnetConfig::fromJson(c["config"], space, name));
            at::Tensor logits = sub.forward(x);
            std::vector<double> expected = c["logits"].get<std::vector<double>>();
            QCOMPARE(logits.numel(), std::int64_t(expected.size()));
            for (std::size_t i = 0; i < expected.size(); ++i) {
                double got = logits[0][static_cast<long>(i)].item<double>();
                QVERIFY2(std::fabs(got - expected[i]) <= 3e-4,
                         qPrintable(QStringLiteral("%1 logit %2: %3 vs %4").arg(QString::fromStdString(name)).arg(i).arg(got).arg(expected[i])));
            }
            // Folding BN into the convs changes nothing beyond float rounding.
            sub.setFolded(true);
            const double foldDiff = (sub.forward(x) - logits).abs().max().item<double>();
            qInfo("%s: folded-BN logits differ by %g", name.c_str(), foldDiff);
            QVERIFY2(foldDiff < 3e-4, qPrintable(QString::number(foldDiff)));
            QCOMPARE(static_cast<std::int64_t>(sub.stateDict().size()),
                     name == "min_96" ? std::int64_t(c["subnet_state_dict_n_keys"].get<int>()) : static_cast<std::int64_t>(sub.stateDict().size()));
            ++cases;
        }
        QCOMPARE(cases, 4);
    }

    void subnetKeyNamesAreTheLabs()
    {
        Json ref = readJsonFile(test::sharedPath("reference/mcunet-vww/logits_reference.json"));
        const Json& c = ref["seed0_perturbed"]["min_96"];
        Supernet net = Supernet::load(space, test::sharedPath(kCkpt));
        StateDict sd = net.extract(SubnetConfig::fromJson(c["config"], space, "min")).stateDict();
        std::vector<std::string> first = c["subnet_state_dict_first_keys"].get<std::vector<std::string>>();
        for (std::size_t i = 0; i < first.size(); ++i) QCOMPARE(sd[i].first, first[i]);
        QCOMPARE(static_cast<int>(sd.size()), c["subnet_state_dict_n_keys"].get<int>());
    }

    void parameterCountEqualsCostModelOnAll25()
    {
        Json ref = readJsonFile(test::sharedPath("reference/mcunet-vww/cost_reference.json"));
        Supernet net = Supernet::load(space, test::sharedPath(kCkpt));
        CostModel model(space);
        for (const Json& e : ref["entries"]) {
            SubnetConfig c = SubnetConfig::fromJson(e["config"], space, "entry");
            Subnet sub = net.extract(c);
            QCOMPARE(sub.parameterCount(), model.summary(c).params);
            QCOMPARE(sub.parameterCount(), e["params"].get<std::int64_t>());
            std::int64_t viaModule = 0;
            for (const auto& p : sub.module().parameters()) viaModule += p.numel();
            QCOMPARE(viaModule, sub.parameterCount());
        }
    }

    void channelsLastIsAsAccurateAsNchw()
    {
        // Training mode (batch statistics), the largest and a random subnet of the shipped
        // Fashion-MNIST supernet: against a float64 NCHW reference, the float32 channels-last logits
        // and every parameter's gradient are within 1 % of each tensor's largest element, like the
        // float32 NCHW ones. (The two float32 layouts sum in different orders; on freshly initialised
        // weights training-mode BN makes the gradients so ill-conditioned that both are 5-20 % off
        // float64 there.)
        const DesignSpace fm = presetSpace("mcunet-fmnist");
        ArchSampler sampler(fm);
        PyRandom rng(3);
        at::manual_seed(0);
        const at::Tensor x = at::randn({16, 3, 36, 36});
        const at::Tensor y = at::randint(0, 10, {16}, at::kLong);
        const std::string path = (test::sourceDir() + QStringLiteral("/models/supernets/mcunet-fmnist.pth")).toStdString();
        Supernet ref = Supernet::load(fm, path);
        for (const auto& kv : ref.stateDict())
            if (at::isFloatingType(kv.second.scalar_type())) ref.tensor(kv.first).set_data(ref.tensor(kv.first).detach().to(at::kDouble));
        Supernet net = Supernet::load(fm, path);
        for (const SubnetConfig& cfg : {sampler.fullMaxConfig(36), sampler.random(rng)}) {
            auto run = [&](Supernet& s, const at::Tensor& input, bool channelsLast) {
                ForwardOptions fo;
                fo.bn = BnMode::Train;
                fo.momentum = 0.0;   // leave the running statistics as they are
                fo.channels_last = channelsLast;
                at::Tensor out = forwardNet(s.weightsFor(cfg), input, fo);
                at::cross_entropy_loss(out, y).backward();
                std::vector<at::Tensor> g{out.detach().to(at::kDouble)};
                for (at::Tensor p : s.parameters()) {
                    g.push_back(p.grad().defined() ? p.grad().to(at::kDouble).clone() : at::Tensor());
                    if (p.grad().defined()) p.mutable_grad().zero_();
                }
                return g;
            };
            const std::vector<at::Tensor> exact = run(ref, x.to(at::kDouble), false);
            const std::vector<at::Tensor> nchw = run(net, x, false);
            const std::vector<at::Tensor> cl = run(net, x, true);
            double worstNchw = 0, worstCl = 0;
            int compared = 0;
            for (std::size_t k = 0; k < exact.size(); ++k) {
                QCOMPARE(cl[k].defined(), exact[k].defined());
                if (!exact[k].defined()) continue;
                // Gradients that are zero in exact arithmetic (a BN's β feeding straight into the next BN)
                // come out as float noise in both layouts: measure those against 1e-3 instead.
                const double scale = std::max(exact[k].abs().max().item<double>(), 1e-3);
                worstNchw = std::max(worstNchw, (nchw[k] - exact[k]).abs().max().item<double>() / scale);
                worstCl = std::max(worstCl, (cl[k] - exact[k]).abs().max().item<double>() / scale);
                ++compared;
            }
            qInfo("relative error against float64: NCHW %.3g, channels-last %.3g (%d tensors)", worstNchw, worstCl, compared);
            QVERIFY(compared > 50);
            // Measured: NCHW 8e-5 of a tensor's largest element; channels-last 5e-4 on the third
            // shipped supernet and 2.6e-3 on the fourth, all in the weight gradients of the first 1x1
            // convs (18x18 maps): oneDNN's fp32 jit_1x1 backward-weights kernel for NHWC sums the
            // batch x 324 positions in a longer running order than the NCHW path (ONEDNN_VERBOSE;
            // strict fp32 math, no bf16). Far below a minibatch's own noise; a layout mistake would be O(1).
            QVERIFY2(worstNchw < 1e-2 && worstCl < 1e-2, qPrintable(QStringLiteral("%1 vs %2").arg(worstCl).arg(worstNchw)));
        }
    }

    void extractingTheLargestSubnetDoesNotCopyTheSupernet()
    {
        Supernet net = Supernet::load(space, test::sharedPath(kCkpt));
        const long supernetKB = static_cast<long>(net.parameterBytes() / 1024);
        { std::ofstream("/proc/self/clear_refs") << "5"; }   // reset the peak-RSS mark
        const long before = procStatusKB("VmRSS:");
        Subnet sub = net.extract(ArchSampler(space).fullMaxConfig(160));
        const long peak = procStatusKB("VmHWM:");
        QVERIFY(before > 0 && peak > 0);
        // Supernet + extraction together stay below 2x the supernet.
        QVERIFY2(peak - before < supernetKB,
                 qPrintable(QStringLiteral("extraction added %1 KB at peak, supernet is %2 KB").arg(peak - before).arg(supernetKB)));
    }

    void checkpointErrorsNameKeyAndShapes()
    {
        StateDict sd = loadStateDict(test::sharedPath(kCkpt));
        const std::string dir = tmp.path().toStdString();
        // Missing key.
        StateDict missing = sd;
        missing.erase(missing.begin() + 7);
        saveStateDict(dir + "/missing.pth", missing);
        std::string msg = errorOf([&] { Supernet::load(space, dir + "/missing.pth"); });
        QVERIFY2(msg.find("missing keys: blocks.0.mobile_inverted_conv.point_linear.bn.bn.weight [16]") != std::string::npos, msg.c_str());
        // Wrong shape.
        StateDict wrong = sd;
        wrong[0].second = at::zeros({16, 3, 3, 3});
        saveStateDict(dir + "/wrong.pth", wrong);
        msg = errorOf([&] { Supernet::load(space, dir + "/wrong.pth"); });
        QVERIFY2(msg.find("first_conv.conv.conv.weight: checkpoint has [16, 3, 3, 3], space 'mcunet-vww' needs [32, 3, 3, 3]") != std::string::npos, msg.c_str());
        // Unexpected key.
        StateDict extra = sd;
        extra.emplace_back("head.weight", at::zeros({2, 2}));
        saveStateDict(dir + "/extra.pth", extra, false);
        msg = errorOf([&] { Supernet::load(space, dir + "/extra.pth"); });
        QVERIFY2(msg.find("unexpected keys: head.weight [2, 2]") != std::string::npos, msg.c_str());
        // Truncated file.
        std::string bytes = readFileBytes(test::sharedPath(kCkpt));
        writeFileAtomic(dir + "/truncated.pth", bytes.substr(0, bytes.size() / 2));
        msg = errorOf([&] { Supernet::load(space, dir + "/truncated.pth"); });
        QVERIFY2(msg.find("truncated.pth: unreadable checkpoint") != std::string::npos, msg.c_str());
        // Not a zip at all.
        writeFileAtomic(dir + "/text.pth", "hello, I am not a checkpoint");
        msg = errorOf([&] { Supernet::load(space, dir + "/text.pth"); });
        QVERIFY2(msg.find("text.pth: not a PyTorch checkpoint") != std::string::npos, msg.c_str());
        // A checkpoint of another space (VWW weights, a 10-class space).
        Json other = space.toJson();
        other["n_classes"] = 10;
        other.erase("class_names");
        DesignSpace ten = DesignSpace::fromJson(other, "ten");
        msg = errorOf([&] { Supernet::load(ten, test::sharedPath(kCkpt)); });
        QVERIFY2(msg.find("classifier.linear.linear.weight: checkpoint has [2, 384], space 'mcunet-vww' needs [10, 384]") != std::string::npos, msg.c_str());
    }

    // Issue 46: --init-from takes another space's supernet where the layers agree. The shipped
    // Fashion-MNIST supernet starts its squeeze-and-excite-free variant (mcunet-fmnist-te): every
    // weight of the new space comes from the file, bit for bit, and the SE layers are left unused; a
    // file whose shared layers differ in shape (VWW's 2-class head in a 10-class space) is refused.
    // A file of the space itself gives what load() gives.
    void initializeFromTakesARelatedSpacesWeights()
    {
        const std::string shipped = (test::sourceDir() + QStringLiteral("/models/supernets/mcunet-fmnist.pth")).toStdString();
        const DesignSpace te = presetSpace("mcunet-fmnist-te");
        WeightTransfer w;
        const Supernet s = Supernet::initializeFrom(te, 1, shipped, &w);
        const StateDict file = loadStateDict(shipped);
        int weights = 0;
        for (const SchemaEntry& e : supernetSchema(te).entries) weights += e.is_int64 ? 0 : 1;
        QCOMPARE(w.taken, weights);
        QVERIFY(w.fresh.empty());
        QVERIFY(!w.unused.empty());
        for (const std::string& k : w.unused) QVERIFY2(k.find(".se.") != std::string::npos, k.c_str());
        for (const auto& [key, t] : file)
            if (key.find(".se.") == std::string::npos && key.find("num_batches_tracked") == std::string::npos)
                QVERIFY2(at::equal(s.tensor(key), t.to(at::kFloat)), key.c_str());
        QVERIFY2(w.summary().find(std::to_string(weights) + " tensors taken from ") == 0, w.summary().c_str());

        // The other way round: the SE layers start fresh.
        const DesignSpace fm = presetSpace("mcunet-fmnist");
        const std::string dir = tmp.path().toStdString();
        Supernet::initializeFrom(te, 1, shipped).save(dir + "/te.pth");
        WeightTransfer back;
        const Supernet withSe = Supernet::initializeFrom(fm, 3, dir + "/te.pth", &back);
        QCOMPARE(back.fresh.size(), w.unused.size());
        QVERIFY(back.unused.empty());
        QVERIFY(at::equal(withSe.tensor(back.fresh.front()), Supernet::initialize(fm, 3).tensor(back.fresh.front())));

        // Same space: what load() gives.
        const Supernet loaded = Supernet::load(fm, shipped), taken = Supernet::initializeFrom(fm, 9, shipped);
        for (const SchemaEntry& e : supernetSchema(fm).entries) QVERIFY2(at::equal(loaded.tensor(e.key), taken.tensor(e.key)), e.key.c_str());

        // Shared layers of another shape: refused with the key and both shapes.
        const std::string msg = errorOf([&] { Supernet::initializeFrom(fm, 1, test::sharedPath(kCkpt)); });
        QVERIFY2(msg.find("not the weights of a related space of 'mcunet-fmnist'") != std::string::npos &&
                     msg.find("checkpoint has [2, 384], space 'mcunet-fmnist' needs [10, 384]") != std::string::npos,
                 msg.c_str());
    }

    void savedFilesRoundTripAndLoadInPython()
    {
        Supernet net = Supernet::load(space, test::sharedPath(kCkpt));
        const std::string sp = tmp.path().toStdString() + "/supernet.pth";
        net.save(sp);
        Supernet back = Supernet::load(space, sp);
        for (const auto& kv : net.stateDict()) QVERIFY(at::equal(kv.second, back.tensor(kv.first)));
        SubnetConfig c = ArchSampler(space).minConfig(96);
        const std::string sub = tmp.path().toStdString() + "/subnet.pth";
        net.extract(c).save(sub);

        QProcess py;
        py.start(systemPython(), {QStringLiteral("-c"), QStringLiteral(
            "import sys\n"
            "try:\n import torch\nexcept ImportError:\n print('NO_TORCH'); sys.exit(0)\n"
            "a=torch.load(sys.argv[1])['state_dict']; b=torch.load(sys.argv[2])['state_dict']\n"
            "print(len(a), tuple(a['blocks.1.mobile_inverted_conv.depth_conv.conv.7to5_matrix'].shape), len(b),"
            " tuple(b['blocks.1.mobile_inverted_conv.depth_conv.conv.weight'].shape), float(a['classifier.linear.linear.bias'].sum()))"),
            QString::fromStdString(sp), QString::fromStdString(sub)});
        QVERIFY(py.waitForFinished(120000));
        const QString out = QString::fromUtf8(py.readAllStandardOutput()).trimmed();
        if (out == QStringLiteral("NO_TORCH")) QSKIP("python3-torch is not installed: torch.load compatibility not checked");
        QVERIFY2(py.exitCode() == 0, qPrintable(QString::fromUtf8(py.readAllStandardError())));
        const double bsum = net.tensor("classifier.linear.linear.bias").sum().item<double>();
        QVERIFY2(out.startsWith(QStringLiteral("480 (25, 25) 228 (24, 1, 3, 3) ")), qPrintable(out));
        QVERIFY(std::fabs(out.section(QLatin1Char(' '), -1).toDouble() - bsum) < 1e-6);
    }
};

QTEST_GUILESS_MAIN(TestSupernet)
#include "test_supernet.moc"
