#pragma once
/// The query string of a request URL: parameter names as clients and caches read them.

#include <optional>
#include <string>
#include <string_view>

namespace cl::domain {

/// The value of hexadecimal digit `c`, or -1.
int hex_digit(char c);

/// `%XX` decoded and `+` read as a space (application/x-www-form-urlencoded).
std::string decode_query_component(std::string_view raw);

/// The first parameter name (decoded) that `query` carries more than once; nullopt when every
/// name appears once. Every parameter of the API takes one value, and "first one wins" would let
/// an edge cache and the service read different requests.
std::optional<std::string> repeated_parameter(std::string_view query);

/// A parameter whose decoded name or value is not text the API takes (domain/text.hpp): its name
/// as it may be shown (at most 64 bytes, cut before anything unusable) and why; nullopt if none.
struct unusable_parameter {
  std::string name;
  std::string why;
};
std::optional<unusable_parameter> first_unusable_parameter(std::string_view query);

}  // namespace cl::domain
