# Turns a file into a C++ source defining `std::string_view <FUNCTION>()` over its bytes.
# Usage: cmake -DINPUT=... -DOUTPUT=... -DNAMESPACE=... -DFUNCTION=... -P embed.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){32})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by scripts/cmake/embed.cmake; do not edit.
#include <string_view>
namespace ${NAMESPACE} {
namespace {
const char data[] = {
${bytes} '\\0'};
}
std::string_view ${FUNCTION}() { return std::string_view{data, ${size}}; }
}
")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
