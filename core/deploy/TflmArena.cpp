#include "deploy/TflmArena.h"

#include "Error.h"
#include "deploy/TfliteExport.h"
#include "deploy/TfliteLayout.h"

#include <algorithm>

namespace tinyscope {

namespace {

// ------------------------------------------------------------------------------------------------
// The file's graph, as deploy/TfliteExport.cpp writes it: the tensors in the writer's order (only
// their byte size and whether a buffer holds them matter to TFLM's arena) and the ops with what
// their kernels' Init / Prepare look at.

enum class OpType { Conv2D, DepthwiseConv2D, FullyConnected, Add, Mul, AveragePool2D, Reshape, Pad };

const char* opTypeName(OpType t)
{
    switch (t) {
    case OpType::Conv2D: return "CONV_2D";
    case OpType::DepthwiseConv2D: return "DEPTHWISE_CONV_2D";
    case OpType::FullyConnected: return "FULLY_CONNECTED";
    case OpType::Add: return "ADD";
    case OpType::Mul: return "MUL";
    case OpType::AveragePool2D: return "AVERAGE_POOL_2D";
    case OpType::Reshape: return "RESHAPE";
    case OpType::Pad: return "PAD";
    }
    return "?";
}

struct FileTensor {
    std::string name;
    std::int64_t bytes = 0;
    bool constant = false;   // its data is in a buffer of the file: not planned in the arena
};

struct FileOp {
    OpType type = OpType::Conv2D;
    std::vector<int> inputs, outputs;   // tensor indices
    // Convolutions: what TFLM computes from the tensors' shapes and the options.
    int channels = 0;                   // output channels (filter's quantized dimension); FC: units; pool: depth
    int in_channels = 0, in_h = 0, in_w = 0;
    int out_h = 0, out_w = 0;
    int kh = 1, kw = 1, stride_h = 1, stride_w = 1;
    bool same = false;                  // Padding_SAME (else VALID)
};

struct FileGraph {
    std::vector<FileTensor> tensors;
    std::vector<FileOp> ops;
    int input = -1, output = -1;
};

FileGraph graphOf(const Network& net)
{
    {
        const std::string obstacle = tfliteObstacle(net);
        if (!obstacle.empty()) throw InputError(net.name + ": cannot be written as TFLite: " + obstacle);
    }
    FileGraph g;
    auto tensor = [&g](const std::string& name, std::int64_t bytes, bool constant) {
        g.tensors.push_back({name, bytes, constant});
        return static_cast<int>(g.tensors.size() - 1);
    };
    const int L = static_cast<int>(net.layers.size());
    std::vector<int> tensorOf(static_cast<std::size_t>(L + 1), -1);   // slot 0: the input, 1 + i: layer i
    g.input = tensorOf[0] = tensor("input", net.input.elems(), false);
    auto act = [&](int layer) { return tensorOf[static_cast<std::size_t>(layer + 1)]; };
    for (int i = 0; i < L; ++i) {
        const Layer& l = net.layer(i);
        int y = -1;
        switch (l.kind) {
        case LayerKind::Conv: {
            const int w = tensor(l.name + "/weight", 0, true);
            const int b = tensor(l.name + "/bias", 0, true);
            int x = act(l.inputs[0]);
            if (isTfliteClassifier(net, i)) {
                const int shape = tensor(l.name + "/flatten_shape", 0, true);
                const int r = tensor(l.name + "/flatten", l.cin, false);
                g.ops.push_back(FileOp{OpType::Reshape, {x, shape}, {r}});
                y = tensor(l.name, l.cout, false);
                FileOp fc{OpType::FullyConnected, {r, w, b}, {y}};
                fc.channels = l.cout;
                fc.in_channels = l.cin;
                g.ops.push_back(fc);
                break;
            }
            const TflitePadding pad = tflitePaddingOf(l);
            int in_h = l.in.h, in_w = l.in.w;
            if (pad == TflitePadding::ExplicitPad) {
                const int paddings = tensor(l.name + "/paddings", 0, true);
                in_h += l.pad_t + l.pad_b;
                in_w += l.pad_l + l.pad_r;
                const int p = tensor(l.name + "/pad", static_cast<std::int64_t>(l.in.c) * in_h * in_w, false);
                g.ops.push_back(FileOp{OpType::Pad, {x, paddings}, {p}});
                x = p;
            }
            y = tensor(l.name, l.out.elems(), false);
            FileOp c{l.depthwise() ? OpType::DepthwiseConv2D : OpType::Conv2D, {x, w, b}, {y}};
            c.channels = l.cout;
            c.in_channels = l.in.c;
            c.in_h = in_h, c.in_w = in_w, c.out_h = l.out.h, c.out_w = l.out.w;
            c.kh = l.kh, c.kw = l.kw, c.stride_h = l.stride_h, c.stride_w = l.stride_w;
            c.same = pad == TflitePadding::Same;
            g.ops.push_back(c);
            break;
        }
        case LayerKind::Add:
        case LayerKind::ChannelScale:
            y = tensor(l.name, l.out.elems(), false);
            g.ops.push_back(FileOp{l.kind == LayerKind::Add ? OpType::Add : OpType::Mul, {act(l.inputs[0]), act(l.inputs[1])}, {y}});
            break;
        case LayerKind::GlobalAvgPool: {
            y = tensor(l.name, l.out.elems(), false);
            FileOp p{OpType::AveragePool2D, {act(l.inputs[0])}, {y}};
            p.channels = l.out.c;
            p.out_h = l.out.h, p.out_w = l.out.w;
            g.ops.push_back(p);
            break;
        }
        default:
            throw InputError(net.name + ": cannot be written as TFLite: layer " + std::to_string(i) + " '" + l.name + "'");
        }
        tensorOf[static_cast<std::size_t>(i + 1)] = y;
    }
    g.output = act(L - 1);
    return g;
}

// ------------------------------------------------------------------------------------------------
// What a target's build compiles to: sizeof / alignof of every record TFLM puts in the tail.
// Measured by compiling TFLM's headers at the pinned commit with -DTF_LITE_STATIC_MEMORY (and
// -DCMSIS_NN for the CMSIS-NN OpData, which are private structs of kernels/cmsis_nn/*.cc:
// {OpDataConv; int buffer_idx}, {OpDataFullyConnected; 2 ints; int32_t*; 3 int32_t}, the ADD's own
// 15-field struct, {OpDataPooling; int buffer_idx}). x86-64: g++; 32-bit: arm-none-eabi-g++
// -mcpu=cortex-m7 -mthumb -mfloat-abi=hard, whose AAPCS short enums make the option structs of FC /
// ADD / MUL 5 / 2 / 1 bytes.
struct TailRecord {
    std::int64_t size;
    std::int64_t align;
};

struct TargetLayout {
    TailRecord single_arena_allocator, greedy_planner, micro_allocator, builtin_data_allocator, subgraph_allocations;
    TailRecord eval_tensor, node_and_registration, scratch_handle, tflite_tensor, affine_quantization;
    TailRecord conv_params, depthwise_params, fc_params, add_params, mul_params, pool_params, reshape_params;
    // OpData of the reference kernels and of the CMSIS-NN ones (ADD, MUL, PAD keep the reference struct
    // size: CMSIS-NN's ADD struct has the same fields, MUL and PAD use the reference Init).
    std::int64_t ref_conv, ref_fc, ref_add, ref_mul, ref_pad, ref_pool;
    std::int64_t cmsis_conv, cmsis_fc, cmsis_add, cmsis_pool;
    std::int64_t pointer;
};

const TargetLayout& layoutOf(int pointerBytes)
{
    //                                     allocator  planner   MicroAlloc builtin   subgraph
    static const TargetLayout x86_64{{72, 8},  {72, 8},  {72, 8},  {16, 8},  {16, 8},
                                     // eval   node      handle    tensor    affine quantization
                                     {24, 8},  {64, 8},  {8, 8},   {64, 8},  {24, 8},
                                     // options: conv, depthwise, FC, ADD, MUL, pool, reshape
                                     {28, 4},  {28, 4},  {16, 4},  {8, 4},   {4, 4},  {40, 4}, {36, 4},
                                     // OpData reference: conv, FC, ADD, MUL, PAD, pool; CMSIS-NN: conv, FC, ADD, pool
                                     72, 64, 60, 36, 56, 32, 80, 96, 60, 36,
                                     8};
    static const TargetLayout armEabi{{36, 4}, {44, 4},  {36, 4},  {8, 4},   {8, 4},
                                      {12, 4}, {32, 4},  {4, 4},   {32, 4},  {12, 4},
                                      {28, 4}, {28, 4},  {5, 1},   {2, 1},   {1, 1},  {40, 4}, {36, 4},
                                      56, 48, 60, 36, 56, 32, 60, 72, 60, 36,
                                      4};
    if (pointerBytes == 8) return x86_64;
    if (pointerBytes == 4) return armEabi;
    throw InputError("TFLM target: pointer size " + std::to_string(pointerBytes) + " bytes; 8 (x86-64) or 4 (32-bit ARM) are known");
}

constexpr std::int64_t kArenaAlignment = 16;   // MicroArenaBufferAlignment()
std::int64_t alignUp(std::int64_t v, std::int64_t a) { return (v + a - 1) / a * a; }

// The tail: SingleArenaBufferAllocator::AllocatePersistentBuffer, AlignPointerDown(tail − size, align),
// from the arena's 16-aligned end. Each allocation's bytes (with the padding it caused) go to a part.
class Tail {
public:
    void allocate(std::int64_t size, std::int64_t align, std::int64_t& part)
    {
        const std::int64_t next = (tail_ - size) / align * align;   // tail_ stays positive: floor = align down
        part += tail_ - next;
        tail_ = next;
    }
    void allocate(const TailRecord& r, std::int64_t& part, std::int64_t count = 1) { allocate(r.size * count, r.align, part); }
    std::int64_t used() const { return kEnd - tail_; }

private:
    static constexpr std::int64_t kEnd = std::int64_t(1) << 40;   // any multiple of 16
    std::int64_t tail_ = kEnd;
};

// TFLM's padding of a SAME conv (ComputePaddingWithOffset: the smaller half of the total) — what the
// CMSIS-NN kernels' buffer-size rules read; VALID is 0.
int tflmPadding(bool same, int in, int k, int s, int out)
{
    if (!same) return 0;
    return std::max((out - 1) * s + k - in, 0) / 2;
}

// CMSIS-NN's scratch request of one op (bytes, 0 for none) on a core with DSP and no MVE, built with
// GCC (kernels/cmsis_nn/*.cc Prepare; cmsis-nn/Source/*/arm_*_get_buffer_size*.c).
std::int64_t cmsisScratchBytes(const FileOp& op)
{
    switch (op.type) {
    case OpType::Conv2D: {
        const int pad_h = tflmPadding(op.same, op.in_h, op.kh, op.stride_h, op.out_h);
        const int pad_w = tflmPadding(op.same, op.in_w, op.kw, op.stride_w, op.out_w);
        // arm_convolve_wrapper_s8_get_buffer_size_dsp: a 1×1 conv without padding needs none (its
        // "fast" DSP buffer is 0 unless built with Arm Compiler 6); every other conv —
        // arm_convolve_1_x_n_s8 included — the im2col buffer of arm_convolve_s8: 2 columns of
        // kw·kh·c_in int16, the column length rounded up to 4.
        if (pad_h == 0 && pad_w == 0 && op.kh == 1 && op.kw == 1) return 0;
        return 2 * alignUp(static_cast<std::int64_t>(op.kw) * op.kh * op.in_channels, 4) * 2;
    }
    case OpType::DepthwiseConv2D: {
        // arm_depthwise_conv_wrapper_s8_get_buffer_size: the 3×3 kernel with padding ≤ 1 needs none;
        // otherwise arm_depthwise_conv_s8_opt's c·kw·kh int16.
        const int pad_h = tflmPadding(op.same, op.in_h, op.kh, op.stride_h, op.out_h);
        const int pad_w = tflmPadding(op.same, op.in_w, op.kw, op.stride_w, op.out_w);
        if (op.kh == 3 && op.kw == 3 && pad_h <= 1 && pad_w <= 1) return 0;
        return static_cast<std::int64_t>(op.in_channels) * op.kw * op.kh * 2;
    }
    case OpType::AveragePool2D:   // arm_avgpool_s8_get_buffer_size_dsp: one int32 per channel
        return static_cast<std::int64_t>(op.channels) * 4;
    case OpType::FullyConnected:  // a [1, units] output is not the conv-1×1 path; arm_fully_connected_s8 (DSP) needs none
    default:
        return 0;
    }
}

// ------------------------------------------------------------------------------------------------
// TFLM's GreedyMemoryPlanner (memory_planner/greedy_memory_planner.cc), step by step.
struct PlannerBuffer {
    std::int64_t size;
    int first, last;   // allocation scopes: 0 the graph input, op i at i + 1
    std::int64_t offset = -1;
};

std::int64_t greedyPlan(std::vector<PlannerBuffer>& buffers)
{
    const int n = static_cast<int>(buffers.size());
    if (n == 0) return 0;
    // CalculateOffsetsIfNeeded: online buffers are written from the end of the arrays (so in reverse
    // order of addition), then ReverseSortInPlace — a stable bubble sort, descending by size.
    std::vector<int> ids(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) ids[static_cast<std::size_t>(n - 1 - i)] = i;
    std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return buffers[static_cast<std::size_t>(a)].size > buffers[static_cast<std::size_t>(b)].size; });
    // Placed buffers as a list ordered by offset; each new one goes to the first gap, between buffers
    // that overlap it in time, large enough to hold it (else after the last of them).
    std::vector<int> byOffset;   // buffer ids, ascending offset (ties: TFLM inserts after equal offsets)
    byOffset.reserve(static_cast<std::size_t>(n));
    auto overlaps = [&](int id, int first, int last) {
        const PlannerBuffer& b = buffers[static_cast<std::size_t>(id)];
        return !(b.first > last || first > b.last);
    };
    for (int k = 0; k < n; ++k) {
        const int id = ids[static_cast<std::size_t>(k)];
        PlannerBuffer& want = buffers[static_cast<std::size_t>(id)];
        std::int64_t candidate = 0;
        if (k > 0) {
            int prior = -1;   // index into byOffset
            while (true) {
                int next = -1;
                for (int j = prior + 1; j < static_cast<int>(byOffset.size()); ++j)
                    if (overlaps(byOffset[static_cast<std::size_t>(j)], want.first, want.last)) {
                        next = j;
                        break;
                    }
                if (prior >= 0) {
                    const PlannerBuffer& p = buffers[static_cast<std::size_t>(byOffset[static_cast<std::size_t>(prior)])];
                    candidate = std::max(candidate, p.offset + p.size);
                }
                if (next < 0) break;
                if (buffers[static_cast<std::size_t>(byOffset[static_cast<std::size_t>(next)])].offset - candidate >= want.size) break;
                prior = next;
            }
        }
        want.offset = candidate;
        // Insertion: before the first entry only when strictly smaller than its offset; otherwise after
        // the last entry whose offset is ≤ the candidate.
        std::size_t at = 0;
        if (!byOffset.empty() && !(buffers[static_cast<std::size_t>(byOffset[0])].offset > candidate)) {
            at = 1;
            while (at < byOffset.size() && !(buffers[static_cast<std::size_t>(byOffset[at])].offset > candidate)) ++at;
        }
        byOffset.insert(byOffset.begin() + static_cast<std::ptrdiff_t>(at), id);
    }
    std::int64_t top = 0;
    for (const PlannerBuffer& b : buffers) top = std::max(top, b.offset + b.size);
    return top;
}

}  // namespace

std::string TflmTarget::describe() const
{
    return std::string(pointer_bytes == 4 ? "32-bit Cortex-M7" : pointer_bytes == 8 ? "64-bit host" : std::to_string(pointer_bytes * 8) + "-bit") +
           ", " + (kernels == TflmKernels::CmsisNn ? "CMSIS-NN kernels" : "reference kernels");
}

Json TflmTarget::toJson() const
{
    return Json{{"pointer_bytes", pointer_bytes}, {"kernels", kernels == TflmKernels::CmsisNn ? "cmsis-nn" : "reference"}};
}

std::int64_t TflmTailParts::sum() const
{
    return runtime + eval_tensors + nodes + op_options + op_data + per_channel + scratch_handles + io_tensors;
}

Json TflmTailParts::toJson() const
{
    return Json{{"runtime", runtime},           {"eval_tensors", eval_tensors}, {"nodes", nodes},
                {"op_options", op_options},     {"op_data", op_data},           {"per_channel", per_channel},
                {"scratch_handles", scratch_handles}, {"io_tensors", io_tensors}};
}

Json TflmArenaPrediction::toJson(bool withBuffers) const
{
    Json j{{"target", target.toJson()},
           {"target_text", target.describe()},
           {"arena_used_bytes", arena_used_bytes},
           {"head_bytes", head_bytes},
           {"tail_bytes", tail_bytes},
           {"tail", tail.toJson()},
           {"scratch_bytes", scratch_bytes},
           {"live_peak_bytes", live_peak_bytes},
           {"live_peak_op", live_peak_op},
           {"live_peak_op_type", live_peak_op_type},
           {"ops", ops.size()},
           {"tensors", tensors}};
    if (withBuffers) {
        Json b = Json::array();
        for (const TflmPlannedBuffer& x : buffers)
            b.push_back({{"name", x.name}, {"bytes", x.bytes}, {"first_op", x.first_op}, {"last_op", x.last_op}, {"scratch", x.scratch}, {"offset", x.offset}});
        j["buffers"] = b;
        j["op_types"] = ops;
    }
    return j;
}

TflmArenaPrediction predictTflmArena(const Network& net, const TflmTarget& target)
{
    const TargetLayout& L = layoutOf(target.pointer_bytes);
    const bool cmsis = target.kernels == TflmKernels::CmsisNn;
    const FileGraph g = graphOf(net);
    const int nOps = static_cast<int>(g.ops.size());

    TflmArenaPrediction p;
    p.target = target;
    p.tensors = static_cast<int>(g.tensors.size());
    for (const FileOp& op : g.ops) p.ops.push_back(opTypeName(op.type));

    // ---- The tail, in the order MicroInterpreter's constructor and AllocateTensors() allocate it.
    Tail tail;
    TflmTailParts& t = p.tail;
    tail.allocate(L.single_arena_allocator, t.runtime);   // SingleArenaBufferAllocator::Create
    tail.allocate(L.greedy_planner, t.runtime);           // CreateMemoryPlanner(kGreedy)
    tail.allocate(L.micro_allocator, t.runtime);          // MicroAllocator::Create
    tail.allocate(L.builtin_data_allocator, t.runtime);   // StartModelAllocation: MicroBuiltinDataAllocator
    tail.allocate(L.subgraph_allocations, t.runtime);     //   one SubgraphAllocations
    tail.allocate(L.eval_tensor, t.eval_tensors, p.tensors);   //   AllocateTfLiteEvalTensors
    tail.allocate(L.node_and_registration, t.nodes, nOps);     //   AllocateNodeAndRegistrations
    for (const FileOp& op : g.ops) {   // PrepareNodeAndRegistrationDataFromFlatbuffer: the Parse* functions
        switch (op.type) {
        case OpType::Conv2D: tail.allocate(L.conv_params, t.op_options); break;
        case OpType::DepthwiseConv2D: tail.allocate(L.depthwise_params, t.op_options); break;
        case OpType::FullyConnected: tail.allocate(L.fc_params, t.op_options); break;
        case OpType::Add: tail.allocate(L.add_params, t.op_options); break;
        case OpType::Mul: tail.allocate(L.mul_params, t.op_options); break;
        case OpType::AveragePool2D: tail.allocate(L.pool_params, t.op_options); break;
        case OpType::Reshape: tail.allocate(L.reshape_params, t.op_options); break;
        case OpType::Pad: break;   // ParsePad parses nothing
        }
    }
    for (const FileOp& op : g.ops) {   // InitSubgraphs: each kernel's Init, AllocatePersistentBuffer (16-aligned)
        std::int64_t bytes = 0;
        switch (op.type) {
        case OpType::Conv2D:
        case OpType::DepthwiseConv2D: bytes = cmsis ? L.cmsis_conv : L.ref_conv; break;
        case OpType::FullyConnected: bytes = cmsis ? L.cmsis_fc : L.ref_fc; break;
        case OpType::Add: bytes = cmsis ? L.cmsis_add : L.ref_add; break;
        case OpType::Mul: bytes = L.ref_mul; break;
        case OpType::AveragePool2D: bytes = cmsis ? L.cmsis_pool : L.ref_pool; break;
        case OpType::Pad: bytes = L.ref_pad; break;
        case OpType::Reshape: break;   // no Init
        }
        if (bytes > 0) tail.allocate(bytes, kArenaAlignment, t.op_data);
    }
    struct Scratch {
        std::int64_t bytes;
        int op;
    };
    std::vector<Scratch> scratch;
    for (int i = 0; i < nOps; ++i) {   // PrepareSubgraphs: per-channel multipliers and shifts; scratch requests
        const FileOp& op = g.ops[static_cast<std::size_t>(i)];
        const bool perChannel = op.type == OpType::Conv2D || op.type == OpType::DepthwiseConv2D ||
                                (op.type == OpType::FullyConnected && op.channels > 1);   // FC: per-channel when > 1 scale
        if (perChannel)
            for (int k = 0; k < 2; ++k) tail.allocate(static_cast<std::int64_t>(op.channels) * 4, kArenaAlignment, t.per_channel);
        // The reference kernels request scratch only for int4 weights; CMSIS-NN's for its own buffers.
        if (cmsis)
            if (const std::int64_t s = cmsisScratchBytes(op); s > 0) scratch.push_back({s, i});
    }
    if (!scratch.empty())   // FinishModelAllocation: AllocateScratchBufferHandles
        tail.allocate(L.scratch_handle, t.scratch_handles, static_cast<std::int64_t>(scratch.size()));
    // After planning: input_tensors_ / output_tensors_ (one pointer each, 16-aligned), each with a
    // persistent TfLiteTensor, its TfLiteAffineQuantization and a one-element zero-point TfLiteIntArray.
    for (int io = 0; io < 2; ++io) {
        tail.allocate(L.pointer, kArenaAlignment, t.runtime);
        tail.allocate(L.tflite_tensor, t.io_tensors);
        tail.allocate(L.affine_quantization, t.io_tensors);
        tail.allocate(4 + 4, 4, t.io_tensors);   // TfLiteIntArrayGetSizeInBytes(1), alignof(TfLiteIntArray)
    }
    p.tail_bytes = tail.used();

    // ---- The head: AllocationInfoBuilder's lifetimes, then the greedy plan.
    const int T = p.tensors;
    std::vector<int> first(static_cast<std::size_t>(T), -1), last(static_cast<std::size_t>(T), -1);
    first[static_cast<std::size_t>(g.input)] = last[static_cast<std::size_t>(g.input)] = 0;
    for (int i = 0; i < nOps; ++i) {
        const FileOp& op = g.ops[static_cast<std::size_t>(i)];
        const int scope = i + 1;
        for (int o : op.outputs)
            if (first[static_cast<std::size_t>(o)] < 0) first[static_cast<std::size_t>(o)] = scope;
        for (int in : op.inputs) last[static_cast<std::size_t>(in)] = scope;
        for (int o : op.outputs) last[static_cast<std::size_t>(o)] = scope;
    }
    if (first[static_cast<std::size_t>(g.output)] < 0) first[static_cast<std::size_t>(g.output)] = nOps;
    last[static_cast<std::size_t>(g.output)] = nOps;

    std::vector<PlannerBuffer> planned;
    for (int i = 0; i < T; ++i) {   // tensors that need arena space, in tensor order
        const FileTensor& x = g.tensors[static_cast<std::size_t>(i)];
        if (x.constant || x.bytes == 0) continue;
        planned.push_back({alignUp(x.bytes, kArenaAlignment), first[static_cast<std::size_t>(i)], last[static_cast<std::size_t>(i)]});
        p.buffers.push_back({x.name, planned.back().size, planned.back().first - 1, planned.back().last - 1, false, 0});
    }
    for (const Scratch& s : scratch) {   // then the scratch buffers, in request order
        planned.push_back({alignUp(s.bytes, kArenaAlignment), s.op + 1, s.op + 1});
        p.buffers.push_back({"scratch of op " + std::to_string(s.op) + " " + opTypeName(g.ops[static_cast<std::size_t>(s.op)].type),
                             planned.back().size, s.op, s.op, true, 0});
        p.scratch_bytes += planned.back().size;
    }
    p.head_bytes = greedyPlan(planned);
    for (std::size_t i = 0; i < planned.size(); ++i) p.buffers[i].offset = planned[i].offset;

    std::vector<std::int64_t> live(static_cast<std::size_t>(nOps + 1), 0);
    for (const PlannerBuffer& b : planned)
        for (int s = b.first; s <= b.last; ++s) live[static_cast<std::size_t>(s)] += b.size;
    int peak = 0;
    for (int s = 1; s <= nOps; ++s)
        if (live[static_cast<std::size_t>(s)] > live[static_cast<std::size_t>(peak)]) peak = s;
    p.live_peak_bytes = live[static_cast<std::size_t>(peak)];
    p.live_peak_op = peak - 1;
    p.live_peak_op_type = peak >= 1 ? p.ops[static_cast<std::size_t>(peak - 1)] : "input";

    p.arena_used_bytes = p.head_bytes + p.tail_bytes;
    return p;
}

}  // namespace tinyscope
