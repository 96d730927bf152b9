#include "tinyengine/BoardFit.h"

#include "graph/MemoryLedger.h"
#include "io/Text.h"

namespace tinyscope {

namespace {

}  // namespace

BoardUse boardUse(const ExportPlan& plan)
{
    BoardUse u;
    const AutodiffMode mode = plan.form == ExportForm::Reference ? AutodiffMode::Reference : AutodiffMode::Correct;
    u.sram_bytes = TrainingMemoryModel(plan.network).ledger(plan.scheme, mode).peak_bytes;
    for (const auto& [name, a] : plan.params.arrays) u.flash_bytes += static_cast<std::int64_t>(a.data.size());
    return u;
}

BoardUse boardUse(const ImportedGraph& im)
{
    BoardUse u;
    u.sram_bytes = TrainingMemoryModel(im.network).ledger(im.scheme.resolve(im.network, "recovered scheme"), im.graph.mode).peak_bytes;
    if (im.params)
        for (const auto& [name, a] : im.params->arrays) u.flash_bytes += static_cast<std::int64_t>(a.data.size());
    return u;
}

std::int64_t quantizedParameterBytes(const Network& net)
{
    std::int64_t bytes = 0;
    for (const Layer& l : net.layers) {
        if (l.isConv())
            bytes += static_cast<std::int64_t>(l.cout) * (l.cin / l.groups) * l.kh * l.kw + 8LL * l.cout + 2;
        else if (l.kind == LayerKind::Add || l.kind == LayerKind::ChannelScale)
            bytes += 3 + 3 * 4;
    }
    return bytes;
}

std::vector<Finding> checkBoardFit(const BoardProfile& board, const BoardUse& use)
{
    std::vector<Finding> out;
    const std::string where = board.name + " (" + board.core + ")";
    auto add = [&](FindingSeverity s, const char* rule, std::string message) {
        out.push_back({s, rule, "device", where, std::move(message)});
    };
    if (use.sram_bytes > board.sram_bytes)
        add(FindingSeverity::Error, "board-sram",
            "training needs " + bytesText(use.sram_bytes) + " of SRAM (the memory ledger's peak) and the board has " + bytesText(board.sram_bytes) +
                ": " + bytesText(use.sram_bytes - board.sram_bytes) + " too much");
    else if (use.sram_bytes + kBoardSramMargin > board.sram_bytes)
        add(FindingSeverity::Warning, "board-sram",
            "the memory ledger's peak, " + bytesText(use.sram_bytes) + ", leaves " + bytesText(board.sram_bytes - use.sram_bytes) + " of the board's " +
                bytesText(board.sram_bytes) + "; the generated code needs more than the ledger (stack of the training step, runtime data: " +
                "54-74 KB over the ledger on the published schemes), so it may not fit: run `tinyscope device-run` to measure the binary");
    if (use.flash_bytes > board.flash_bytes)
        add(FindingSeverity::Error, "board-flash",
            "the parameters take " + bytesText(use.flash_bytes) + " and the board has " + bytesText(board.flash_bytes) + " of flash");
    else if (use.flash_bytes + kBoardFlashMargin > board.flash_bytes)
        add(FindingSeverity::Warning, "board-flash",
            "the parameters take " + bytesText(use.flash_bytes) + " of the board's " + bytesText(board.flash_bytes) +
                " of flash; TinyEngine's code, kernels and generated tables add 165-253 KB (published schemes), so it may not fit");
    if (!board.dsp)
        add(FindingSeverity::Error, "board-dsp",
            board.core + " has no DSP extension, and TinyEngine's kernels are written with its SIMD instructions (__SMLAD, __SXTB16)");
    if (board.fpu == "none")
        add(FindingSeverity::Error, "board-fpu",
            board.core + " without an FPU: the training step computes gradients in float and TinyEngine is built with -mfloat-abi=hard");
    return out;
}

}  // namespace tinyscope
