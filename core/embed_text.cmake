# Writes a C++ source defining kEmbeddedSpaces[] from the JSON files given in FILES (a ;-list).
# Invoked in script mode: cmake -DOUT=... -DFILES=... -P embed_text.cmake
set(body "// Generated from models/spaces/*.json by core/embed_text.cmake. Do not edit.\nnamespace tinyscope {\nstruct EmbeddedText { const char* name; const char* text; };\nextern const EmbeddedText kEmbeddedSpaces[];\nextern const int kEmbeddedSpaceCount;\nconst EmbeddedText kEmbeddedSpaces[] = {\n")
set(count 0)
foreach(f IN LISTS FILES)
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" text)
  string(APPEND body "  {\"${name}\", R\"tsjson(${text})tsjson\"},\n")
  math(EXPR count "${count}+1")
endforeach()
string(APPEND body "};\nconst int kEmbeddedSpaceCount = ${count};\n}  // namespace tinyscope\n")
file(WRITE "${OUT}.new" "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.new" "${OUT}")
file(REMOVE "${OUT}.new")
