#pragma once
/// Writing JSON text without building a DOM: used on hot paths (error bodies, access log).

#include <string>
#include <string_view>

namespace cl::domain {

/// Appends `s` to `out` as a JSON string literal, quotes included.
void append_json_string(std::string& out, std::string_view s);

/// Returns `s` as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

}  // namespace cl::domain
