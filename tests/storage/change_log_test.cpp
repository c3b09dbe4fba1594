// The change log as a feed: typed entries in commit order without gaps, visible only after the
// commit, read from any position, announced to subscribers, kept across restarts, and pruned only
// past retention and past every registered consumer.

#include "storage/change_log.hpp"
#include "storage/postgresql/connection.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <set>
#include <thread>

using namespace cl::storage;
using cl::testing::temp_dir;

namespace {

/// A mutation that writes Resource `id` and logs `op` on it at `at_ms`; refuses when `keep` is false.
mutation change(std::string id, change_op op = change_op::created, std::int64_t at_ms = 1000, bool keep = true) {
  return [=](write_txn& tx) {
    tx.resources().put("t1", id, resource_header{}, "{}");
    tx.log_change(change_entry{0, "t1", change_kind::resource, id, op, at_ms, {}, {}, {}, 0});
    return keep;
  };
}

std::vector<std::uint64_t> sequences(const std::vector<change_entry>& entries) {
  std::vector<std::uint64_t> out;
  for (const auto& e : entries) out.push_back(e.seq);
  return out;
}

}  // namespace

TEST_CASE("the entries one mutation logs share its transaction: the sequence of its first", "[change_log]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto two = [](write_txn& tx) {
    tx.log_change(change_entry{0, "t1", change_kind::resource, "res_a", change_op::created, 1, {}, {}, {}, 0});
    tx.log_change(change_entry{0, "t1", change_kind::work, "wk_a", change_op::created, 1, {}, {}, {}, 0});
    return true;
  };
  store->apply({two, two});
  auto entries = store->read_from(0, 10);
  REQUIRE(entries.size() == 4);
  CHECK(entries[0].transaction == 1);
  CHECK(entries[1].transaction == 1);
  CHECK(entries[2].transaction == 3);
  CHECK(entries[3].transaction == 3);
}

TEST_CASE("entries are typed, in commit order, numbered without gaps", "[change_log]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  store->apply({change("res_a"), change("res_refused", change_op::created, 1000, false),
                change("res_b", change_op::patched, 2000)});
  store->apply({change("res_a", change_op::promoted, 3000)});
  auto all = store->read_from(0, 100);
  REQUIRE(sequences(all) == std::vector<std::uint64_t>{1, 2, 3});
  CHECK(all[0] == change_entry{1, "t1", change_kind::resource, "res_a", change_op::created, 1000, "", "", "", 1});
  CHECK(all[1] == change_entry{2, "t1", change_kind::resource, "res_b", change_op::patched, 2000, "", "", "", 2});
  CHECK(all[2].op == change_op::promoted);
  CHECK(store->last_change() == 3);
  // From any position, at most `limit`.
  CHECK(sequences(store->read_from(1, 1)) == std::vector<std::uint64_t>{2});
  CHECK(store->read_from(3, 10).empty());
}

TEST_CASE("an entry is visible, and announced, only once its transaction has committed", "[change_log][kv]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  std::vector<std::uint64_t> announced;
  auto handle = store->subscribe([&](std::uint64_t last) { announced.push_back(last); });
  std::vector<change_entry> seen_inside;
  std::uint64_t last_inside = 99;
  store->apply({change("res_a"), [&](write_txn&) {
                  seen_inside = store->read_from(0, 10);  // another reader, during the write
                  last_inside = store->last_change();
                  return true;
                }});
  CHECK(seen_inside.empty());
  CHECK(last_inside == 0);
  CHECK(announced == std::vector<std::uint64_t>{1});
  store->apply({[](write_txn& tx) {  // no entry: nothing to announce
    cl::storage::kv::writer_of(tx).put(cl::testing::raw("works"), cl::storage::kv::tenant_key("t1", "wk_a"), "{}");
    return true;
  }});
  CHECK(announced.size() == 1);
  store->unsubscribe(handle);
  store->apply({change("res_b")});
  CHECK(announced.size() == 1);
  CHECK(store->read_from(0, 10).size() == 2);
}

TEST_CASE("the log and the consumers' positions survive a restart", "[change_log][lmdb]") {
  temp_dir dir;
  std::vector<change_entry> before;
  {
    auto store = cl::storage::open_lmdb_store(dir.path, 64);
    store->apply({change("res_a"), change("res_b"), acknowledge_changes("search", 1)});
    before = store->read_from(0, 10);
  }
  auto store = cl::storage::open_lmdb_store(dir.path, 64);
  CHECK(store->read_from(0, 10) == before);
  auto consumers = store->consumers();
  REQUIRE(consumers.size() == 1);
  CHECK(consumers[0].name == "search");
  CHECK(consumers[0].applied == 1);
  CHECK(consumers[0].acknowledged_ms > 0);
  store->apply({change("res_c")});
  CHECK(store->read_from(2, 10).front().seq == 3);
}

TEST_CASE("retention keeps what a slow consumer has not applied, and the newest entry always", "[change_log]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  std::vector<mutation> batch;
  for (int i = 1; i <= 6; ++i) batch.push_back(change("res_" + std::to_string(i), change_op::created, i * 1000));
  batch.push_back(acknowledge_changes("fast", 6));
  batch.push_back(acknowledge_changes("slow", 2));
  store->apply(batch);
  // Everything is past retention (cutoff after every entry), but "slow" has applied only 1 and 2.
  store->apply({prune_changes(1000000, 1000)});
  CHECK(sequences(store->read_from(0, 10)) == std::vector<std::uint64_t>{3, 4, 5, 6});
  // Within retention: entries 5 and 6 are younger than the cutoff and stay whatever the consumers.
  store->apply({acknowledge_changes("slow", 6), prune_changes(5000, 1000)});
  CHECK(sequences(store->read_from(0, 10)) == std::vector<std::uint64_t>{5, 6});
  // A consumer that is forgotten no longer holds anything back; the newest entry stays so the
  // sequence continues after a restart.
  store->apply({acknowledge_changes("slow", 0), prune_changes(1000000, 1000)});
  CHECK(sequences(store->read_from(0, 10)) == std::vector<std::uint64_t>{5, 6});
  store->apply({forget_consumer("slow"), prune_changes(1000000, 1000)});
  CHECK(sequences(store->read_from(0, 10)) == std::vector<std::uint64_t>{6});
  store->apply({change("res_7")});
  CHECK(store->read_from(0, 10).back().seq == 7);
}

TEST_CASE("last_change is read safely while the writer commits", "[change_log]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  std::atomic<bool> done{false};
  std::uint64_t highest = 0;
  bool went_back = false;
  std::thread watcher{[&] {
    while (!done) {
      auto now = store->last_change();
      went_back = went_back || now < highest;
      highest = std::max(highest, now);
    }
  }};
  for (int i = 0; i < 200; ++i) store->apply({change("res_" + std::to_string(i))});
  done = true;
  watcher.join();
  CHECK_FALSE(went_back);
  CHECK(store->last_change() == 200);
}

TEST_CASE("entries round-trip their encoding; format-2 and format-1 JSON entries are still read", "[change_log]") {
  change_entry e{42, "t_x", change_kind::resource, "res_1", change_op::patched, 1763800000123, "ver_2", "sha256:ab", "u_x", 40};
  CHECK(decode_change(42, encode_change(e)) == e);
  // Format 2: version byte, kind, op, time, tenant, id (no version, hash or transaction).
  std::string v2{'\x02', '\x03', '\x08'};
  for (int i = 0; i < 8; ++i) v2.push_back('\0');
  v2 += std::string{'\0', '\x03'} + "t_x" + std::string{'\0', '\x05'} + "ctr_1";
  auto old = decode_change(9, v2);
  REQUIRE(old);
  CHECK(old->kind == change_kind::contract);
  CHECK(old->op == change_op::contract_changed);
  CHECK(old->id == "ctr_1");
  CHECK(old->version.empty());
  CHECK(old->transaction == 0);
  auto legacy = decode_change(7, R"({"op":"version","tenant":"t","kind":"resource","id":"res_1"})");
  REQUIRE(legacy);
  CHECK(legacy->op == change_op::snapshotted);
  CHECK(legacy->id == "res_1");
  CHECK(decode_change(8, R"({"op":"version","tenant":"t","kind":"contract","id":"ctr_1"})")->op
        == change_op::contract_changed);
  CHECK_FALSE(decode_change(9, "garbage"));
  CHECK(change_op_name(change_op::granted) == "granted");
  CHECK(change_kind_name(change_kind::contract) == "contract");
}

TEST_CASE("several nodes writing at once: a reader tailing the log sees every committed entry once, in order, "
          "none skipped", "[change_log][postgresql]") {
  // Three record stores on one database, as three nodes: each its own connections and writer. The
  // sequences they commit interleave; a reader tails the whole time from its last position, as the
  // feed and the indexer do. A bigserial would let it pass a number whose transaction commits later.
  auto url = cl::testing::fresh_postgresql_url();
  std::vector<std::shared_ptr<record_store>> nodes;
  for (int i = 0; i < 3; ++i) nodes.push_back(open_postgresql_store({url, {}, 2}));
  constexpr int batches = 60, per_batch = 4;
  std::atomic<int> writing{3};
  std::vector<std::thread> writers;
  for (int n = 0; n < 3; ++n)
    writers.emplace_back([&, n] {
      for (int b = 0; b < batches; ++b) {
        std::vector<mutation> batch;
        for (int m = 0; m < per_batch; ++m)
          batch.push_back(change("res_" + std::to_string(n) + "_" + std::to_string(b) + "_" + std::to_string(m)));
        nodes[static_cast<std::size_t>(n)]->apply(batch);
      }
      --writing;
    });
  std::vector<change_entry> seen;
  std::uint64_t position = 0;
  auto tail = [&] {
    for (auto& e : nodes[0]->read_from(position, 50)) {
      position = e.seq;
      seen.push_back(std::move(e));
    }
  };
  while (writing > 0) tail();
  for (auto& w : writers) w.join();
  for (auto before = seen.size();; before = seen.size()) {
    tail();
    if (seen.size() == before) break;
  }
  constexpr std::size_t total = 3 * batches * per_batch;
  REQUIRE(seen.size() == total);
  std::set<std::string> ids;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CHECK(seen[i].seq == i + 1);  // dense and in order: nothing skipped, nothing twice
    ids.insert(seen[i].id);
  }
  CHECK(ids.size() == total);
  // Every node reads the same log, in the same order.
  auto again = nodes[2]->read_from(0, total + 10);
  REQUIRE(again.size() == total);
  for (std::size_t i = 0; i < total; ++i) CHECK(again[i] == seen[i]);
  CHECK(nodes[1]->last_change() == total);
}

TEST_CASE("a session that stops inside a transaction holding the change log's head holds other writers for at most 5 s",
          "[change_log][postgresql]") {
  // A node frozen, or whose network stalled with its TCP connection up (the cluster test's stall),
  // between the log append and COMMIT: every node's writes wait for the head row. The server ends
  // such a session after the service's idle_in_transaction_session_timeout; before, after 60 s,
  // the other writers' lock_timeout (10 s) failed their writes meanwhile.
  auto url = cl::testing::fresh_postgresql_url();
  auto store = open_postgresql_store({url, {}, 2});
  pg::connection frozen{url};  // a session as the service opens them
  frozen.exec("BEGIN");
  frozen.run({"SELECT seq FROM change_head FOR UPDATE"});  // holds the head, then says nothing more
  auto started = std::chrono::steady_clock::now();
  auto kept = store->apply({change("res_1")});
  auto waited = std::chrono::steady_clock::now() - started;
  CHECK(kept == std::vector<bool>{true});
  CHECK(waited >= std::chrono::seconds{4});  // it did wait for the frozen session
  CHECK(waited < std::chrono::seconds{9});   // within the 5 s, not the other's lock_timeout
  CHECK(sequences(store->read_from(0, 10)) == std::vector<std::uint64_t>{1});
}
