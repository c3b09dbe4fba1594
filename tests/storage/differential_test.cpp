// The differential store test (issue 67, item 4): one script of typed-store operations run against
// memory, LMDB and PostgreSQL at once, with odd inputs (U+0000 and other control characters,
// invalid UTF-8, 1 MB values, empty strings, the largest numbers); it fails on any difference in
// answer or error between the backends. A backend may refuse what it cannot hold
// (`value_unstorable`) only where every backend refuses it.

#include "storage/every_record.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

using namespace cl;
using storage::write_txn;

namespace {

struct backend_under_test {
  std::string name;
  std::shared_ptr<storage::record_store> store;
};

/// What an operation answered, as text two backends that agree answer alike.
using outcome = std::string;

outcome refused_or_failed(const std::exception& e) {
  if (dynamic_cast<const storage::value_unstorable*>(&e)) return "refused";
  return std::string{"failed: "} + typeid(e).name();
}

/// A write in a transaction of its own: ok, refused, or failed (the store threw something else).
outcome write(storage::record_store& s, const std::function<void(write_txn&)>& fn) {
  outcome out = "ok";
  try {
    auto kept = s.apply({[&](write_txn& tx) {
      try {
        fn(tx);
        return true;
      } catch (const std::exception& e) {
        out = refused_or_failed(e);
        return false;
      }
    }});
    if (out == "ok" && (kept.empty() || !kept[0])) out = "not kept";
  } catch (const std::exception& e) {
    out = refused_or_failed(e);
  }
  return out;
}

template <class F>
outcome read(F fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return refused_or_failed(e);
  }
}

std::string shown(const std::optional<std::string>& v) {
  if (!v) return "none";
  return v->size() > 64 ? "(" + std::to_string(v->size()) + " bytes, hash " + std::to_string(std::hash<std::string>{}(*v)) + ")"
                        : "'" + *v + "'";
}

/// The odd texts every id, tenant and principal is tried with.
const std::vector<std::pair<std::string, std::string>>& odd_texts() {
  static const std::vector<std::pair<std::string, std::string>> texts{
    {"plain", "res_1"},
    {"empty", ""},
    {"NUL inside", std::string{"res_a\0evil", 10}},
    {"NUL at the end", std::string{"res_b\0", 6}},
    {"control characters", "res_\x01\x1f\x7f"},
    {"invalid UTF-8", "res_\xff\xfe"},
    {"a lone continuation byte", "res_\x80"},
    {"non-ASCII", "res_\xc3\xa9\xe6\x97\xa5"},
    {"the separator of positions", "res_\x1f" "x"},
    {"300 bytes", "res_" + std::string(296, 'x')},
  };
  return texts;
}

/// The values every record is tried with.
const std::vector<std::pair<std::string, std::string>>& odd_values() {
  static const std::vector<std::pair<std::string, std::string>> values{
    {"JSON", R"({"id":"x","n":1})"},
    {"empty", ""},
    {"1 MB", "{\"content\":\"" + std::string(1 << 20, 'a') + "\"}"},
    {"NUL inside", std::string{"{\"a\":\"\0\"}", 9}},
    {"invalid UTF-8", "{\"a\":\"\xff\"}"},
    {"escaped U+0000", R"({"a":"\u0000"})"},
  };
  return values;
}

/// The script: each step a name and what it does to a store; its outcome is compared across backends.
using step = std::pair<std::string, std::function<outcome(storage::record_store&)>>;

std::vector<step> script() {
  std::vector<step> steps;
  auto add = [&](std::string name, std::function<outcome(storage::record_store&)> fn) {
    steps.emplace_back(std::move(name), std::move(fn));
  };
  for (const auto& [what, text] : odd_texts()) {
    auto t = text;
    // The catalogue, Resources and Activities under an odd id, then an odd tenant.
    add("work put, id " + what, [t](storage::record_store& s) {
      return write(s, [&](write_txn& tx) { tx.catalog().put(storage::catalog_kind::work, "t_1", t, R"({"id":"w"})"); });
    });
    add("work get, id " + what, [t](storage::record_store& s) {
      return read([&] { return shown(s.catalog().get(storage::catalog_kind::work, "t_1", t)); });
    });
    add("resource put, id " + what, [t](storage::record_store& s) {
      return write(s, [&](write_txn& tx) { tx.resources().put("t_1", t, {"wk_1", "ARTICLE", "en", "v1", {}}, R"({"id":"r"})"); });
    });
    add("resource get, id " + what, [t](storage::record_store& s) {
      return read([&] { return shown(s.resources().get("t_1", t)); });
    });
    add("resource put, tenant " + what, [t](storage::record_store& s) {
      return write(s, [&](write_txn& tx) { tx.resources().put(t, "res_t", {"", "ARTICLE", "en", "v1", {}}, R"({"id":"r"})"); });
    });
    add("resource get, tenant " + what, [t](storage::record_store& s) {
      return read([&] { return shown(s.resources().get(t, "res_t")); });
    });
    add("resource header, work " + what, [t](storage::record_store& s) {
      auto put = write(s, [&](write_txn& tx) { tx.resources().put("t_2", "res_h", {t, "ARTICLE", "en", "v1", {}}, "{}"); });
      return put + " / " + read([&] {
        auto h = s.resources().header("t_2", "res_h");
        return h ? "'" + h->work_id + "'" : std::string{"none"};
      });
    });
    add("activity put, id " + what, [t](storage::record_store& s) {
      return write(s, [&](write_txn& tx) { tx.activities().put("t_1", t, {"", "CREATION"}, R"({"type":"CREATION"})"); });
    });
    add("activity get, id " + what, [t](storage::record_store& s) {
      return read([&] { return shown(s.activities().get("t_1", t)); });
    });
    // A grant to an odd principal, and the role it gives.
    add("grant put, principal " + what, [t](storage::record_store& s) {
      return write(s, [&](write_txn& tx) {
        tx.grants().put("t_1", {"res_1", t, domain::access_role::reader, "u_owner", "2026-01-01T00:00:00Z"});
      });
    });
    add("grant get, principal " + what, [t](storage::record_store& s) {
      return read([&] { return shown(s.grants().grant("t_1", "res_1", t)); });
    });
    // The idempotency ledger under an odd client and key.
    add("ledger put, key " + what, [t](storage::record_store& s) {
      return write(s, [&](write_txn& tx) { tx.ledger().put({"t_1", "a_app", t}, 1000, R"({"status":201})"); });
    });
    add("ledger get, key " + what, [t](storage::record_store& s) {
      return read([&] { return shown(s.ledger().record({"t_1", "a_app", t})); });
    });
    add("ledger get, client " + what, [t](storage::record_store& s) {
      return read([&] { return shown(s.ledger().record({"t_1", t, "k"})); });
    });
    // A contract version under an odd id.
    add("contract put, id " + what, [t](storage::record_store& s) {
      return write(s, [&](write_txn& tx) { tx.contracts().put_version("t_1", t, 1, "ACTIVE", {"wk_1"}, R"({"v":1})"); });
    });
    add("contract versions, id " + what, [t](storage::record_store& s) {
      return read([&] {
        auto page = s.contracts().versions({"t_1", t, {}, 10});
        std::string out;
        for (const auto& [n, r] : page.entries) out += n + "=" + r + ";";
        return out;
      });
    });
  }
  for (const auto& [what, value] : odd_values()) {
    auto v = value;
    add("resource record " + what, [v](storage::record_store& s) {
      auto put = write(s, [&](write_txn& tx) { tx.resources().put("t_3", "res_v", {"", "ARTICLE", "en", "v1", {}}, v); });
      return put + " / " + read([&] { return shown(s.resources().get("t_3", "res_v")); });
    });
    add("catalog record " + what, [v](storage::record_store& s) {
      auto put = write(s, [&](write_txn& tx) { tx.catalog().put(storage::catalog_kind::source, "t_3", "src_v", v); });
      return put + " / " + read([&] { return shown(s.catalog().get(storage::catalog_kind::source, "t_3", "src_v")); });
    });
    add("ledger record " + what, [v](storage::record_store& s) {
      auto put = write(s, [&](write_txn& tx) { tx.ledger().put({"t_3", "a_app", "k_" + std::to_string(v.size())}, 5, v); });
      return put + " / " + read([&] { return shown(s.ledger().record({"t_3", "a_app", "k_" + std::to_string(v.size())})); });
    });
  }
  // The largest numbers: a contract version, a ledger record's time.
  add("contract version at the largest number", [](storage::record_store& s) {
    auto put = write(s, [](write_txn& tx) {
      tx.contracts().put_version("t_4", "ctr_max", std::numeric_limits<std::int64_t>::max(), "ACTIVE", {}, "{}");
    });
    return put + " / " + read([&] {
      auto page = s.contracts().versions({"t_4", "ctr_max", {}, 10});
      return page.entries.empty() ? std::string{"none"} : page.entries.front().first;
    });
  });
  add("ledger record at the largest time", [](storage::record_store& s) {
    auto put = write(s, [](write_txn& tx) {
      tx.ledger().put({"t_4", "a_app", "k_max"}, std::numeric_limits<std::int64_t>::max(), "{}");
    });
    return put + " / " + read([&] { return shown(s.ledger().record({"t_4", "a_app", "k_max"})); });
  });
  // The largest ledger key the API admits: tenant and client claims and the Idempotency-Key at 255
  // bytes each (past what LMDB holds as a key as it is), stored, answered, pruned and walked alike.
  add("ledger key at the API's largest sizes", [](storage::record_store& s) {
    domain::ledger_key big{"t" + std::string(254, 'x'), "a_" + std::string(253, 'y'), std::string(255, 'k')};
    domain::ledger_key other{big.tenant, big.client_id, std::string(254, 'k') + "j"};
    auto put = write(s, [&](write_txn& tx) { tx.ledger().put(big, 7, R"({"status":201,"body":"first"})"); });
    return put + " / " + read([&] {
      return shown(s.ledger().record(big)) + " / other key " + shown(s.ledger().record(other));
    });
  });
  // What every walk sees after all of it: the same records in the same order.
  add("every Resource, in order", [](storage::record_store& s) {
    return read([&] {
      std::string out;
      for (const auto& p : s.resources().every({}, 1000)) out += "[" + p.tenant + "|" + p.id + "]";
      return std::to_string(std::hash<std::string>{}(out)) + " (" + std::to_string(out.size()) + " bytes)";
    });
  });
  add("the tenant's Resources listed", [](storage::record_store& s) {
    return read([&] {
      storage::resource_query q;
      q.tenant = "t_1";
      q.limit = 100;
      std::string out;
      for (const auto& [id, record] : s.resources().list(q).entries) out += "[" + id + "]";
      return out;
    });
  });
  auto listed = [](const storage::record_page& page) {
    std::string out;
    for (const auto& [id, record] : page.entries) out += "[" + id + "]";
    return out;
  };
  add("the tenant's Works listed", [listed](storage::record_store& s) {
    return read([&] {
      storage::catalog_query q;
      q.tenant = "t_1";
      q.limit = 100;
      return listed(s.catalog().list(q));
    });
  });
  add("the tenant's Activities listed", [listed](storage::record_store& s) {
    return read([&] {
      storage::activity_query q;
      q.tenant = "t_1";
      q.limit = 100;
      return listed(s.activities().list(q));
    });
  });
  add("the tenant's contracts listed", [listed](storage::record_store& s) {
    return read([&] {
      storage::contract_query q;
      q.tenant = "t_1";
      q.limit = 100;
      return listed(s.contracts().list(q));
    });
  });
  add("the grants on a Resource listed", [listed](storage::record_store& s) {
    return read([&] {
      storage::grant_query q;
      q.tenant = "t_1";
      q.resource_id = "res_1";
      q.limit = 100;
      return listed(s.grants().on_resource(q));
    });
  });
  add("the ledger walked and read, the migration's way", [](storage::record_store& s) {
    return read([&] {
      std::string out;
      for (const auto& kind : storage::record_kinds_of(s)) {
        if (kind.name != "ledger") continue;
        for (const auto& key : kind.keys(s, "")) out += "[" + key + "=" + shown(kind.record(s, key)) + "]";
      }
      return std::to_string(std::hash<std::string>{}(out)) + " (" + std::to_string(out.size()) + " bytes)";
    });
  });
  add("every kind's count, the migration's way", [](storage::record_store& s) {
    return read([&] {
      std::string out;
      for (const auto& kind : storage::record_kinds_of(s)) {
        std::size_t n = 0;
        std::string after;
        for (;;) {
          auto keys = kind.keys(s, after);
          n += keys.size();
          if (keys.size() < storage::copy_page_size) break;
          after = keys.back();
        }
        out += kind.name + "=" + std::to_string(n) + " ";
      }
      return out;
    });
  });
  return steps;
}

/// `text` with every byte outside printable ASCII as \xNN, for the report.
std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every typed-store operation answers alike on memory, LMDB and PostgreSQL, odd inputs included",
          "[differential][postgresql]") {
  testing::temp_dir dir;
  std::vector<backend_under_test> backends{
    {"memory", storage::open_memory_store()},
    {"lmdb", storage::open_lmdb_store(dir.path, 1024)},
    {"postgresql", storage::open_postgresql_store({testing::fresh_postgresql_url(), {}, 2})},
  };
  int differences = 0;
  for (const auto& [name, run] : script()) {
    std::vector<outcome> answers;
    for (auto& b : backends) answers.push_back(run(*b.store));
    bool same = answers[0] == answers[1] && answers[1] == answers[2];
    if (!same) ++differences;
    INFO(printable(name) << "\n  memory:     " << printable(answers[0]) << "\n  lmdb:       " << printable(answers[1])
                         << "\n  postgresql: " << printable(answers[2]));
    CHECK(same);
  }
  CHECK(differences == 0);
}
