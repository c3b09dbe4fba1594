#include "domain/position.hpp"

#include <charconv>
#include <limits>

namespace cl::domain {

std::string format_position(std::uint64_t seq) { return "p" + std::to_string(seq); }

std::optional<std::uint64_t> parse_position(std::string_view text) {
  if (text.size() < 2 || text.size() > 20 || text.front() != 'p') return std::nullopt;
  auto digits = text.substr(1);
  if (digits.size() > 1 && digits.front() == '0') return std::nullopt;  // one spelling per position
  std::uint64_t seq = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
  if (error != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  if (seq > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return seq;
}

}  // namespace cl::domain
