#pragma once
/// Writing JSON text without building a DOM: used on hot paths (error bodies, access log).

#include <string>
#include <string_view>

namespace cl::domain {

/// Appends `s` to `out` as a JSON string literal, quotes included. Reserves nothing: a caller
/// writing a whole document reserves for it once (an exact reserve per call would copy it each time).
void append_json_string(std::string& out, std::string_view s);

/// Returns `s` as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

/// `v` as a plain JSON decimal number with at most `places` digits after the point, trailing
/// zeros dropped: `80.8`, `3`, `0.0125`, never an exponent (Boost.JSON writes `8.08E1`). A value
/// that is not finite is written `0`.
std::string json_decimal(double v, int places = 4);

}  // namespace cl::domain
