// Change-feed cursors: any string opened as a cursor, with and without a log epoch; and the round
// trip: a cursor sealed for any position opens to it, for its tenant, binding and epoch only.
#include "domain/change_cursor.hpp"
#include "tests/fuzz/fuzz.hpp"

#include <cstdlib>
#include <cstring>
#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cl::domain::feed_cursor_codec plain{std::string(32, 's')}, restored{std::string(32, 's'), "e1"};
  auto in = cl::fuzz::text(data, size);
  std::string within;
  cl::domain::cursor_problem why{};
  (void)plain.open(in, "t_a", cl::domain::feed_binding_any(), &why, &within);
  (void)restored.open(in, "t_a", cl::domain::feed_binding({"resource.created"}), &why, &within);
  if (size > 2000) return 0;
  auto f = cl::fuzz::fields(in, 4);
  std::uint64_t after = 0;
  std::memcpy(&after, f[3].data(), std::min(f[3].size(), sizeof after));
  cl::domain::feed_position p{f[0], f[1], after, f[2]};
  auto cursor = plain.seal(p);
  std::string back;
  auto opened = plain.open(cursor, f[0], f[1], &why, &back);
  if (!opened || *opened != after || back != f[2]) std::abort();
  if (plain.open(cursor, f[0] + "x", f[1], &why)) std::abort();  // another tenant
  if (plain.open(cursor, f[0], f[1] + "x", &why)) std::abort();  // another binding
  if (restored.open(cursor, f[0], f[1], &why) || why != cl::domain::cursor_problem::restored) std::abort();
  return 0;
}
