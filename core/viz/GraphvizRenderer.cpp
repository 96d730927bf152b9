#include "viz/GraphvizRenderer.h"

#include "Error.h"
#include "io/AtomicFile.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <cctype>
#include <mutex>

namespace tinyscope {

namespace {
std::mutex g_graphvizMutex;

GVC_t* context()
{
    // One context for the process; created lazily under the mutex.
    static GVC_t* gvc = gvContext();
    return gvc;
}

std::string g_lastError;
int collectError(char* msg)
{
    g_lastError += msg;
    return 0;
}
}  // namespace

std::string renderDot(const std::string& dot, const std::string& format, const std::string& engine)
{
    std::lock_guard<std::mutex> lock(g_graphvizMutex);
    GVC_t* gvc = context();
    g_lastError.clear();
    agseterrf(collectError);
    Agraph_t* g = agmemread(dot.c_str());
    if (!g) {
        std::string why = g_lastError.empty() ? "syntax error" : g_lastError;
        while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
        throw InputError("Graphviz could not read the graph: " + why);
    }
    if (gvLayout(gvc, g, engine.c_str()) != 0) {
        agclose(g);
        throw InputError("Graphviz layout '" + engine + "' failed: " + g_lastError);
    }
    char* data = nullptr;
    unsigned int length = 0;
    int rc = gvRenderData(gvc, g, format.c_str(), &data, &length);
    std::string out;
    if (rc == 0 && data) out.assign(data, length);
    if (data) gvFreeRenderData(data);
    gvFreeLayout(gvc, g);
    agclose(g);
    if (rc != 0) throw InputError("Graphviz could not render format '" + format + "'");
    return out;
}

std::string renderDotToSvg(const std::string& dot, const std::string& engine)
{
    return renderDot(dot, "svg", engine);
}

std::string drawingFormatOf(const std::string& path)
{
    const std::size_t slash = path.find_last_of('/');
    const std::size_t dot = path.find_last_of('.');
    std::string suffix = dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : path.substr(dot + 1);
    for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (suffix == "svg" || suffix == "png" || suffix == "dot") return suffix;
    if (suffix == "gv") return "dot";
    throw InputError(path + ": unknown drawing format '" + (suffix.empty() ? std::string("(none)") : "." + suffix) +
                     "' (use .svg, .png or .dot)");
}

std::string renderDotAs(const std::string& dot, const std::string& format)
{
    if (format == "dot") return dot;
    if (format != "png") return renderDot(dot, format);
    // PNG: 144 dpi for print, and large graphs capped at 6,000 px a side (41.67 in at 144 dpi): a
    // whole training graph is metres of drawing.
    std::string capped = dot;
    const std::size_t open = capped.find('{');
    if (open != std::string::npos) capped.insert(open + 1, "\n  graph [size=\"41.67,41.67\" dpi=144]\n");
    return renderDot(capped, "png");
}

std::string renderDotForFile(const std::string& dot, const std::string& path)
{
    return renderDotAs(dot, drawingFormatOf(path));
}

void writeDotFile(const std::string& dot, const std::string& path)
{
    writeFileAtomic(path, renderDotForFile(dot, path));
}

std::string dotQuote(const std::string& s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') { out += "\\n"; continue; }
        out += c;
    }
    return out + "\"";
}

}  // namespace tinyscope
