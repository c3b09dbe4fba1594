// Change-feed cursors: any string opened as a cursor, with and without a log epoch.
#include "domain/change_cursor.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cl::domain::feed_cursor_codec plain{std::string(32, 's')}, restored{std::string(32, 's'), "e1"};
  auto in = cl::fuzz::text(data, size);
  std::string within;
  cl::domain::cursor_problem why{};
  (void)plain.open(in, "t_a", cl::domain::feed_binding_any(), &why, &within);
  (void)restored.open(in, "t_a", cl::domain::feed_binding({"resource.created"}), &why, &within);
  return 0;
}
