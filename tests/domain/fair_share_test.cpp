// Delivery slots shared fairly (domain/fair_share.hpp): caps per tenant and endpoint, round robin
// between tenants, order within one.

#include "domain/fair_share.hpp"

#include <catch2/catch.hpp>

#include <vector>

using cl::domain::fair_share;

namespace {

/// Starts what can start now; the items started, in order.
std::vector<int> start_all(fair_share<int>& slots, std::vector<fair_share<int>::started>* running = nullptr) {
  std::vector<int> out;
  while (auto s = slots.next()) {
    out.push_back(s->item);
    if (running) running->push_back(std::move(*s));
  }
  return out;
}

}  // namespace

TEST_CASE("a tenant holds at most half the slots, an endpoint its cap", "[fair_share]") {
  fair_share<int> slots{8};
  CHECK(slots.tenant_cap() == 4);
  CHECK(slots.endpoint_cap(1) == 2);   // max_in_flight 1 and one beside it
  CHECK(slots.endpoint_cap(10) == 4);  // within the tenant's half
  fair_share<int> big{64};
  CHECK(big.endpoint_cap(1) == 8);     // an eighth of the slots
  CHECK(fair_share<int>{1}.tenant_cap() == 1);
  CHECK(fair_share<int>{1}.endpoint_cap(5) == 1);

  for (int i = 0; i < 10; ++i) slots.enqueue("t_a", "t_a/e1", 3, i);
  CHECK(start_all(slots) == std::vector<int>{0, 1, 2});  // the endpoint's cap
  CHECK(slots.in_flight("t_a") == 3);
  slots.enqueue("t_a", "t_a/e2", 3, 100);
  CHECK(start_all(slots) == std::vector<int>{100});  // another endpoint, up to the tenant's half
  CHECK(slots.in_flight("t_a") == 4);
  slots.enqueue("t_a", "t_a/e3", 3, 200);
  CHECK(start_all(slots).empty());  // the tenant holds its half
  slots.finished("t_a", "t_a/e1");
  CHECK(start_all(slots) == std::vector<int>{3});  // oldest first whose endpoint has room
}

TEST_CASE("a freed slot goes to the next tenant in turn; one slow tenant never holds them all", "[fair_share]") {
  fair_share<int> slots{4};
  std::vector<fair_share<int>::started> running;
  for (int i = 0; i < 6; ++i) slots.enqueue("t_slow", "t_slow/e" + std::to_string(i), 2, i);
  CHECK(start_all(slots, &running) == std::vector<int>{0, 1});  // half of 4
  for (int i = 0; i < 3; ++i) slots.enqueue("t_b", "t_b/e", 2, 10 + i);
  for (int i = 0; i < 3; ++i) slots.enqueue("t_c", "t_c/e", 2, 20 + i);
  // Two slots left: t_b and t_c in turn after t_slow.
  CHECK(start_all(slots, &running) == std::vector<int>{10, 20});
  CHECK(slots.in_flight() == 4);
  CHECK(start_all(slots).empty());
  // The slow tenant's slot frees: the turn goes on after t_c, so t_slow again, then t_b ...
  slots.finished("t_slow", "t_slow/e0");
  CHECK(start_all(slots) == std::vector<int>{2});
  slots.finished("t_b", "t_b/e");
  CHECK(start_all(slots) == std::vector<int>{11});
  slots.finished("t_c", "t_c/e");
  CHECK(start_all(slots) == std::vector<int>{21});
}

TEST_CASE("a tenant is full when it has as many running or queued as there are slots", "[fair_share]") {
  fair_share<int> slots{4};
  for (int i = 0; i < 3; ++i) slots.enqueue("t_a", "t_a/e", 2, i);
  CHECK_FALSE(slots.full("t_a"));
  slots.enqueue("t_a", "t_a/e", 2, 3);
  CHECK(slots.full("t_a"));
  CHECK_FALSE(slots.full("t_b"));
  start_all(slots);  // two run, two wait: still four
  CHECK(slots.full("t_a"));
  slots.finished("t_a", "t_a/e");
  CHECK(start_all(slots) == std::vector<int>{2});
  slots.finished("t_a", "t_a/e");
  slots.finished("t_a", "t_a/e");
  CHECK(start_all(slots) == std::vector<int>{3});
  CHECK_FALSE(slots.full("t_a"));
}
