#include "tinyengine/TinyEngineExport.h"

#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/DeadCodeElimination.h"
#include "graph/GraphBuilder.h"
#include "io/AtomicFile.h"
#include "tinyengine/GraphJson.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

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
    if (name.empty() || name.find('/') != std::string::npos) throw InputError("export name '" + name + "': expected a file stem without '/'");
    ExportPlan p;
    p.name = name;
    p.form = form;
    p.network = net;
    p.scheme = scheme.resolve(net, "scheme");
    p.graph = buildTrainingGraph(net, p.scheme, form == ExportForm::Reference ? AutodiffMode::Reference : AutodiffMode::Correct);
    p.identity_slices = insertIdentitySlices(p.graph, net);
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

namespace {

struct Staged {
    std::string staged, target;
    bool renamed = false;
};

void removeQuietly(const std::string& path) { std::remove(path.c_str()); }

}  // namespace

ExportedFiles writeExport(const ExportPlan& plan, const std::string& dir, bool strict, const JobControl& job)
{
    if (strict && plan.errors() > 0) {
        for (const Finding& f : plan.findings)
            if (f.error())
                throw InputError("export refused (--strict): " + std::to_string(plan.errors()) + " error finding(s); first: " + f.text());
    }
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw InputError(dir + ": cannot create the output folder: " + ec.message());

    ExportedFiles files;
    files.graph = dir + "/" + plan.name + "-graph.json";
    files.params = dir + "/" + plan.name + "-params.pkl";
    files.scales = dir + "/scale.json";
    job.report(0, 4, "serialising the graph");
    const std::string graph = graphJsonText(plan.graph, childrenCountFor(plan.form)) + "\n";
    job.check();
    job.report(1, 4, "serialising the params");
    const std::string params = paramsPickleBytes(plan.params);
    const std::string scales = scaleJsonText(plan.params.scales);
    files.graph_bytes = static_cast<std::int64_t>(graph.size());
    files.params_bytes = static_cast<std::int64_t>(params.size());
    files.scales_bytes = static_cast<std::int64_t>(scales.size());
    job.check();

    std::vector<Staged> staged;
    auto cleanup = [&] {
        for (const Staged& s : staged) {
            removeQuietly(s.staged);
            if (s.renamed) removeQuietly(s.target);
        }
    };
    try {
        job.report(2, 4, "writing");
        for (const auto& [target, bytes] : {std::pair<const std::string&, const std::string&>{files.graph, graph},
                                            {files.params, params}, {files.scales, scales}}) {
            const std::string name = target.substr(target.find_last_of('/') + 1);
            Staged s{dir + "/." + name + ".partial", target};
            writeFileAtomic(s.staged, bytes);
            staged.push_back(s);
        }
        job.check();
        job.report(3, 4, "renaming");
        for (Staged& s : staged) {
            if (std::rename(s.staged.c_str(), s.target.c_str()) != 0)
                throw InputError(s.target + ": cannot write: " + std::strerror(errno) + " (export rolled back)");
            s.renamed = true;
        }
    } catch (...) {
        cleanup();
        throw;
    }
    job.report(4, 4, "done");
    return files;
}

}  // namespace tinyscope
