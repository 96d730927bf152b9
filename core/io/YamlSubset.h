#pragma once
// The small part of YAML that tiny-training's configs use (configs/*.yaml, backward_config):
// nested block mappings by indentation, block sequences ("- item"), flow sequences ([a, b]),
// plain and quoted scalars, comments. Scalars are typed as PyYAML does (null/~, true/false/
// yes/no/on/off, integers, floats with a dot or exponent, otherwise strings: "23-24-27" stays a
// string). Anchors, tags, multi-line scalars and flow mappings are rejected with the line.
#include "io/JsonFile.h"

#include <string>

namespace tinyscope {

// Parses `text` into JSON values; errors are InputErrors "<source>: line N: <reason>".
Json parseYamlSubset(const std::string& text, const std::string& source);
Json readYamlFile(const std::string& path);

// Writes an object of objects/scalars/arrays of scalars as block YAML (arrays in flow style).
std::string toYamlSubset(const Json& value);

}  // namespace tinyscope
