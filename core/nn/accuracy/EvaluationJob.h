#pragma once
// The evaluator as one call with a torch-free interface, for the GUI (which runs it on a worker
// thread) and anything else that should not include LibTorch. Loaded supernets are cached.
// It chooses between the evaluator (nn/measure) and int8 as deployed (nn/quantize/Int8Measurement,
// which itself uses the evaluator), so it lives above both, in nn/accuracy.
#include "JobControl.h"
#include "nn/measure/EvalEngine.h"
#include "nn/measure/EvaluationTypes.h"
#include "space/DesignSpace.h"
#include "space/SubnetConfig.h"
#include "workspace/CalibrationData.h"
#include "workspace/Workspace.h"

namespace tinyscope {

struct EvaluationRequest {
    std::string supernet;                       // checkpoint path
    DesignSpace space;                          // the supernet's space
    SubnetConfig config;                        // a subnet of `space`
    std::string data = "fashion-mnist:test";
    std::size_t images = 0;                     // 0: every item of the split
    int split = -1;                             // the lab's split of `data` (-1: all)
    bool calibrate = true;                      // false: the checkpoint's BatchNorm statistics
    // BatchNorm re-calibration and int8 activation ranges read these: "" the space's own, which a
    // space without any refuses; images not of the space's task are refused (workspace/CalibrationData.h).
    std::string calib_data;
    CalibrationWords calib_words;               // how a refusal names the options (the CLI's flags; none: the words alone)
    CalibrationOptions calibration;
    int threads = 2;
    int batch = 100;
    EvalEngine engine = EvalEngine::OneDnn;     // docs/ONEDNN.md
    EvalDtype dtype = EvalDtype::Fp32;          // bf16: oneDNN on a CPU with AVX-512 BF16 or AMX
    // The deployed top-1 instead (engine and dtype then unused): our PTQ calibrated on
    // int8_calib_images of calib_data, then Int8Forward's exact arithmetic on the int8 plans — what
    // `make-accdata --dtype int8` records (nn/quantize/Int8Measurement.h).
    bool int8 = false;
    std::size_t int8_calib_images = 200;
};

EvalResult runEvaluation(const EvaluationRequest& request, const JobControl& job = {});
// Ranked classes of one image file, BN re-calibrated like runEvaluation when `calibrate` — except
// that without calib_data and without the space's own data here (a space with none, or Debian's
// Fashion-MNIST not installed) one image is still classified, on the checkpoint's statistics, and
// `calibration_note` says why and how to re-calibrate (the CLI prints it, the GUI shows it).
struct Classification {
    std::vector<ClassScore> scores;   // most probable first
    std::string calibration_note;
};
Classification runClassification(const EvaluationRequest& request, const std::string& imagePath);

// A request on `checkpoint` in its card's space (mcunet-fmnist without a card), with the default
// data (all fashion-mnist:test images) and calibration (2,000 holdout images); `config` is left
// to the caller.
EvaluationRequest supernetRequest(const std::string& checkpoint);
// A request on a workspace's supernet target (core/workspace: its checkpoint and space, already
// known; the card is not read again).
EvaluationRequest supernetRequest(const SupernetTarget& target);
// supernetRequest on the shipped supernet; throws InputError when it is absent.
EvaluationRequest shippedSupernetRequest();

}  // namespace tinyscope
