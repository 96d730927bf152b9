#pragma once
// The model zoo: the MCU networks people fine-tune on device, as Networks.
//  * tiny-training's mbv2-w0.35, mcunet-5fps, proxyless-w0.3 (128×128, 10 classes, conv with
//    bias, BN folded, activation folded into the int8 clamp);
//  * the MLPerf Tiny references DS-CNN-S, MobileNetV1-0.25, Deep AutoEncoder, ResNet-8 and
//    CCT-2/3x2 (convs without bias + BatchNorm, as the PyTorch training exporters define them).
// Counts are exact (tests): see docs/TRAINING_GRAPH.md for the conventions.
#include "zoo/Network.h"

#include <string>
#include <vector>

namespace tinyscope {

struct ZooEntry {
    std::string name;        // canonical name, e.g. "mcunet-5fps"
    std::string summary;     // one line for listings
};

const std::vector<ZooEntry>& zooEntries();
std::vector<std::string> zooModelNames();
bool isZooModel(const std::string& name);
// Case-insensitive, with aliases ("resnet8", "dscnn-s", "cct_2_3x2_32"); throws InputError
// listing the models when the name is unknown.
Network zooModel(const std::string& name);
// The zoo model a network is (same input, number of convs and parameter count), or "" — e.g. the
// network of a TinyEngine graph read back from a file.
std::string zooModelMatching(const Network& net);

}  // namespace tinyscope
