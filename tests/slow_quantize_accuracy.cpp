// Slow tier (ctest -L slow; tests/README.md): a small network trained here on Fashion-MNIST for
// 300 steps reaches more than 65 % top-1, and int8 post-training quantization keeps its top-1
// within 3 points on 1,000 test images (with at least 90 % of the predictions unchanged). The
// default tier runs the same path with 40 steps on 200 images (test_quantize:
// aTrainedModelGoesThroughQuantizationAndTheComparison).
#include "SmallNet.h"
#include "TestSupport.h"

#include "data/ImageDataset.h"
#include "nn/quantize/PostTrainingQuantizer.h"
#include "nn/quantize/QuantizationJob.h"
#include "nn/TorchRuntime.h"
#include "nn/quantize/ZooModule.h"

#include <cmath>

using namespace tinyscope;
using test::batchTensor;
using test::crossEntropyOf;
using test::fitBatch;
using test::quantizedSmallNet;
using test::smallNet;
using test::trainSmallNet;

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
        const int steps = 300;
        trainSmallNet(m, *openDataset("fashion-mnist:fit"), steps);
        const PreparedModel pm = quantizedSmallNet(net, m, 200);
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
