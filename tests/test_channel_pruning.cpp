// Channel pruning of a subnet (issue 50, Lab 1's channel_prune / apply_channel_sorting on MCUNet
// blocks, nn/compress/ChannelPruning.h): sorting changes nothing the network computes; a pruned
// network equals the original with the dropped channels' readers zeroed; every tensor, the layout
// and the cost model follow the new widths; oneDNN runs the narrower network as LibTorch does;
// bad ratios are refused by name; a pruned subnet saved on its own (prune --out) reads back as a
// model with the narrowed network, and a folder that disagrees with itself is refused by name.
#include "PrunedSubnet.h"
#include "TestSupport.h"

#include "Error.h"
#include "compress/Pruning.h"
#include "cost/CostModel.h"
#include "io/JsonFile.h"
#include "nn/compress/ChannelPruning.h"
#include "nn/measure/SubnetLatency.h"
#include "nn/quantize/PostTrainingQuantizer.h"
#include "nn/quantize/QuantizationJob.h"
#include "nn/onednn/FoldedSubnet.h"
#include "nn/onednn/OneDnnPlan.h"
#include "nn/supernet/Supernet.h"
#include "nn/supernet/SubnetWeights.h"
#include "space/ArchSampler.h"
#include "space/PyRandom.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <QFile>
#include <QTemporaryDir>

#include <ATen/ATen.h>

using namespace tinyscope;

namespace {

// Largest |a − b| relative to the largest |a|.
double channelRelativeError(const at::Tensor& a, const at::Tensor& b)
{
    return (a - b).abs().max().item<double>() / std::max(a.abs().max().item<double>(), 1e-12);
}

at::Tensor channelTestImages(int resolution)
{
    at::manual_seed(7);
    return at::randn({4, 3, resolution, resolution});
}

}  // namespace

class TestChannelPruning : public QObject {
    Q_OBJECT

    DesignSpace space_ = presetSpace("mcunet-fmnist");
    std::unique_ptr<Supernet> supernet_;
    std::vector<SubnetConfig> configs_;

    Subnet subnet(const SubnetConfig& c) const { return supernet_->extract(c); }

private Q_SLOTS:
    void initTestCase()
    {
        if (shippedSupernetPath().empty()) QSKIP("the shipped supernet models/supernets/mcunet-fmnist.pth is absent");
        supernet_ = std::make_unique<Supernet>(Supernet::load(space_, shippedSupernetPath()));
        ArchSampler sampler(space_);
        configs_.push_back(sampler.minConfig(space_.resolutions.front()));
        PyRandom rng(3);
        configs_.push_back(sampler.random(rng));
        at::set_num_threads(1);
    }

    void sortingIsAnEquivalentNetwork()
    {
        at::NoGradGuard guard;
        for (const SubnetConfig& c : configs_) {
            Subnet sub = subnet(c);
            const at::Tensor x = channelTestImages(c.image_size);
            const at::Tensor before = sub.forward(x);
            sortChannels(sub);
            QVERIFY(channelRelativeError(before, sub.forward(x)) < 1e-5);
            // Sorted: each group's importance is descending.
            const NetWeights& w = sub.weights();
            for (const BlockWeights& b : w.blocks) {
                if (b.shape.fused) continue;
                const at::Tensor imp = b.pl.weight.detach().pow(2).sum({0, 2, 3});
                QVERIFY((imp.slice(0, 0, -1) >= imp.slice(0, 1)).all().item<bool>());
            }
        }
    }

    void theCountsAreTheLabs()
    {
        Subnet sub = subnet(configs_[1]);
        const std::vector<ChannelGroup> groups = pruneChannels(sub, 0.3);
        QVERIFY(groups.size() >= 3);
        QCOMPARE(groups.back().name, std::string("feature_mix_layer"));
        for (const ChannelGroup& g : groups) QCOMPARE(g.kept, static_cast<int>(std::nearbyint(g.channels * 0.7)));
        // The tensors follow the layout's new widths.
        const NetWeights& w = sub.weights();
        for (const BlockWeights& b : w.blocks) {
            const BlockShape& s = w.layout.block(b.shape.index);
            QCOMPARE(b.shape.mid, s.mid);
            if (b.shape.fused) {
                QCOMPARE(b.pl.weight.size(1), static_cast<std::int64_t>(w.layout.first_conv));
                continue;
            }
            QCOMPARE(b.ib.weight.size(0), static_cast<std::int64_t>(s.mid));
            QCOMPARE(b.ib.bn.running_var.size(0), static_cast<std::int64_t>(s.mid));
            QCOMPARE(b.dw.weight.size(0), static_cast<std::int64_t>(s.mid));
            QCOMPARE(b.pl.weight.size(1), static_cast<std::int64_t>(s.mid));
            if (b.se_reduce_w.defined()) {
                QCOMPARE(b.se_reduce_w.size(1), static_cast<std::int64_t>(s.mid));
                QCOMPARE(b.se_expand_w.size(0), static_cast<std::int64_t>(s.mid));
            }
        }
        QCOMPARE(w.fc_w.size(1), static_cast<std::int64_t>(w.layout.feature_mix));
        // The cost model on the new layout counts exactly the tensors' parameters.
        QCOMPARE(CostModel::summary(w.layout).params, sub.parameterCount());
        QVERIFY(CostModel::summary(w.layout).macs < CostModel(space_).summary(configs_[1]).macs);
    }

    // Dropping a group's channels = zeroing everything that reads them in the original network:
    // the projection's (or the classifier's, or block 0's) input columns and the SE's reduce columns.
    void pruningEqualsZeroingTheReaders()
    {
        at::NoGradGuard guard;
        for (const SubnetConfig& c : configs_) {
            Subnet pruned = subnet(c);
            const std::vector<ChannelGroup> groups = pruneChannels(pruned, 0.5);
            Subnet zeroed = subnet(c);
            NetWeights& z = zeroed.weights();
            for (const ChannelGroup& g : groups) {
                if (g.name == "feature_mix_layer") z.fc_w.slice(1, g.kept).zero_();
                else if (g.name == "first_conv") z.blocks[0].pl.weight.slice(1, g.kept).zero_();
                else {
                    BlockWeights& b = z.blocks[static_cast<std::size_t>(std::stoi(g.name.substr(7)))];
                    b.pl.weight.slice(1, g.kept).zero_();
                    if (b.se_reduce_w.defined()) b.se_reduce_w.slice(1, g.kept).zero_();
                }
            }
            const at::Tensor x = channelTestImages(c.image_size);
            QVERIFY(channelRelativeError(zeroed.forward(x), pruned.forward(x)) < 1e-5);
        }
    }

    void oneDnnRunsTheNarrowerNetwork()
    {
        at::NoGradGuard guard;
        Subnet sub = subnet(configs_[1]);
        sortChannels(sub);
        pruneChannels(sub, 0.37);   // odd widths
        sub.setFolded(true);
        const int r = configs_[1].image_size;
        const at::Tensor x = channelTestImages(r).contiguous();
        const at::Tensor ref = sub.forward(x);
        try {
            OneDnnPlan plan(foldedSubnet(sub.weights()), 4);
            at::Tensor got = at::empty({4, static_cast<std::int64_t>(plan.classes())});
            plan.run(x.data_ptr<float>(), got.data_ptr<float>());
            QVERIFY(channelRelativeError(ref, got) < 1e-4);
        } catch (const OneDnnRefused& e) {
            QSKIP(e.what());
        }
    }

    // A latency measurement (one-thread oneDNN plan) leaves the calling thread's LibTorch threads as
    // they were: prune --channels measures latency, then fine-tunes on the same thread.
    void latencyLeavesTheThreadCount()
    {
        Subnet sub = subnet(configs_[0]);
        at::set_num_threads(2);
        const Latency l = subnetLatency(sub, 2, 1);
        QCOMPARE(at::get_num_threads(), 2);
        at::set_num_threads(1);
        QVERIFY(l.ms > 0);
    }

    void ratioZeroChangesNothing()
    {
        at::NoGradGuard guard;
        Subnet sub = subnet(configs_[0]);
        const at::Tensor x = channelTestImages(configs_[0].image_size);
        const at::Tensor before = sub.forward(x);
        for (const ChannelGroup& g : pruneChannels(sub, 0)) QCOMPARE(g.kept, g.channels);
        QCOMPARE(channelRelativeError(before, sub.forward(x)), 0.0);
    }

    void badRatiosAreRefusedByName()
    {
        Subnet sub = subnet(configs_[0]);
        QVERIFY(test::inputErrorOf([&] { pruneChannels(sub, 1.5); }).contains(QStringLiteral("--channels: channel ratio 1.50 is outside [0, 1]")));
        QVERIFY(test::inputErrorOf([&] { pruneChannels(sub, 1.0); }).contains(QStringLiteral("leaves none of its")));
        const QString unknown = test::inputErrorOf([&] { pruneChannels(sub, 0.2, {{"blocks.99", 0.5}}); });
        QVERIFY2(unknown.contains(QStringLiteral("no channel group 'blocks.99' in the subnet; its groups: ")), qPrintable(unknown));
        QVERIFY2(unknown.contains(QStringLiteral("feature_mix_layer")), qPrintable(unknown));
        QCOMPARE(sub.weights().layout.feature_mix, channelGroups(sub).back().channels);   // refused: unchanged
    }

    // A pruned subnet saved on its own (prune --out's folder) is a model like any other: its
    // network, the cost model and the tensors have the narrowed widths, and the weights read back
    // compute what the pruned subnet computed.
    void aSavedPrunedSubnetIsAModel()
    {
        QTemporaryDir tmp;
        std::optional<Subnet> pruned;
        const ModelSource m = test::prunedSubnetFolder(tmp.path() + QStringLiteral("/pruned"), "max", 0.3, &pruned);
        const SubnetSource* s = m.asSubnet();
        QVERIFY(s && s->own_weights && !s->channels.empty());
        const SubnetLayout& want = pruned->weights().layout;
        const SubnetLayout got = s->layout();
        QCOMPARE(got.first_conv, want.first_conv);
        QCOMPARE(got.feature_mix, want.feature_mix);
        for (int i = 0; i < want.n_blocks; ++i) {
            QCOMPARE(got.block(i).cin, want.block(i).cin);
            QCOMPARE(got.block(i).mid, want.block(i).mid);
        }
        SubnetLayout full;
        layoutSubnet(space_, s->config, full);
        QVERIFY(got.feature_mix < full.feature_mix);
        const CostSummary cost = CostModel::summary(got);
        const Network net = m.network();
        QCOMPARE(net.params(), cost.params);
        QCOMPARE(net.params(), pruned->parameterCount());
        QCOMPARE(net.macs(), cost.macs_without_bn);
        QVERIFY(cost.params < CostModel(space_).summary(s->config).params);
        QVERIFY2(m.describe().find("(channels pruned)") != std::string::npos, m.describe().c_str());

        QuantizeOptions o;
        o.bn_images = 0;   // the file's statistics: the same network
        const PreparedModel pm = prepareFloatModel(m, o);
        QCOMPARE(pm.channels, s->channels);
        at::NoGradGuard guard;
        const at::Tensor x = channelTestImages(s->config.image_size);
        QVERIFY(channelRelativeError(pruned->forward(x), floatForward(*pm.float_model, x)) < 1e-5);
    }

    // A saved subnet's folder is untrusted: every way it can disagree with itself is named.
    void aBadSavedSubnetIsRefusedByName()
    {
        QTemporaryDir tmp;
        const QString dir = tmp.path() + QStringLiteral("/pruned");
        const std::string pruning = (dir + QStringLiteral("/pruning.json")).toStdString();
        test::prunedSubnetFolder(dir, "min", 0.3);
        const Json good = readJsonFile(pruning);
        auto withPruning = [&](const Json& j) {
            writeJsonFile(pruning, j);
            return test::inputErrorOf([&] { ModelSource::subnetFolder(dir.toStdString()); });
        };
        QuantizeOptions o;
        o.bn_images = 0;

        // Widths the weights do not have: the key and both shapes.
        Json narrower = good;
        Json& mix = narrower["channels"]["groups"].back();
        const int kept = mix["kept"].get<int>();
        mix["kept"] = kept - 1;
        QCOMPARE(withPruning(narrower), QString());
        const QString shapes = test::inputErrorOf([&] { prepareFloatModel(ModelSource::subnetFolder(dir.toStdString()), o); });
        QVERIFY2(shapes.contains(QStringLiteral("subnet.pth: not the weights of this subnet — shape mismatch: feature_mix_layer.conv.weight: the file has [%1, ")
                                     .arg(kept)) &&
                     shapes.contains(QStringLiteral("the subnet needs [%1, ").arg(kept - 1)),
                 qPrintable(shapes));

        Json other = good;
        other["channels"]["groups"][0]["channels"] = other["channels"]["groups"][0]["channels"].get<int>() + 1;
        QVERIFY2(withPruning(other).contains(QStringLiteral("pruning.json: channels.groups[0].channels: the config's ")), qPrintable(withPruning(other)));
        Json unknown = good;
        unknown["channels"]["groups"][0]["name"] = "blocks.99";
        QVERIFY2(withPruning(unknown).contains(QStringLiteral("no channel group 'blocks.99' in the subnet; its groups: ")), qPrintable(withPruning(unknown)));
        Json malformed = good;
        malformed["channels"]["groups"][1]["kept"] = "many";
        QVERIFY2(withPruning(malformed).contains(QStringLiteral("pruning.json: channels.groups[1].kept")), qPrintable(withPruning(malformed)));
        Json none = good;
        none["channels"]["groups"][1]["kept"] = 0;
        QVERIFY2(withPruning(none).contains(QStringLiteral("channels.groups[1].kept")), qPrintable(withPruning(none)));
        writeJsonFile(pruning, good);

        QVERIFY2(test::inputErrorOf([&] { ModelSource::subnetFolder(dir.toStdString(), "mcunet-vww"); })
                     .contains(QStringLiteral("--space mcunet-vww: the folder's space.json is space 'mcunet-fmnist'")),
                 "another space");
        QVERIFY(test::inputErrorOf([&] { ModelSource::subnetFolder((dir + QStringLiteral("/none")).toStdString()); }).contains(QStringLiteral("no such folder")));
        QVERIFY(QFile::remove(dir + QStringLiteral("/subnet.json")));
        QVERIFY(test::inputErrorOf([&] { ModelSource::subnetFolder(dir.toStdString()); }).contains(QStringLiteral("subnet.json: missing")));
    }
};

QTEST_GUILESS_MAIN(TestChannelPruning)
#include "test_channel_pruning.moc"
