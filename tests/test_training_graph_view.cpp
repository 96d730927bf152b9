// The teaching views of the training graph (issue 22, viz/TrainingGraphView.h): which ops each
// view draws, the per-block collapse, the edges between the drawn nodes, and the layout DOT that
// keys the pane's cache — on mcunet-5fps's real graph under the published 49kb scheme and under
// bias-only:12, every expected value counted independently from the graph's own flags.
#include "TestSupport.h"

#include "graph/Autodiff.h"
#include "graph/PublishedSchemes.h"
#include "viz/TrainingGraphView.h"
#include "zoo/Network.h"
#include "zoo/ZooCatalog.h"

#include <QtTest>

#include <algorithm>
#include <map>
#include <set>

using namespace tinyscope;

namespace {

TrainingGraphView viewOf(const TrainingGraph& g, const Network& net, TrainingGraphViewMode m, bool collapse = false,
                         std::set<int> expanded = {})
{
    TrainingGraphViewOptions o;
    o.mode = m;
    o.collapse = collapse;
    o.expanded = std::move(expanded);
    return buildTrainingGraphView(g, &net, o);
}

int countLive(const TrainingGraph& g, bool backwardOnly)
{
    int n = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        if (g.live[i] && (!backwardOnly || g.ops[i].phase != Phase::Forward)) ++n;
    return n;
}

// Distinct (producer, consumer) op pairs among the ops `keep` accepts.
template <class Keep>
std::set<std::pair<int, int>> opEdges(const TrainingGraph& g, Keep keep)
{
    std::set<std::pair<int, int>> e;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if (!keep(static_cast<int>(i))) continue;
        for (int in : g.ops[i].inputs) {
            const int p = g.tensor(in).producer;
            if (p >= 0 && keep(p)) e.insert({p, static_cast<int>(i)});
        }
    }
    return e;
}

std::set<std::pair<int, int>> viewOpEdges(const TrainingGraphView& v)
{
    std::set<std::pair<int, int>> e;
    for (const TrainingGraphViewEdge& x : v.edges) e.insert({v.nodes[std::size_t(x.from)].ops.front(), v.nodes[std::size_t(x.to)].ops.front()});
    return e;
}

}  // namespace

class TestTrainingGraphView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void keptOpsOnlyShrinksFrom49kbToBiasOnly12()
    {
        const Network net = zooModel("mcunet-5fps");
        TrainingGraph g = buildTrainingGraph(net, schemeByName("mcunet-5fps/49kb", &net).resolve(net), AutodiffMode::Correct);
        const int ops = static_cast<int>(g.ops.size());
        QCOMPARE(ops, 1116);   // the graph the issue timed

        // Whole graph: every op, one node each, every producer->consumer pair an edge.
        const TrainingGraphView whole = viewOf(g, net, TrainingGraphViewMode::Whole);
        QCOMPARE(int(whole.nodes.size()), ops);
        QCOMPARE(viewOpEdges(whole), opEdges(g, [](int) { return true; }));

        // Kept ops only under 49kb: exactly the live ops, no pruned one drawn.
        const int kept49 = countLive(g, false);
        QCOMPARE(kept49, 440);
        const TrainingGraphView kept = viewOf(g, net, TrainingGraphViewMode::Kept);
        QCOMPARE(int(kept.nodes.size()), kept49);
        QCOMPARE(kept.shownOps(), kept49);
        for (const TrainingGraphViewNode& n : kept.nodes) QVERIFY(g.live[std::size_t(n.ops.front())]);
        QCOMPARE(viewOpEdges(kept), opEdges(g, [&](int op) { return g.live[std::size_t(op)] != 0; }));
        for (const TrainingGraphNodeClass c : trainingGraphViewNodeClasses(g, kept)) QVERIFY(c != TrainingGraphNodeClass::Pruned);

        // The same built graph re-pruned for bias-only:12: fewer ops drawn, the same count as a fresh build.
        const ResolvedScheme bias12 = SparseScheme::biasOnly(12).resolve(net);
        QVERIFY(selectOutputs(g, net, bias12));
        const int kept12 = countLive(g, false);
        QCOMPARE(kept12, buildTrainingGraph(net, bias12, AutodiffMode::Correct).liveOps());
        QCOMPARE(kept12, 293);
        const TrainingGraphView kept2 = viewOf(g, net, TrainingGraphViewMode::Kept);
        QCOMPARE(int(kept2.nodes.size()), kept12);
        QVERIFY(kept12 < kept49);
        // The whole graph still draws every op.
        QCOMPARE(int(viewOf(g, net, TrainingGraphViewMode::Whole).nodes.size()), ops);

        // Backward only: the loss and the kept backward ops, no forward op.
        const TrainingGraphView back = viewOf(g, net, TrainingGraphViewMode::Backward);
        QCOMPARE(int(back.nodes.size()), countLive(g, true));
        for (const TrainingGraphViewNode& n : back.nodes) QVERIFY(g.ops[std::size_t(n.ops.front())].phase != Phase::Forward);
        QCOMPARE(trainingGraphViewOpCount(g, TrainingGraphViewMode::Backward), countLive(g, true));
    }

    void collapsingGroupsOpsPerBlockAndPass()
    {
        const Network net = zooModel("mcunet-5fps");
        const TrainingGraph g = buildTrainingGraph(net, schemeByName("mcunet-5fps/49kb", &net).resolve(net), AutodiffMode::Correct);
        std::vector<char> gradient(g.tensors.size(), 0);
        for (int t : g.parameter_gradient)
            if (t >= 0) gradient[std::size_t(t)] = 1;
        // Expected groups, counted here: (block or layer name, backward?) of every op that is not
        // a loss op nor a parameter gradient.
        std::map<std::pair<std::string, bool>, int> members;
        for (const Op& o : g.ops) {
            if (o.phase == Phase::Loss || o.layer < 0 || gradient[std::size_t(o.output)]) continue;
            const Layer& l = net.layer(o.layer);
            members[{l.block >= 0 ? "block" + std::to_string(l.block) : l.name, o.phase == Phase::Backward}]++;
        }
        int groupNodes = 0, single = 0;
        for (const auto& [key, n] : members) (n >= 2 ? groupNodes : single) += 1;
        const int ungrouped = static_cast<int>(std::count_if(g.ops.begin(), g.ops.end(), [&](const Op& o) {
            return o.phase == Phase::Loss || o.layer < 0 || gradient[std::size_t(o.output)];
        }));

        const TrainingGraphView v = viewOf(g, net, TrainingGraphViewMode::Whole, true);
        QCOMPARE(v.collapsedNodes(), groupNodes);
        QCOMPARE(int(v.nodes.size()), groupNodes + single + ungrouped);
        QVERIFY(v.nodes.size() < g.ops.size() / 5);   // a readable picture: 132 nodes for 1,116 ops
        QCOMPARE(v.shownOps(), int(g.ops.size()));   // every op drawn, alone or in its block
        std::vector<int> seen(g.ops.size(), 0);
        for (std::size_t k = 0; k < v.nodes.size(); ++k)
            for (int op : v.nodes[k].ops) {
                ++seen[std::size_t(op)];
                QCOMPARE(v.nodeOfOp[std::size_t(op)], int(k));
                const Op& o = g.ops[std::size_t(op)];
                if (o.phase == Phase::Loss || o.layer < 0 || gradient[std::size_t(o.output)]) QVERIFY(!v.nodes[k].collapsed);   // never hidden in a block
                if (v.nodes[k].collapsed) {
                    QCOMPARE(v.opGroup[std::size_t(op)], v.nodes[k].group);
                    QCOMPARE(o.phase == Phase::Backward, g.ops[std::size_t(v.nodes[k].ops.front())].phase == Phase::Backward);
                }
            }
        for (int s : seen) QCOMPARE(s, 1);
        for (const TrainingGraphViewEdge& e : v.edges) QVERIFY(e.from != e.to);

        // blocks.8 expanded: its ops are drawn one by one, the other blocks stay collapsed.
        int block8 = -1;
        for (std::size_t i = 0; i < v.groupNames.size(); ++i)
            if (v.groupNames[i] == "blocks.8") block8 = int(i);
        QVERIFY(block8 >= 0);
        const TrainingGraphView x = viewOf(g, net, TrainingGraphViewMode::Whole, true, {block8});
        QCOMPARE(x.collapsedNodes(), groupNodes - 2);   // its forward and its backward group
        int block8Ops = 0;
        for (std::size_t i = 0; i < g.ops.size(); ++i) block8Ops += v.opGroup[i] == block8 ? 1 : 0;
        QCOMPARE(int(x.nodes.size()), int(v.nodes.size()) - 2 + block8Ops);
    }

    void theLayoutKeyOfTheWholeViewIgnoresBiasChoices()
    {
        const Network net = zooModel("mcunet-5fps");
        TrainingGraph g = buildTrainingGraph(net, schemeByName("mcunet-5fps/49kb", &net).resolve(net), AutodiffMode::Correct);
        TrainingGraphDotOptions o;
        o.stableLabels = true;
        o.styles = false;
        auto dot = [&](TrainingGraphViewMode m, bool collapse) { return trainingGraphViewDot(g, viewOf(g, net, m, collapse), o); };
        const std::string whole = dot(TrainingGraphViewMode::Whole, false), wholeC = dot(TrainingGraphViewMode::Whole, true);
        const std::string kept = dot(TrainingGraphViewMode::Kept, false);
        QVERIFY(selectOutputs(g, net, SparseScheme::biasOnly(12).resolve(net)));
        QCOMPARE(dot(TrainingGraphViewMode::Whole, false), whole);   // recolour only
        QCOMPARE(dot(TrainingGraphViewMode::Whole, true), wholeC);
        QVERIFY(dot(TrainingGraphViewMode::Kept, false) != kept);    // another drawing: another layout
        // With styles the colours follow liveness (the exported drawing).
        TrainingGraphDotOptions styled;
        QVERIFY(trainingGraphViewDot(g, viewOf(g, net, TrainingGraphViewMode::Whole), styled).find("dashed") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestTrainingGraphView)
#include "test_training_graph_view.moc"
