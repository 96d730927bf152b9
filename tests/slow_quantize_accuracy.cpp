// Slow tier (ctest -L slow; tests/README.md): a small network trained here on Fashion-MNIST for
// 300 steps reaches more than 65 % top-1, and int8 post-training quantization keeps its top-1
// within 3 points on 1,000 test images (with at least 90 % of the predictions unchanged). The
// default tier runs the same path with 40 steps on 200 images (test_quantize:
// aTrainedModelGoesThroughQuantizationAndTheComparison).
#include "SmallNet.h"
#include "TestSupport.h"

#include "data/ImageDataset.h"
#include "nn/PostTrainingQuantizer.h"
#include "nn/QuantizationJob.h"
#include "nn/TorchRuntime.h"
#include "nn/ZooModule.h"

#include <cmath>

using namespace tinyscope;
using test::batchTensor;
using test::smallNet;

namespace {
bool haveFashionMnist() { return !fashionMnistDir().empty(); }
}  // namespace

class SlowQuantizeAccuracy : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        configureAllocator();
        setTorchThreads(2);
    }

    void trainedModelKeepsItsTop1AfterQuantization()
    {
        if (!haveFashionMnist()) QSKIP("dataset-fashion-mnist is not installed");
        const Network net = smallNet();
        ZooModule m(net, 1);
        std::unique_ptr<ImageDataset> fit = openDataset("fashion-mnist:fit");
        torch::optim::Adam opt(m->parameters(), torch::optim::AdamOptions(0.003));
        m->train();
        const int steps = 300, batch = 32;
        for (int s = 0; s < steps; ++s) {
            std::vector<std::size_t> items(batch);
            for (int i = 0; i < batch; ++i) items[static_cast<std::size_t>(i)] = static_cast<std::size_t>((s * batch + i) * 5 % 55000);
            const Batch b = loadBatch(*fit, items, 28);
            const at::Tensor labels = torch::tensor(std::vector<std::int64_t>(b.labels.begin(), b.labels.end()));
            opt.zero_grad();
            const at::Tensor loss = torch::cross_entropy_loss(m->forward(batchTensor(b)), labels);
            loss.backward();
            opt.step();
        }
        m->eval();
        PreparedModel pm;
        pm.network = net;
        auto fm = std::make_shared<FloatModel>(floatModelFromZoo(*m));
        std::unique_ptr<ImageDataset> hold = openDataset("fashion-mnist:holdout");
        std::vector<std::size_t> items(200);
        for (std::size_t i = 0; i < items.size(); ++i) items[i] = i * 25;
        pm.params = quantizeModel(*fm, batchTensor(loadBatch(*hold, items, 28)));
        pm.float_model = fm;
        pm.calib_images = 200;
        const QuantizeReport r = compareTop1(pm, "fashion-mnist:test", 1000, 2);
        qInfo("small net after %d steps: float top-1 %.2f %%, int8 top-1 %.2f %%, agreement %.2f %%", steps, r.float_top1, r.int8_top1, r.agreement);
        QCOMPARE(r.images, std::size_t(1000));
        QVERIFY(r.has_float);
        QVERIFY2(r.float_top1 > 65.0, "the model did not train");
        QVERIFY(r.int8_top1 >= 0 && r.int8_top1 <= 100);
        QVERIFY2(std::fabs(r.float_top1 - r.int8_top1) <= 3.0, "int8 lost more than 3 points");
        QVERIFY(r.agreement >= 90.0);
    }
};

QTEST_GUILESS_MAIN(SlowQuantizeAccuracy)
#include "slow_quantize_accuracy.moc"
