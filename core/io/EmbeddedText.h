#pragma once
// Text files compiled into the binary by core/embed_text.cmake (models/spaces/*.json, resources/palette.json,
// models/boards/*.json): a table of (name, text) per folder, looked up by name.
#include <string>
#include <vector>

namespace tinyscope {

struct EmbeddedText {
    const char* name;   // the file name without extension
    const char* text;
};

inline std::vector<std::string> embeddedNames(const EmbeddedText* table, int count)
{
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) names.emplace_back(table[i].name);
    return names;
}

// The text of `name`, or null.
inline const char* findEmbedded(const EmbeddedText* table, int count, const std::string& name)
{
    for (int i = 0; i < count; ++i)
        if (name == table[i].name) return table[i].text;
    return nullptr;
}

}  // namespace tinyscope
