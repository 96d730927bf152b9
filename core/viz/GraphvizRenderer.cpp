#include "viz/GraphvizRenderer.h"

#include "Error.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

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
