// Change feed cursors and event ids: sealed, bound to tenant and filter, opaque.

#include "domain/base64url.hpp"
#include "domain/change_cursor.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace cl::domain;

namespace {

const std::string secret(32, 'k');

}  // namespace

TEST_CASE("a feed cursor opens to its position for its tenant and filter only", "[changes]") {
  feed_cursor_codec codec{secret};
  auto cursor = codec.seal({"t_a", "1;resource.created", 123456789});
  CHECK(codec.open(cursor, "t_a", "1;resource.created") == std::optional<std::uint64_t>{123456789});
  cursor_problem why{};
  CHECK_FALSE(codec.open(cursor, "t_b", "1;resource.created", &why));
  CHECK(why == cursor_problem::mismatch);
  CHECK_FALSE(codec.open(cursor, "t_a", "1;", &why));
  CHECK(why == cursor_problem::mismatch);
  // Sealed under another secret, cut short, or one byte changed: not a cursor.
  feed_cursor_codec other{std::string(32, 'x')};
  CHECK_FALSE(other.open(cursor, "t_a", "1;resource.created", &why));
  CHECK(why == cursor_problem::malformed);
  CHECK_FALSE(codec.open(cursor.substr(0, cursor.size() - 3), "t_a", "1;resource.created"));
  auto raw = *base64url_decode(cursor);
  raw[raw.size() / 2] = static_cast<char>(raw[raw.size() / 2] ^ 1);
  CHECK_FALSE(codec.open(base64url_encode(raw), "t_a", "1;resource.created", &why));
  CHECK(why == cursor_problem::malformed);
  CHECK_FALSE(codec.open("", "t_a", "1;"));
  CHECK_FALSE(codec.open("not a cursor", "t_a", "1;"));
}

TEST_CASE("as a position, a cursor of any filter opens for its tenant only", "[changes]") {
  feed_cursor_codec codec{secret};
  auto filtered = codec.seal({"t_a", "1;resource.created", 42});
  CHECK(codec.open_position(filtered, "t_a") == std::optional<std::uint64_t>{42});
  CHECK(codec.open_position(codec.seal({"t_a", feed_binding_any(), 7}), "t_a") == std::optional<std::uint64_t>{7});
  cursor_problem why{};
  CHECK_FALSE(codec.open_position(filtered, "t_b", &why));
  CHECK(why == cursor_problem::mismatch);
  CHECK_FALSE(feed_cursor_codec{std::string(32, 'x')}.open_position(filtered, "t_a", &why));
  CHECK(why == cursor_problem::malformed);
}

TEST_CASE("a feed cursor does not show its position: two cursors of one position differ", "[changes]") {
  feed_cursor_codec codec{secret};
  auto a = codec.seal({"t_a", "1;", 7}), b = codec.seal({"t_a", "1;", 7});
  CHECK(a != b);
  CHECK(codec.open(a, "t_a", "1;") == codec.open(b, "t_a", "1;"));
  // Neither the sequence nor the tenant stands in the bytes.
  auto raw = *base64url_decode(a);
  CHECK(raw.find("t_a") == std::string::npos);
}

TEST_CASE("event ids are stable per (tenant, sequence), distinct per tenant and secret", "[changes]") {
  feed_cursor_codec codec{secret};
  CHECK(codec.event_id("t_a", 41) == codec.event_id("t_a", 41));
  CHECK(codec.event_id("t_a", 41) != codec.event_id("t_b", 41));
  std::set<std::string> ids;
  for (std::uint64_t seq = 1; seq <= 1000; ++seq) ids.insert(codec.event_id("t_a", seq));
  CHECK(ids.size() == 1000);
  auto id = codec.event_id("t_a", 42);
  CHECK(id.rfind("evt_", 0) == 0);
  CHECK(id.size() == 4 + 24);
  CHECK(feed_cursor_codec{std::string(32, 'x')}.event_id("t_a", 42) != id);
}

TEST_CASE("a cursor can stop inside an entry; events of one entry have ids of their own", "[changes]") {
  feed_cursor_codec codec{secret};
  std::string within;
  auto cursor = codec.seal({"t_a", "1;", 41, "wk_1\nres_9"});
  CHECK(codec.open(cursor, "t_a", "1;", nullptr, &within) == std::optional<std::uint64_t>{41});
  CHECK(within == "wk_1\nres_9");
  CHECK(codec.open(codec.seal({"t_a", "1;", 41}), "t_a", "1;", nullptr, &within) == std::optional<std::uint64_t>{41});
  CHECK(within.empty());
  CHECK(codec.event_id("t_a", 42, "res_1") != codec.event_id("t_a", 42, "res_2"));
  CHECK(codec.event_id("t_a", 42, "res_1") != codec.event_id("t_a", 42));
  CHECK(codec.event_id("t_a", 42, "res_1") == codec.event_id("t_a", 42, "res_1"));
}

TEST_CASE("after a restore (a new log epoch) older cursors do not open and event ids change", "[changes]") {
  feed_cursor_codec never_restored{secret}, restored{secret, "e1"}, restored_again{secret, "e2"};
  cursor_problem why{};
  // A data dir never restored keeps its cursors and ids (no epoch: the layout of before).
  auto old = never_restored.seal({"t_a", "1;", 7});
  CHECK(never_restored.open(old, "t_a", "1;") == std::optional<std::uint64_t>{7});
  CHECK_FALSE(restored.open(old, "t_a", "1;", &why));
  CHECK(why == cursor_problem::restored);
  auto current = restored.seal({"t_a", "1;", 7});
  CHECK(restored.open(current, "t_a", "1;") == std::optional<std::uint64_t>{7});
  CHECK_FALSE(restored_again.open(current, "t_a", "1;", &why));
  CHECK(why == cursor_problem::restored);
  CHECK_FALSE(never_restored.open(current, "t_a", "1;", &why));
  CHECK(why == cursor_problem::restored);
  // A sequence given out again after the restore never repeats an event id of before.
  CHECK(restored.event_id("t_a", 7) != never_restored.event_id("t_a", 7));
  CHECK(restored.event_id("t_a", 7, "res_1") != restored_again.event_id("t_a", 7, "res_1"));
}
