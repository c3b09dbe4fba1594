#pragma once
/// The change-log position a write answers with and a read may send back (`Content-Lake-Position`,
/// read your writes across nodes): opaque to clients, `p` and the log sequence in decimal here.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cl::domain {

/// The header value of change-log position `seq`.
std::string format_position(std::uint64_t seq);

/// The position a header value names; nullopt when it is not one `format_position` makes.
std::optional<std::uint64_t> parse_position(std::string_view text);

}  // namespace cl::domain
