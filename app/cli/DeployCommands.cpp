// tinyscope deploy  (a subnet or zoo model written as an inference file: int8 TFLite or float ONNX;
// --compare-memory: the three-engine memory table of the written TFLite file)
#include "cli/Cli.h"
#include "cli/CliArgs.h"
#include "cli/ModelArgs.h"

#include "Error.h"
#include "io/Text.h"
#include "nn/quantize/DeployJob.h"
#include "tinyengine/BoardProfile.h"

#include <iomanip>
#include <iostream>
#include <optional>

namespace tinyscope::cli {

namespace {

int cmdDeploy(const Args& argv)
{
    CliArgs a(argv, withModelOptions({"format", "board", "out"}),
              {"int8", "json", "compare-memory", "help"});
    if (a.flag("help")) {
        std::cout << "usage: tinyscope deploy (--supernet CKPT --config C.json | --subnet DIR | --model ZOO [--params P.pkl]) --format tflite|onnx\n"
                     "                        [--int8 --calib-data D --calib-images N] [--bn-images N] [--threads T] [--board B] [--compare-memory]\n"
                     "                        --out FILE [--json]\n"
                     "  Writes the model as one inference file (docs/DEPLOY.md), atomically; nothing on an error.\n"
                     "  onnx: float32, opset 13, NCHW input [1,3,R,R] normalised as the workbench does ((pixel/255 - 0.5)/0.5),\n"
                     "        BatchNorm folded into the convs, logits [1,K]; metadata: input size, channel order, mean/std,\n"
                     "        class labels, the subnet config and the workbench's MACs / peak SRAM / flash.\n"
                     "  tflite: fully int8 (implies --int8): per-channel int8 weights, int32 biases, int8 activations\n"
                     "        calibrated on --calib-images of --calib-data (a zoo model's int8 --params as they are), NHWC,\n"
                     "        builtin ops TensorFlow Lite Micro implements; metadata as above in a \"tinyscope\" buffer.\n"
                     "  The model (onnx: a zoo model's --params are dequantized with its scales; a subnet with --bn-images 0\n"
                     "  computes `tinyscope forward`'s logits):\n"
                  << kModelOptions
                  << "  --int8                int8 model (tflite; implied by it)\n"
                     "  --board NAME|FILE     also compare the int8 peak SRAM and flash with a board: " + formatList(presetBoardNames()) + "\n"
                     "  --compare-memory      (tflite) run the written file through TensorFlow Lite Micro (tflm_run) and TinyEngine's\n"
                     "                        TFLite code generator: our peak SRAM beside TFLM's arena (head, tail, the op where\n"
                     "                        its live set peaks) and TinyEngine's scheduled arena and PEAK_MEM, each with the\n"
                     "                        reason it differs (JSON: \"memory\"); with --board, each figure against its SRAM\n"
                     "  --json                print format, out, bytes, ops, input/output {shape, scale, zero_point} (float: null),\n"
                     "                        batchnorm (a subnet's: re-calibrated on which images, or the checkpoint's statistics)\n";
        return 0;
    }
    if (!a.has("format")) throw InputError("give the format: --format tflite|onnx");
    if (!a.has("out")) throw InputError("give the output file: --out FILE");
    DeployRequest rq;
    rq.format = parseDeployFormat(a.value("format"));
    rq.out = a.value("out");
    rq.int8 = a.flag("int8");
    std::optional<BoardProfile> board;
    if (a.has("board")) board = loadBoard(a.value("board"));
    rq.model = modelFromArgs(a);
    rq.quantize = quantizeFromArgs(a);
    const bool compare = a.flag("compare-memory");
    if (compare && rq.format != DeployFormat::TFLite)
        throw InputError("--compare-memory compares the engines that run an int8 TFLite file: use it with --format tflite");

    const DeployResult r = deployModel(rq);
    Json j = r.toJson();
    // The board check of an inference model: the workbench's int8 peak activation and int8 weights
    // against the board's SRAM and flash (no runtime overheads: docs/DEPLOY.md).
    const bool sramFits = board && r.cost.peak_sram_bytes <= board->sram_bytes;
    const bool flashFits = board && r.cost.flash_bytes <= board->flash_bytes;
    if (board) {
        j["board"] = board->toJson();
        // flash_bytes: int8 weights + int32 biases; file_bytes: the file (adds quantization parameters and the graph).
        j["board_use"] = {{"sram_bytes", r.cost.peak_sram_bytes}, {"flash_bytes", r.cost.flash_bytes}, {"file_bytes", r.bytes}};
        j["file_fits_flash"] = static_cast<std::int64_t>(r.bytes) <= board->flash_bytes;
        j["board_fits"] = sramFits && flashFits;
    }
    std::optional<DeployMemoryComparison> memory;
    if (compare) {
        memory = compareDeployMemory(r);
        j["memory"] = memory->toJson();
        if (board)
            for (auto& row : j["memory"]["rows"])
                if (row["total"].get<bool>() && !row["bytes"].is_null()) row["fits_board_sram"] = row["bytes"].get<std::int64_t>() <= board->sram_bytes;
    }
    if (a.flag("json")) {
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::cout << r.model << ": " << r.description << "\n"
              << "wrote " << r.out << " (" << deployFormatName(r.format) << ", " << groupThousands(static_cast<std::int64_t>(r.bytes)) << " B)\n"
              << "  input   " << r.input.name << " " << Json(r.input.shape).dump() << " " << r.input.type << "\n"
              << "  output  " << r.output.name << " " << Json(r.output.shape).dump() << " " << r.output.type << "\n"
              << (r.batchnorm.empty() ? std::string() : "  BN      " + r.batchnorm + "\n")
              << "  ops    ";
    for (const auto& [op, n] : r.ops) std::cout << " " << op << " " << n;
    std::cout << "\n  cost    " << groupThousands(r.cost.macs) << " MACs, peak SRAM " << groupThousands(r.cost.peak_sram_bytes) << " B, flash "
              << groupThousands(r.cost.flash_bytes) << " B (" << r.cost.source << ")\n";
    if (board) {
        std::cout << "board " << board->name << " (" << board->core << "): peak SRAM " << groupThousands(r.cost.peak_sram_bytes) << " of "
                  << groupThousands(board->sram_bytes) << " B (" << (sramFits ? "fits" : "does not fit") << "), flash "
                  << groupThousands(r.cost.flash_bytes) << " of " << groupThousands(board->flash_bytes) << " B ("
                  << (flashFits ? "fits" : "does not fit") << "; int8 weights + int32 biases), the file "
                  << groupThousands(static_cast<std::int64_t>(r.bytes)) << " B ("
                  << (static_cast<std::int64_t>(r.bytes) <= board->flash_bytes ? "fits" : "does not fit") << ")\n";
    }
    if (memory) {
        std::cout << "memory, three engines" << (board ? " (against " + board->name + "'s " + groupThousands(board->sram_bytes) + " B SRAM)" : "")
                  << ":\n";
        for (const auto& row : memory->rows()) {
            const std::string bytes = row.bytes ? groupThousands(*row.bytes) + " B" : "-";
            std::cout << "  " << std::left << std::setw(11) << row.engine << std::setw(38) << row.figure << std::right << std::setw(12) << bytes;
            if (board && row.bytes && row.total) std::cout << (*row.bytes <= board->sram_bytes ? "  fits" : "  does not fit");
            std::cout << "\n      " << row.why << "\n";
        }
    }
    return 0;
}

}  // namespace

std::vector<Command> deployCommands()
{
    return {
        {"deploy", "write a subnet or zoo model as an inference file (int8 TFLite or float ONNX), optionally compare its memory on three engines", cmdDeploy},
    };
}

}  // namespace tinyscope::cli
