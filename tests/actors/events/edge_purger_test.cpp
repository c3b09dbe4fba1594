// The edge purger (actors/events/edge_purger.hpp): which keys each change purges, how purges are split,
// and the actor against recording edges: everything at start, each change's keys at every edge,
// a failing edge retried without holding the others back and given what it missed, every purge
// repeated, an outside change (policy, group directory) purging everything.

#include "actors/events/edge_purger.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>

using namespace cl;
using storage::change_entry;
using storage::change_kind;
using storage::change_op;

namespace {

change_entry entry(change_kind kind, change_op op, std::string id, std::string version = {}) {
  change_entry e;
  e.tenant = "t1";
  e.kind = kind;
  e.op = op;
  e.id = std::move(id);
  e.version = std::move(version);
  return e;
}

actors::edge_lookups lookups() {
  actors::edge_lookups l;
  l.work_of = [](const std::string&, const std::string& id) { return id == "res_staged" ? std::string{} : "wk_of_" + id; };
  l.works_of_contract = [](const change_entry& e) {
    return std::vector<std::string>{"wk_a_" + e.id + "_" + e.version, "wk_b"};
  };
  return l;
}

/// Edges that record every purge they get; an edge may be told to fail.
struct recorder {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<domain::purge_request> got;
  std::set<std::string> failing;  ///< hosts answering 503

  domain::purge_response send(const domain::purge_request& r) {
    std::lock_guard<std::mutex> guard{mutex};
    got.push_back(r);
    changed.notify_all();
    if (failing.count(r.to.host)) return {503, "http_status"};
    return {200, ""};
  }
  /// Waits until `pred(got)` holds (fails the test after 10 s).
  template <class Pred>
  void wait(Pred pred, const char* what) {
    std::unique_lock<std::mutex> lock{mutex};
    bool ok = changed.wait_for(lock, std::chrono::seconds{10}, [&] { return pred(got); });
    INFO(what);
    REQUIRE(ok);
  }
  /// Purges `host` got that `pred` holds for; the caller holds `mutex` (inside `wait`'s predicate).
  std::size_t held_count(const std::string& host, const std::function<bool(const domain::purge_request&)>& pred) const {
    return std::count_if(got.begin(), got.end(), [&](const auto& r) { return r.to.host == host && pred(r); });
  }
  std::size_t count(const std::string& host, const std::function<bool(const domain::purge_request&)>& pred) {
    std::lock_guard<std::mutex> guard{mutex};
    return held_count(host, pred);
  }
};

storage::mutation logged(change_entry e) {
  return [e](storage::write_txn& tx) {
    tx.log_change(e);
    return true;
  };
}

}  // namespace

TEST_CASE("each change purges the keys of what it made stale", "[edge]") {
  using actors::purge_keys_for;
  auto edits = purge_keys_for({entry(change_kind::resource, change_op::patched, "res_1"),
                               entry(change_kind::resource, change_op::replaced, "res_2"),
                               entry(change_kind::resource, change_op::snapshotted, "res_3"),
                               entry(change_kind::work, change_op::replaced, "wk_1")},
                              lookups(), true);
  CHECK(edits.hard.empty());
  CHECK(edits.soft == std::vector<std::string>{"res_1", "res_2", "res_3", "wk_1"});
  // Without soft edits they are hard.
  auto hard_edits = purge_keys_for({entry(change_kind::resource, change_op::patched, "res_1")}, lookups(), false);
  CHECK(hard_edits.hard == std::vector<std::string>{"res_1"});
  CHECK(hard_edits.soft.empty());
  // Grants, revocations and promotions are hard; a promotion purges the Work it joined too.
  auto rights = purge_keys_for({entry(change_kind::resource, change_op::granted, "res_g"),
                                entry(change_kind::resource, change_op::revoked, "res_r"),
                                entry(change_kind::resource, change_op::promoted, "res_p"),
                                entry(change_kind::resource, change_op::patched, "res_g")},
                               lookups(), true);
  CHECK(rights.hard == std::vector<std::string>{"res_g", "res_p", "res_r", "wk_of_res_p"});
  CHECK(rights.soft.empty());  // a key purged hard is not purged soft as well
  // A contract version: the contract and the Works of that version and the one before.
  auto contract = purge_keys_for({entry(change_kind::contract, change_op::contract_changed, "ctr_1", "2")}, lookups(), true);
  CHECK(contract.hard == std::vector<std::string>{"ctr_1", "wk_a_ctr_1_2", "wk_b"});
  // Creations and blobs purge nothing.
  CHECK(purge_keys_for({entry(change_kind::resource, change_op::created, "res_new"),
                        entry(change_kind::work, change_op::created, "wk_new"),
                        entry(change_kind::blob, change_op::created, "blob_1")},
                       lookups(), true)
          .empty());
}

TEST_CASE("keys are split into header values of a bounded size", "[edge]") {
  using actors::key_chunks;
  CHECK(key_chunks({}, 10).empty());
  CHECK(key_chunks({"aaa", "bbb", "ccc"}, 7) == std::vector<std::string>{"aaa bbb", "ccc"});
  CHECK(key_chunks({"aaaaaaaaaaaa", "b"}, 5) == std::vector<std::string>{"aaaaaaaaaaaa", "b"});
  std::vector<std::string> many(1000, "res_06h17qltfbav2eiggjh67ocs1e3vu");
  auto chunks = key_chunks(many, 4000);
  std::size_t keys = 0;
  for (const auto& c : chunks) {
    CHECK(c.size() <= 4000);
    keys += std::count(c.begin(), c.end(), ' ') + 1;
  }
  CHECK(keys == 1000);
}

TEST_CASE("purge URLs: http only, a host and a port", "[edge]") {
  auto ok = domain::parse_purge_url("http://127.0.0.1:6081/");
  REQUIRE(std::holds_alternative<domain::purge_target>(ok));
  CHECK(std::get<domain::purge_target>(ok).port == "6081");
  auto v6 = domain::parse_purge_url("http://[::1]:6081");
  REQUIRE(std::holds_alternative<domain::purge_target>(v6));
  CHECK(std::get<domain::purge_target>(v6).host == "::1");
  CHECK(std::get<domain::purge_target>(v6).target == "/");
  for (const char* bad : {"https://edge/", "edge:6081", "http://user:pw@edge/", "http://:80/", "http://edge:0/",
                          "http://edge:99999/", "http://edge:x/", "http://[::1/"})
    CHECK(std::holds_alternative<std::string>(domain::parse_purge_url(bad)));
}

TEST_CASE("the purger purges every edge, retries a failing one without holding the others", "[edge]") {
  testing::temp_dir dir;
  auto store = testing::open_store(dir.path);
  auto directory = std::make_shared<actors::actor_directory>(2);
  auto edges = std::make_shared<recorder>();
  auto cfg = std::make_shared<actors::edge_purger_config>();
  cfg->store = store;
  cfg->directory = directory;
  cfg->edges = {domain::purge_target{"edge-a", "80", "/"}, domain::purge_target{"edge-b", "80", "/"}};
  cfg->edge_names = {"edge-a:80", "edge-b:80"};
  cfg->secret = "s3cret";
  cfg->interval = std::chrono::milliseconds{5};
  cfg->repeat_after = std::chrono::milliseconds{50};
  cfg->backoff = {std::chrono::milliseconds{20}};
  cfg->send = [edges](const domain::purge_request& r) { return edges->send(r); };
  caf::actor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  auto purger = sys.spawn<caf::detached>(actors::edge_purger, std::shared_ptr<const actors::edge_purger_config>{cfg});
  auto everything = [](const domain::purge_request& r) { return r.everything; };
  auto hard = [](const std::string& key) {
    return [key](const domain::purge_request& r) { return r.hard_keys.find(key) != std::string::npos; };
  };
  auto soft = [](const std::string& key) {
    return [key](const domain::purge_request& r) { return r.soft_keys.find(key) != std::string::npos; };
  };

  // At start each edge is purged of everything (changes may have been missed while down), then again.
  edges->wait([&](const auto&) { return edges->held_count("edge-a", everything) >= 2 && edges->held_count("edge-b", everything) >= 2; },
              "everything, twice, at each edge");
  CHECK(edges->count("edge-a", [](const auto& r) { return r.secret == "s3cret"; }) >= 2);

  // A revocation purges hard at both, and again a moment later.
  store->apply({logged(entry(change_kind::resource, change_op::revoked, "res_1"))});
  edges->wait([&](const auto&) { return edges->held_count("edge-a", hard("res_1")) >= 2 && edges->held_count("edge-b", hard("res_1")) >= 2; },
              "res_1 purged hard at both edges, then repeated");

  // edge-b fails: edge-a still gets the next changes; edge-b is retried and gets them when it answers.
  {
    std::lock_guard<std::mutex> guard{edges->mutex};
    edges->failing.insert("edge-b");
  }
  store->apply({logged(entry(change_kind::resource, change_op::patched, "res_2"))});
  store->apply({logged(entry(change_kind::resource, change_op::patched, "res_3"))});
  edges->wait([&](const auto&) { return edges->held_count("edge-a", soft("res_3")) >= 1 && edges->held_count("edge-b", soft("res_2")) >= 2; },
              "edge-a purged while edge-b is retried");
  {
    std::lock_guard<std::mutex> guard{edges->mutex};
    edges->failing.clear();
  }
  auto b_before = edges->count("edge-b", soft("res_3"));
  edges->wait([&](const auto&) { return edges->held_count("edge-b", soft("res_3")) > b_before; }, "edge-b catches up");

  // A change outside the log (the policy, the group directory) purges everything.
  auto a_everything = edges->count("edge-a", everything);
  ++*directory->snapshot()->outside_changes;
  edges->wait([&](const auto&) { return edges->held_count("edge-a", everything) > a_everything; }, "everything after an outside change");
  caf::anon_send_exit(purger, caf::exit_reason::user_shutdown);
}
