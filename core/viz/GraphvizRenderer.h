#pragma once
// Lays out DOT text with Graphviz (dot engine) and renders it to SVG in memory.
// Graphviz is not thread-safe: every call is serialised on one process-wide mutex.
#include <string>

namespace tinyscope {

// Throws InputError with Graphviz's message if the DOT text cannot be parsed or laid out.
std::string renderDotToSvg(const std::string& dot, const std::string& engine = "dot");
// Renders to any Graphviz output format ("svg", "png", "plain", "dot" with positions, ...).
std::string renderDot(const std::string& dot, const std::string& format, const std::string& engine = "dot");

// The format a drawing's file name asks for: "svg", "png" or "dot" (.dot and .gv); throws
// InputError naming the path for any other suffix.
std::string drawingFormatOf(const std::string& path);
// A drawing in one of those formats: "svg", "png" (144 dpi, at most 6,000 px a side) or "dot" (the
// text itself, not laid out).
std::string renderDotAs(const std::string& dot, const std::string& format);
// renderDotAs in the format the file name asks for (drawingFormatOf).
std::string renderDotForFile(const std::string& dot, const std::string& path);
// renderDotForFile written atomically to `path`.
void writeDotFile(const std::string& dot, const std::string& path);

// Quotes a string for use as a DOT identifier or attribute value.
std::string dotQuote(const std::string& s);

}  // namespace tinyscope
