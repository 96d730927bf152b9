#pragma once
// Lowers a zoo Network to the forward half of a training graph in TinyEngine's int8 op
// vocabulary: each conv/linear becomes nn.mcuconv2d + nn.mcutruncate (BN folded into the conv,
// the activation folded into the int8 clamp), each residual add nn.mcuadd + nn.mcutruncate,
// global pooling mcumean, a squeeze-excite gate nn.mcumultiply + nn.mcutruncate; then the loss
// (reshape → cast → nn.log_softmax → nn.cross_entropy_with_logits with a one-hot `label`, or
// the autoencoder's mean squared error). Parameter names follow tiny-training's converter:
// `<prefix>_weight|_bias|_zero_x|_zero_y|_scale`, adds `<prefix>_zero_x1 … _scale_y`.
#include "graph/TrainingGraph.h"
#include "zoo/Network.h"

namespace tinyscope {

// Throws InputError naming the layer when the network has a layer the int8 vocabulary lacks
// (LayerNorm, attention, max pooling, ...).
TrainingGraph lowerForward(const Network& net);

// Why `net` cannot be lowered ("" when it can).
std::string loweringObstacle(const Network& net);

}  // namespace tinyscope
