// The model zoo: every model's parameter and MAC counts equal the published references; the
// tiny-training models equal tiny-training's layer table conv by conv; design-space subnets
// equal the cost model; every model instantiates as a LibTorch module with the same
// parameters and the same layer shapes.
#include "TestSupport.h"

#include "Error.h"
#include "cost/CostModel.h"
#include "nn/quantize/ZooModule.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"

using namespace tinyscope;

class TestZoo : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void countsEqualThePublishedReferences()
    {
        struct Expect {
            const char* name;
            long long params, macs;
        };
        // tiny-training models.json totals and MLPerf Tiny (MODELS.md); CCT: conv + linear MACs.
        const Expect expect[] = {{"mbv2-w0.35", 245578, 16648032},     {"mcunet-5fps", 470834, 22455104},
                                 {"proxyless-w0.3", 327202, 18620864}, {"ds-cnn-s", 23180, 2656768},
                                 {"mobilenetv1-0.25", 213586, 7489664}, {"autoencoder", 267928, 264192},
                                 {"resnet-8", 78042, 12501632},        {"cct-2/3x2", 283979, 33236224}};
        QCOMPARE(zooModelNames().size(), std::size(expect));
        for (const Expect& e : expect) {
            const Network net = zooModel(e.name);
            QVERIFY2(net.params() == e.params, e.name);
            QVERIFY2(net.macs() == e.macs, e.name);
        }
        // CCT's attention matmuls are reported beside the conv/linear count.
        QCOMPARE(zooModel("cct-2/3x2").toJson()["attention_macs"].get<long long>(), 2097152LL + 8192LL);
    }

    void tinyTrainingModelsMatchTheLayerTableConvByConv()
    {
        REQUIRE_SHARED();
        const Json ref = readJsonFile(test::sharedPath("reference/tiny-training/models.json"));
        for (const char* name : {"mbv2-w0.35", "mcunet-5fps", "proxyless-w0.3"}) {
            const Json& m = ref["models"][name];
            const Network net = zooModel(name);
            QCOMPARE(net.numConvs(), m["n_convs_including_classifier"].get<int>());
            QCOMPARE(net.numBackboneConvs(), m["n_backbone_convs"].get<int>());
            QCOMPARE(net.params(), m["totals"]["params"].get<long long>());
            QCOMPARE(net.macs(), m["totals"]["macs"].get<long long>());
            int at = -1;
            QCOMPARE(net.peakActivationBytes(&at), m["totals"]["peak_activation_mcunet_bytes"].get<long long>());
            QCOMPARE(at, m["totals"]["peak_activation_mcunet_at_index"].get<int>());
            const Json& layers = m["layers"];
            QCOMPARE(layers.size(), std::size_t(net.numConvs()));
            for (int i = 0; i < net.numConvs(); ++i) {
                const Json& r = layers[std::size_t(i)];
                const Layer& l = net.conv(i);
                const QByteArray where = QByteArray(name) + " conv " + QByteArray::number(i);
                QVERIFY2(r["index"].get<int>() == i, where.constData());
                QVERIFY2(r["role"].get<std::string>() == l.role, where.constData());
                QVERIFY2(r["ir_prefix"].get<std::string>() == l.ir_prefix, where.constData());
                QVERIFY2(r["cin"].get<int>() == l.cin && r["cout"].get<int>() == l.cout, where.constData());
                QVERIFY2(r["kernel"] == Json::array({l.kh, l.kw}), where.constData());
                QVERIFY2(r["stride"].get<int>() == l.stride_h && l.stride_h == l.stride_w, where.constData());
                QVERIFY2(r["padding"].get<int>() == l.pad_t && l.pad_t == l.pad_b && l.pad_l == l.pad_r, where.constData());
                QVERIFY2(r["groups"].get<int>() == l.groups, where.constData());
                QVERIFY2(r["depthwise"].get<bool>() == l.depthwise(), where.constData());
                QVERIFY2(r["H_in"].get<int>() == l.in.h && r["W_in"].get<int>() == l.in.w, where.constData());
                QVERIFY2(r["H_out"].get<int>() == l.out.h && r["W_out"].get<int>() == l.out.w, where.constData());
                QVERIFY2(r["weight_elems"].get<long long>() == l.weightElems(), where.constData());
                QVERIFY2(r["bias_elems"].get<int>() == l.cout && l.bias, where.constData());
                QVERIFY2(r["macs"].get<long long>() == l.macs(), where.constData());
                QVERIFY2(r["in_elems"].get<long long>() == l.in.elems(), where.constData());
                QVERIFY2(r["out_elems"].get<long long>() == l.out.elems(), where.constData());
                QVERIFY2(r["activation"].get<std::string>() == activationName(l.act), where.constData());
            }
            // The residual adds follow the same pw2 convs.
            std::vector<int> addAfter;
            for (std::size_t li = 0; li < net.layers.size(); ++li)
                if (net.layers[li].kind == LayerKind::Add) addAfter.push_back(net.layer(net.layers[li].inputs[1]).conv_index);
            QCOMPARE(Json(addAfter), m["residual_add_after_indices"]);
        }
    }

    void subnetNetworksEqualTheCostModel()
    {
        const DesignSpace space = presetSpace("mcunet-vww");
        CostModel model(space);
        ArchSampler sampler(space);
        PyRandom rng(7);
        std::vector<SubnetConfig> configs{sampler.minConfig(96), sampler.labMaxConfig(160), sampler.fullMaxConfig(112)};
        for (int i = 0; i < 30; ++i) configs.push_back(sampler.random(rng));
        for (const SubnetConfig& c : configs) {
            const Network net = networkFromSubnet(space, c);
            const CostSummary s = model.summary(c);
            QCOMPARE(net.params(), static_cast<long long>(s.params));
            QCOMPARE(net.macs(), static_cast<long long>(s.macs_without_bn));
            QCOMPARE(net.peakActivationBytes(), static_cast<long long>(s.peak_activation_bytes));
            QCOMPARE(net.num_outputs, 2);
        }
        // Published check: the min subnet at 96 has 304,538 params.
        QCOMPARE(networkFromSubnet(space, sampler.minConfig(96)).params(), 304538LL);
    }

    void subnetConfigErrorsNameTheField()
    {
        const DesignSpace space = presetSpace("mcunet-vww");
        SubnetConfig c = ArchSampler(space).minConfig(96);
        c.image_size = 100;
        try {
            networkFromSubnet(space, c, "my.json");
            QFAIL("expected an InputError");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("image_size"), e.what());
        }
    }

    void unknownModelNameListsTheModels()
    {
        try {
            zooModel("resnet-9");
            QFAIL("expected an InputError");
        } catch (const InputError& e) {
            QVERIFY(QString(e.what()).contains("resnet-9"));
            QVERIFY(QString(e.what()).contains("mcunet-5fps"));
        }
        QCOMPARE(zooModel("ResNet8").name, std::string("resnet-8"));   // aliases, any case
        QCOMPARE(zooModel("cct_2_3x2_32").name, std::string("cct-2/3x2"));
    }

    void aNetworkReadBackFindsItsZooModel()
    {
        for (const std::string& n : zooModelNames()) {
            Network net = zooModel(n);
            net.name = "read back";   // a graph file's network carries no zoo name
            QCOMPARE(zooModelMatching(net), n);
        }
        const DesignSpace space = presetSpace("mcunet-vww");
        QCOMPARE(zooModelMatching(networkFromSubnet(space, ArchSampler(space).minConfig(96))), std::string());
    }

    void everyZooModelInstantiatesAsALibTorchModuleWithTheSameParametersAndShapes()
    {
        for (const std::string& name : zooModelNames()) {
            const Network net = zooModel(name);
            ZooModule m(net, 1);
            long long count = 0;
            for (const torch::Tensor& p : m->parameters()) count += p.numel();
            QVERIFY2(count == net.params(), name.c_str());
            m->eval();
            torch::NoGradGuard nograd;
            std::vector<torch::Tensor> outs;
            const torch::Tensor y = m->forward(torch::rand({1, net.input.c, net.input.h, net.input.w}), outs);
            QCOMPARE(y.sizes().vec(), (std::vector<int64_t>{1, net.num_outputs}));
            QVERIFY(torch::isfinite(y).all().item<bool>());
            for (std::size_t i = 0; i < net.layers.size(); ++i) {
                const Shape3& s = net.layers[i].out;
                QVERIFY2(outs[i].sizes().vec() == (std::vector<int64_t>{1, s.c, s.h, s.w}),
                         (name + " " + net.layers[i].name).c_str());
            }
        }
        // Seeded: the same seed gives the same initial weights.
        const Network net = zooModel("ds-cnn-s");
        ZooModule a(net, 3), b(net, 3), c(net, 4);
        QVERIFY(torch::equal(a->parameters()[0], b->parameters()[0]));
        QVERIFY(!torch::equal(a->parameters()[0], c->parameters()[0]));
    }

    void networkJsonHasTheTableTheCliPrints()
    {
        const Json j = zooModel("mcunet-5fps").toJson();
        QCOMPARE(j["params"].get<long long>(), 470834LL);
        QCOMPARE(j["macs"].get<long long>(), 22455104LL);
        QCOMPARE(j["peak_activation_bytes"].get<long long>(), 163840LL);
        QCOMPARE(j["n_backbone_convs"].get<int>(), 42);
        QVERIFY(j["layers"].is_array());
        int convs = 0;
        for (const Json& l : j["layers"]) convs += l["kind"] == "conv";
        QCOMPARE(convs, 43);
    }
};

QTEST_GUILESS_MAIN(TestZoo)
#include "test_zoo.moc"
