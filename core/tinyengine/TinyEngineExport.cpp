#include "tinyengine/TinyEngineExport.h"

#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/DeadCodeElimination.h"
#include "graph/GraphBuilder.h"
#include "io/AtomicFolder.h"
#include "io/OutputPaths.h"
#include "tinyengine/GraphJson.h"
#include "tinyengine/TinyEngineNames.h"


namespace tinyscope {

const char* exportFormName(ExportForm f) { return f == ExportForm::Reference ? "reference" : "faithful"; }

ExportForm parseExportForm(const std::string& s)
{
    if (s == "reference") return ExportForm::Reference;
    if (s == "faithful") return ExportForm::Faithful;
    throw InputError("--mode: expected reference or faithful, got '" + s + "'");
}

ChildrenCount childrenCountFor(ExportForm f) { return f == ExportForm::Reference ? ChildrenCount::Compiler : ChildrenCount::Exact; }

int insertIdentitySlices(TrainingGraph& g, const Network& net)
{
    const int head = net.convLayers().back();
    std::vector<int> reshapes;
    for (int op : g.order) {
        const Op& o = g.op(op);
        if (o.kind != OpKind::Conv2d || o.role != OpRole::WeightGrad || o.layer == head) continue;
        if (o.layer >= 0 && net.layer(o.layer).groups != 1) continue;   // depthwise chains slice both operands already
        const int reshape = g.tensor(o.inputs[0]).producer;
        if (reshape < 0 || g.op(reshape).kind != OpKind::Reshape) continue;
        const int before = g.tensor(g.op(reshape).inputs[0]).producer;
        if (before >= 0 && g.op(before).kind == OpKind::StridedSlice) continue;
        reshapes.push_back(reshape);
    }
    GraphBuilder b(g);
    for (int reshape : reshapes) {
        const int data = g.op(reshape).inputs[0];
        b.setContext(Phase::Backward, OpRole::WeightGrad, g.op(reshape).layer);
        const TensorShape s = g.tensor(data).shape;
        const int sliced = b.stridedSlice(data, std::vector<int>(s.size(), 0), s);
        g.ops[static_cast<std::size_t>(reshape)].inputs[0] = sliced;
    }
    if (!reshapes.empty()) {
        g.live.resize(g.ops.size(), 0);
        eliminateDeadCode(g);
    }
    return static_cast<int>(reshapes.size());
}

ExportPlan planExport(const Network& net, const QuantizedParams& params, const SparseScheme& scheme, ExportForm form,
                      const std::string& name)
{
    requireFileStem(name, "export name");
    ExportPlan p;
    p.name = name;
    p.form = form;
    p.network = net;
    p.scheme = scheme.resolve(net, "scheme");
    p.graph = buildTrainingGraph(net, p.scheme, form == ExportForm::Reference ? AutodiffMode::Reference : AutodiffMode::Correct);
    p.identity_slices = insertIdentitySlices(p.graph, net);
    // Every name the files will carry fits what TinyEngine's generator can emit safely (a layer name
    // from a user's file must not reach generated C as code).
    for (const Tensor& t : p.graph.tensors)
        if (t.kind == TensorKind::Parameter) requireTinyEngineName(t.name, true, "export " + name, "parameter");
    for (const auto& [key, value] : params.scales) requireTinyEngineName(key, true, "export " + name, "scale key");
    // The pickle holds every parameter of the forward graph in first-use order (as the real file).
    p.params.source = params.source;
    p.params.scales = params.scales;
    for (int i = 0; i < p.graph.forward_ops; ++i)
        for (int t : p.graph.op(i).inputs) {
            const Tensor& tt = p.graph.tensor(t);
            if (tt.kind == TensorKind::Parameter && tt.name != "input" && tt.name != "label" && params.has(tt.name))
                p.params.set(tt.name, params.array(tt.name));
        }
    p.findings = checkForTinyEngine(p.graph, net, &p.params);
    return p;
}

ExportedFiles writeExport(const ExportPlan& plan, const std::string& dir, bool strict, const JobControl& job)
{
    if (strict && plan.errors() > 0) {
        for (const Finding& f : plan.findings)
            if (f.error())
                throw InputError("export refused (--strict): " + std::to_string(plan.errors()) + " error finding(s); first: " + f.text());
    }
    ExportedFiles files;
    const std::string shown = withoutTrailingSlashes(dir);
    const std::string graphName = plan.name + "-graph.json", paramsName = plan.name + "-params.pkl";
    files.graph = shown + "/" + graphName;
    files.params = shown + "/" + paramsName;
    files.scales = shown + "/scale.json";
    job.report(0, 4, "serialising the graph");
    std::vector<NamedFile> set(3);
    set[0] = {graphName, graphJsonText(plan.graph, childrenCountFor(plan.form)) + "\n"};
    job.check();
    job.report(1, 4, "serialising the params");
    set[1] = {paramsName, paramsPickleBytes(plan.params)};
    set[2] = {"scale.json", scaleJsonText(plan.params.scales)};
    files.graph_bytes = static_cast<std::int64_t>(set[0].bytes.size());
    files.params_bytes = static_cast<std::int64_t>(set[1].bytes.size());
    files.scales_bytes = static_cast<std::int64_t>(set[2].bytes.size());
    job.check();
    job.report(2, 4, "writing");
    replaceFilesInFolder(dir, set, job);
    job.report(4, 4, "done");
    return files;
}

}  // namespace tinyscope
