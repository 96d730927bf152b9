#include "graph/DeadCodeElimination.h"

namespace tinyscope {

void eliminateDeadCode(TrainingGraph& g)
{
    g.live.assign(g.ops.size(), 0);
    g.order.clear();
    g.order.reserve(g.ops.size());
    // Iterative post-order walk: (op, next argument slot).
    std::vector<std::pair<int, std::size_t>> stack;
    for (const GraphOutput& out : g.outputs) {
        const int root = g.tensor(out.tensor).producer;
        if (root < 0 || g.live[static_cast<std::size_t>(root)]) continue;
        g.live[static_cast<std::size_t>(root)] = 1;
        stack.emplace_back(root, 0);
        while (!stack.empty()) {
            auto& [op, slot] = stack.back();
            const Op& o = g.op(op);
            if (slot < o.inputs.size()) {
                const int p = g.tensor(o.inputs[slot++]).producer;
                if (p >= 0 && !g.live[static_cast<std::size_t>(p)]) {
                    g.live[static_cast<std::size_t>(p)] = 1;
                    stack.emplace_back(p, 0);
                }
            } else {
                g.order.push_back(op);
                stack.pop_back();
            }
        }
    }
}

std::vector<int> liveConsumerCounts(const TrainingGraph& g)
{
    std::vector<int> n(g.tensors.size(), 0);
    for (int op : g.order)
        for (int t : g.op(op).inputs) ++n[static_cast<std::size_t>(t)];
    return n;
}

}  // namespace tinyscope
