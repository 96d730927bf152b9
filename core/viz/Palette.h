#pragma once
// The one colour palette (resources/palette.json, compiled in by core/embed_text.cmake): every
// colour the block diagram, the training graph and the app's charts and labels draw with, by role
// ("arch.kernel3", "graph.loss.fill", "status.error", ...). The DOT writers read it here; the UI
// reads it through ui/Palette.h. Changing a colour is one line in the JSON.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tinyscope {

// "#rrggbb" of `role`; InputError naming the role and resources/palette.json for an unknown one.
// The palette is parsed once; the reference stays valid for the whole program.
const std::string& paletteColour(std::string_view role);
std::vector<std::string> paletteRoles();

// Role → "#rrggbb" from a palette file's text (format "tinyscope-palette"); InputError naming
// `source` and the key for a malformed one. paletteColour reads the compiled-in file with it.
std::map<std::string, std::string, std::less<>> parsePalette(const std::string& text, const std::string& source);

}  // namespace tinyscope
