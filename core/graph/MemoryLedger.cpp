#include "graph/MemoryLedger.h"

#include <algorithm>
#include <functional>
#include <utility>

namespace tinyscope {

namespace {

std::int64_t bitPacked(std::int64_t elems) { return (elems + 7) / 8; }

// Elements of a conv's weight restricted to k input channels (tiny-training's count).
std::int64_t weightElemsForK(const Layer& c, int k)
{
    if (c.depthwise()) return static_cast<std::int64_t>(k) * c.kh * c.kw;
    if (c.groups > 1) return c.weightElems();
    return static_cast<std::int64_t>(c.cout) * k * c.kh * c.kw;
}

}  // namespace

TrainingMemoryModel::TrainingMemoryModel(Network net) : net_(std::move(net))
{
    const int L = static_cast<int>(net_.layers.size());
    bytes_.assign(static_cast<std::size_t>(L + 1), 0);
    bytes_[0] = net_.input.elems();
    consumers_.assign(static_cast<std::size_t>(L + 1), {});
    std::vector<int> lastUse(static_cast<std::size_t>(L + 1), -1);
    for (int l = 0; l < L; ++l) {
        const Layer& layer = net_.layer(l);
        bytes_[static_cast<std::size_t>(tensorOf(l))] = layer.out.elems();
        for (std::size_t s = 0; s < layer.inputs.size(); ++s) {
            const int t = tensorOf(layer.inputs[s]);
            consumers_[static_cast<std::size_t>(t)].push_back({l, static_cast<int>(s)});
            lastUse[static_cast<std::size_t>(t)] = l;
        }
    }
    lastUse[static_cast<std::size_t>(tensorOf(L - 1))] = L;   // the logits feed the loss

    // Inference working set: tensors alive at step l; a depthwise conv runs in place when its
    // input dies there (TinyEngine), so only the larger of input and output is counted.
    // One sweep: a tensor is alive from its producer's step to its last use.
    working_.assign(static_cast<std::size_t>(L), 0);
    std::vector<std::vector<int>> dyingAt(static_cast<std::size_t>(L + 1));
    for (int t = 0; t <= L; ++t)
        if (lastUse[static_cast<std::size_t>(t)] >= t - 1 && lastUse[static_cast<std::size_t>(t)] >= 0)
            dyingAt[static_cast<std::size_t>(lastUse[static_cast<std::size_t>(t)])].push_back(t);
    std::int64_t alive = lastUse[0] >= 0 ? bytes_[0] : 0;
    for (int l = 0; l < L; ++l) {
        if (lastUse[static_cast<std::size_t>(tensorOf(l))] >= l) alive += bytes_[static_cast<std::size_t>(tensorOf(l))];
        std::int64_t w = alive;
        for (int t : dyingAt[static_cast<std::size_t>(l)]) alive -= bytes_[static_cast<std::size_t>(t)];
        const Layer& layer = net_.layer(l);
        const int in = tensorOf(layer.inputs[0]);
        if (layer.depthwise() && lastUse[static_cast<std::size_t>(in)] == l)
            w -= std::min(bytes_[static_cast<std::size_t>(in)], bytes_[static_cast<std::size_t>(tensorOf(l))]);
        working_[static_cast<std::size_t>(l)] = w;
        if (w > inference_peak_) {
            inference_peak_ = w;
            inference_peak_layer_ = l;
        }
    }

    // The reference walk's survivors: depth first from the head, arguments last to first, each
    // write overwriting the previous one, a tensor keeping the write made before its visit.
    survivor_.assign(static_cast<std::size_t>(L + 1), {-1, -1});
    std::vector<char> visited(static_cast<std::size_t>(L), 0);
    std::function<void(int)> visit = [&](int l) {
        visited[static_cast<std::size_t>(l)] = 1;
        const Layer& layer = net_.layer(l);
        for (std::size_t s = 0; s < layer.inputs.size(); ++s) {
            const int p = layer.inputs[s];
            if (p >= 0 && !visited[static_cast<std::size_t>(p)]) survivor_[static_cast<std::size_t>(tensorOf(p))] = {l, static_cast<int>(s)};
        }
        for (std::size_t s = layer.inputs.size(); s-- > 0;) {
            const int p = layer.inputs[s];
            if (p >= 0 && !visited[static_cast<std::size_t>(p)]) visit(p);
        }
    };
    visit(L - 1);
}

ExtraMemory TrainingMemoryModel::extraMemory(const ResolvedScheme& scheme) const
{
    ExtraMemory e;
    const int nb = net_.numBackboneConvs();
    e.classifier_input = net_.head().in.elems();
    for (int ci = 0; ci < nb; ++ci) {
        const ConvUpdate& u = scheme.conv(ci);
        const Layer& c = net_.conv(ci);
        if (u.bias) {
            e.mask_bits += c.out.elems();
            e.biases += 4LL * c.cout;
        }
        if (u.weight()) {
            const int k = c.groups > 1 && !c.depthwise() ? c.cin : u.k;
            e.saved_inputs += static_cast<std::int64_t>(c.in.h) * c.in.w * k;
            e.weights += weightElemsForK(c, k);
        }
    }
    return e;
}

MemoryLedger TrainingMemoryModel::ledger(const ResolvedScheme& scheme, AutodiffMode mode) const
{
    MemoryLedger m;
    m.model = net_.name;
    m.mode = mode;
    m.extra = extraMemory(scheme);
    m.inference_peak_bytes = inference_peak_;
    m.inference_peak_layer = inference_peak_layer_;
    addRows(scheme, m);
    const GradientFlow flow = gradientFlow(scheme, mode);
    m.backward = flow.need;
    const std::vector<std::int64_t> savedOf = savedBytes(scheme, flow, mode);
    for (std::int64_t s : savedOf) m.saved_bytes += s;
    addSchedule(scheme, flow, mode, savedOf, m);
    for (std::size_t i = 0; i < m.schedule.size(); ++i) {
        const ScheduleStep& s = m.schedule[i];
        if (m.peak_step < 0 || s.total > m.peak_bytes) {
            m.peak_bytes = s.total;
            m.peak_step = static_cast<int>(i);
        }
        if (m.peak_step_no_reorder < 0 || s.totalNoReorder() > m.peak_bytes_no_reorder) {
            m.peak_bytes_no_reorder = s.totalNoReorder();
            m.peak_step_no_reorder = static_cast<int>(i);
        }
    }
    return m;
}

void TrainingMemoryModel::addRows(const ResolvedScheme& scheme, MemoryLedger& m) const
{
    const int nc = net_.numConvs();
    m.rows.reserve(static_cast<std::size_t>(nc));
    for (int ci = 0; ci < nc; ++ci) {
        const ConvUpdate& u = scheme.conv(ci);
        const Layer& c = net_.conv(ci);
        LedgerRow r;
        r.index = ci;
        r.layer = net_.convLayers()[static_cast<std::size_t>(ci)];
        r.name = c.name;
        r.role = c.role;
        r.classifier = ci == nc - 1;
        r.bias = u.bias;
        r.ratio = u.ratio;
        r.k = u.k;
        r.cin = c.cin;
        const std::int64_t weightBytes = u.weight() ? weightElemsForK(c, u.k) : 0;
        if (r.classifier) {
            r.classifier_input_bytes = c.in.elems();   // its own weights and bias count 0 (fc_bits = 0)
        } else {
            if (u.bias) {
                r.mask_bits = c.out.elems();
                r.bias_bytes = 4LL * c.cout;
            }
            if (u.weight()) {
                r.saved_input_bytes = static_cast<std::int64_t>(c.in.h) * c.in.w * (c.groups > 1 && !c.depthwise() ? c.cin : u.k);
                r.weight_bytes = weightBytes;
            }
        }
        m.trainable_bytes += (u.bias ? 4LL * c.cout : 0) + weightBytes;
        m.rows.push_back(std::move(r));
    }
}

bool TrainingMemoryModel::GradientFlow::carries(const TrainingMemoryModel& m, AutodiffMode mode, int l, int slot) const
{
    const int p = m.net_.layer(l).inputs[static_cast<std::size_t>(slot)];
    if (p < 0 || !need[static_cast<std::size_t>(p)]) return false;
    if (mode == AutodiffMode::Correct) return true;
    const Use& s = m.survivor_[static_cast<std::size_t>(m.tensorOf(p))];
    return s.layer == l && s.slot == slot;
}

TrainingMemoryModel::GradientFlow TrainingMemoryModel::gradientFlow(const ResolvedScheme& scheme, AutodiffMode mode) const
{
    // Correct mode: everything downstream of an updated conv; reference mode: only along the edges
    // whose gradient the overwriting walk keeps.
    const int L = static_cast<int>(net_.layers.size());
    GradientFlow f;
    f.need.assign(static_cast<std::size_t>(L), 0);
    std::vector<char> updated(static_cast<std::size_t>(L), 0);
    for (int ci = 0; ci < net_.numConvs(); ++ci) {
        const ConvUpdate& u = scheme.conv(ci);
        if (u.bias || u.weight()) updated[static_cast<std::size_t>(net_.convLayers()[static_cast<std::size_t>(ci)])] = 1;
    }
    for (int l = 0; l < L; ++l) {
        f.need[static_cast<std::size_t>(l)] = updated[static_cast<std::size_t>(l)];
        for (std::size_t s = 0; s < net_.layer(l).inputs.size(); ++s)
            if (f.carries(*this, mode, l, static_cast<int>(s))) f.need[static_cast<std::size_t>(l)] = 1;
    }
    return f;
}

std::vector<std::int64_t> TrainingMemoryModel::savedBytes(const ResolvedScheme& scheme, const GradientFlow& flow, AutodiffMode mode) const
{
    // Tensors kept for backward: (owner layer, bytes), alive from the owner's forward step to the
    // end of its backward step.
    const int L = static_cast<int>(net_.layers.size());
    std::vector<std::int64_t> savedOf(static_cast<std::size_t>(L), 0);
    for (int l = 0; l < L; ++l) {
        if (!flow.need[static_cast<std::size_t>(l)]) continue;
        const Layer& layer = net_.layer(l);
        std::int64_t s = 0;
        switch (layer.kind) {
        case LayerKind::Conv: {
            s += bitPacked(layer.out.elems());   // clamp mask, 1 bit per output element
            const ConvUpdate& u = scheme.conv(layer.conv_index);
            if (u.weight())
                s += static_cast<std::int64_t>(layer.in.h) * layer.in.w * (layer.groups > 1 && !layer.depthwise() ? layer.cin : u.k);
            break;
        }
        case LayerKind::Add:
            s += layer.out.elems();   // TinyEngine keeps residual-add masks as 1 byte per element
            break;
        case LayerKind::ChannelScale: {
            s += layer.out.elems();   // mask of its clamp
            if (flow.carries(*this, mode, l, 1)) s += layer.in.elems();   // the gate, to scale the features' gradient
            if (flow.carries(*this, mode, l, 0)) s += net_.shapeOf(layer.inputs[1]).elems();   // the features, for the gate's gradient
            break;
        }
        default:
            break;
        }
        savedOf[static_cast<std::size_t>(l)] = s;
    }
    return savedOf;
}

void TrainingMemoryModel::addSchedule(const ResolvedScheme& scheme, const GradientFlow& flow, AutodiffMode mode,
                                      const std::vector<std::int64_t>& savedOf, MemoryLedger& m) const
{
    const int L = static_cast<int>(net_.layers.size());
    const int head = L - 1;   // the classifier's saved input is its weight gradient's input (k = C)
    // Forward steps.
    std::int64_t savedAlive = 0;
    for (int l = 0; l < L; ++l) {
        savedAlive += savedOf[static_cast<std::size_t>(l)];
        ScheduleStep st;
        st.layer = l;
        st.working = working_[static_cast<std::size_t>(l)];
        st.saved = savedAlive;
        st.total = st.working + st.saved + m.trainable_bytes;
        m.schedule.push_back(st);
    }

    // Backward steps, head to the earliest layer that needs one.
    std::vector<char> gradAlive(static_cast<std::size_t>(L + 1), 0);
    std::int64_t grads = 4 * bytes_[static_cast<std::size_t>(tensorOf(head))];   // d loss / d logits
    gradAlive[static_cast<std::size_t>(tensorOf(head))] = 1;
    std::int64_t accumulated = 0;
    for (int l = head; l >= 0; --l) {
        if (!flow.need[static_cast<std::size_t>(l)]) continue;
        const Layer& layer = net_.layer(l);
        for (std::size_t s = 0; s < layer.inputs.size(); ++s) {
            if (!flow.carries(*this, mode, l, static_cast<int>(s))) continue;
            const auto t = static_cast<std::size_t>(tensorOf(layer.inputs[s]));
            if (!gradAlive[t]) {   // correct mode accumulates into an existing buffer
                gradAlive[t] = 1;
                grads += 4 * bytes_[t];
            }
        }
        if (layer.kind == LayerKind::Conv) {
            const ConvUpdate& u = scheme.conv(layer.conv_index);
            accumulated += 4 * ((u.bias ? layer.cout : 0) + (u.weight() ? weightElemsForK(layer, u.k) : 0));
        }
        ScheduleStep st;
        st.backward = true;
        st.layer = l;
        st.working = grads;
        st.saved = savedAlive;
        st.accumulated = accumulated;
        st.total = st.working + st.saved + m.trainable_bytes;
        m.schedule.push_back(st);
        // After the step: its output gradient and its saved tensors are released.
        const auto out = static_cast<std::size_t>(tensorOf(l));
        if (gradAlive[out]) {
            gradAlive[out] = 0;
            grads -= 4 * bytes_[out];
        }
        savedAlive -= savedOf[static_cast<std::size_t>(l)];
    }
}

Json MemoryLedger::toJson(const Network& net, bool withSchedule) const
{
    auto where = [&](int step) -> Json {
        if (step < 0) return nullptr;
        const ScheduleStep& s = schedule[static_cast<std::size_t>(step)];
        return Json{{"phase", s.backward ? "backward" : "forward"}, {"layer", s.layer},
                    {"name", net.layer(s.layer).name}};
    };
    Json j{{"model", model},
           {"mode", autodiffModeName(mode)},
           {"extra_bytes", extra.total()},
           {"extra_bits", extra.totalBits()},
           {"extra_kB", static_cast<double>(extra.totalBits()) / 8.0 / 1024.0},
           {"breakdown",
            {{"classifier_input", extra.classifier_input},
             {"masks", extra.masks()},
             {"biases", extra.biases},
             {"saved_inputs", extra.saved_inputs},
             {"weights", extra.weights}}},
           {"trainable_bytes", trainable_bytes},
           {"saved_bytes", saved_bytes},
           {"peak_bytes", peak_bytes},
           {"peak_at", where(peak_step)},
           {"peak_bytes_no_reorder", peak_bytes_no_reorder},
           {"peak_no_reorder_at", where(peak_step_no_reorder)},
           {"inference_peak_bytes", inference_peak_bytes},
           {"inference_peak_at", inference_peak_layer >= 0 ? Json(net.layer(inference_peak_layer).name) : Json(nullptr)}};
    Json rowsJ = Json::array();
    for (const LedgerRow& r : rows) {
        rowsJ.push_back(Json{{"index", r.index},
                             {"name", r.name},
                             {"role", r.role},
                             {"classifier", r.classifier},
                             {"bias", r.bias},
                             {"ratio", r.ratio},
                             {"k", r.k},
                             {"cin", r.cin},
                             {"mask_bits", r.mask_bits},
                             {"bias_bytes", r.bias_bytes},
                             {"saved_input_bytes", r.saved_input_bytes},
                             {"weight_bytes", r.weight_bytes},
                             {"classifier_input_bytes", r.classifier_input_bytes}});
    }
    j["layers"] = std::move(rowsJ);
    if (withSchedule) {
        Json s = Json::array();
        for (const ScheduleStep& st : schedule)
            s.push_back(Json{{"phase", st.backward ? "backward" : "forward"},
                             {"layer", st.layer},
                             {"working", st.working},
                             {"saved", st.saved},
                             {"total", st.total},
                             {"total_no_reorder", st.totalNoReorder()}});
        j["schedule"] = std::move(s);
    }
    return j;
}

}  // namespace tinyscope
