// The cluster's leases and the rate limiters' shared tally, in the database every node shares (tables
// of schema part "cluster", storage/postgresql/schema.cpp). A lease is a row: claimed by an upsert
// that takes it only from its holder or from a holder whose time lapsed, by the database's clock.

#include "storage/postgresql/leases.hpp"

#include "storage/postgresql/backend.hpp"

#include "domain/base64url.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

namespace cl::storage {

namespace {

using pg::num;
using pg::statement;

/// Takes the lease when free or lapsed, renews it for its holder; a row comes back when $2 holds it.
const statement lease_claim{
  "INSERT INTO leases (name, holder, expires_at, taken_at) "
  "VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond', clock_timestamp()) "
  "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at, "
  "taken_at = CASE WHEN leases.holder = excluded.holder THEN leases.taken_at ELSE excluded.taken_at END "
  "WHERE leases.holder = excluded.holder OR leases.expires_at < clock_timestamp() RETURNING holder"};
const statement lease_release{"DELETE FROM leases WHERE name = $1 AND holder = $2"};
const statement lease_list{
  "SELECT name, holder, (extract(epoch FROM expires_at) * 1000)::bigint FROM leases ORDER BY name"};

class postgresql_leases final : public lease_store {
public:
  explicit postgresql_leases(const postgresql_settings& s)
    : pool_(s.url, s.password, 1, s.wait, s.replan_after, s.answer_wait), db_(pool_) {}

  bool claim(const std::string& name, const std::string& holder, std::chrono::milliseconds ttl) override {
    return !db_.run(lease_claim, {name, holder, num(static_cast<std::int64_t>(ttl.count()))}).empty();
  }
  void release(const std::string& name, const std::string& holder) override { db_.run(lease_release, {name, holder}); }
  std::vector<lease_record> leases() override {
    auto r = db_.run(lease_list);
    std::vector<lease_record> out;
    for (std::size_t i = 0; i < r.size(); ++i) out.push_back({r.str(i, 0), r.str(i, 1), r.integer(i, 2)});
    return out;
  }

private:
  pg::pool pool_;
  pg::pooled_session db_;
};

/// Adds this node's admissions ($1 the node, $2 clients, $3 tokens) and answers the database's time
/// and the other nodes' tallies changed since $4 (ms), each with whether it began since then.
const statement rate_share{
  "WITH mine AS (INSERT INTO rate_admissions (client_id, node, admitted, began_at, changed_at) "
  "SELECT c, $1, a, clock_timestamp(), clock_timestamp() FROM unnest($2::text[], $3::float8[]) AS t(c, a) "
  "ON CONFLICT (client_id, node) DO UPDATE SET admitted = rate_admissions.admitted + excluded.admitted, "
  "changed_at = excluded.changed_at) "
  "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint, array_agg(client_id), array_agg(node), "
  "array_agg(admitted), array_agg(began_at > to_timestamp($4 / 1000.0)) "
  "FROM rate_admissions WHERE node <> $1 AND changed_at > to_timestamp($4 / 1000.0)"};
/// This node's tallies not changed for ten minutes go (a client back later counts from zero).
const statement rate_forget{
  "DELETE FROM rate_admissions WHERE node = $1 AND changed_at < clock_timestamp() - interval '10 minutes'"};

class postgresql_rate_exchange final : public rate_exchange {
public:
  postgresql_rate_exchange(const postgresql_settings& s, std::string node)
    : pool_(s.url, s.password, 1, s.wait, s.replan_after, s.answer_wait), db_(pool_), node_(std::move(node)) {}

  admissions exchange(const admissions& admitted_here) override {
    std::lock_guard lock{mutex_};
    std::vector<std::string> clients;
    std::string amounts = "{";
    for (const auto& [client, n] : admitted_here) {
      clients.push_back(client);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", n);
      if (amounts.size() > 1) amounts += ',';
      amounts += buf;
    }
    amounts += '}';
    // Rows changed within the last second are read again: one whose change committed after a
    // read that began earlier is not missed (its growth counts once, against what was seen).
    auto since = last_ms_ == 0 ? std::int64_t{0} : last_ms_ - 1000;
    auto r = db_.run(rate_share, {node_, pg::array_literal(clients), amounts, num(since)});
    auto now = r.integer(0, 0);
    admissions others;
    if (!r.is_null(0, 1)) {
      auto ids = pg::parse_array(r.text(0, 1));
      auto nodes = pg::parse_array(r.text(0, 2));
      auto tallies = pg::parse_array(r.text(0, 3));
      auto began = pg::parse_array(r.text(0, 4));
      std::unordered_map<std::string, double> grown;
      for (std::size_t i = 0; i < ids.size() && i < nodes.size() && i < tallies.size() && i < began.size(); ++i) {
        auto tally = std::stod(tallies[i]);
        auto key = ids[i] + '\0' + nodes[i];
        auto [seen, fresh] = seen_.try_emplace(key, tally_seen{0, now});
        // A tally first seen counts whole only when it began since the last read (else what it
        // holds is older than this node's interest: it becomes the base); one that shrank was
        // forgotten and begun again.
        double growth = fresh ? (last_ms_ != 0 && began[i] == "t" ? tally : 0)
                              : tally >= seen->second.tally ? tally - seen->second.tally : tally;
        seen->second = {tally, now};
        if (growth > 0) grown[ids[i]] += growth;
      }
      others.assign(grown.begin(), grown.end());
    }
    last_ms_ = now;
    if (now - forgot_ms_ > 60000) {
      forgot_ms_ = now;
      db_.run(rate_forget, {node_});
      for (auto it = seen_.begin(); it != seen_.end();)
        it = now - it->second.at_ms > 15 * 60000 ? seen_.erase(it) : std::next(it);
    }
    return others;
  }

private:
  struct tally_seen {
    double tally;
    std::int64_t at_ms;
  };
  pg::pool pool_;
  pg::pooled_session db_;
  std::string node_;
  std::mutex mutex_;
  std::unordered_map<std::string, tally_seen> seen_;  ///< client\0node -> the tally last seen
  std::int64_t last_ms_ = 0;
  std::int64_t forgot_ms_ = 0;
};

/// Every take waits its turn under one lock (takes are rare: a stream or long poll opening), so two
/// nodes taking at the same moment count each other's slots: a limit holds exactly.
const statement held_lock{"SELECT pg_advisory_xact_lock(7362846102834652)"};
const statement held_drop{"DELETE FROM held_requests WHERE id = ANY($1::bigint[])"};
/// $1 node, $2 holder, $3 client, $4 lifetime (ms), $5 and $6 the limits: the slot's id (null when
/// refused) and the live slots the holder and the client held before.
const statement held_take{
  "WITH n AS (SELECT count(*) FILTER (WHERE holder = $2) AS h, count(*) FILTER (WHERE client = $3) AS c "
  "FROM held_requests WHERE (holder = $2 OR client = $3) AND expires_at > clock_timestamp()), "
  "slot AS (INSERT INTO held_requests (node, holder, client, expires_at) "
  "SELECT $1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond' FROM n WHERE n.h < $5 AND n.c < $6 "
  "RETURNING id) "
  "SELECT (SELECT id FROM slot), n.h, n.c FROM n"};
const statement held_keep{
  "UPDATE held_requests SET expires_at = clock_timestamp() + $2 * interval '1 millisecond' "
  "WHERE id = ANY($1::bigint[])"};
/// Slots whose node stopped keeping them (it died) go, a while after they lapsed.
const statement held_forget{"DELETE FROM held_requests WHERE expires_at < clock_timestamp() - interval '1 minute'"};

/// The held slots in the database. A thread of its own gives slots back as soon as they are (a
/// request's end never waits on the database) and moves the expiry of the live ones on every third
/// of their lifetime: a node that dies loses its slots within `lifetime`.
class postgresql_held_slots final : public held_slot_store {
public:
  postgresql_held_slots(const postgresql_settings& s, std::string node)
    : pool_(s.url, s.password, 2, s.wait, s.replan_after, s.answer_wait), db_(pool_), node_(std::move(node)),
      own_thread_(s.own_threads) {
    if (own_thread_) keeper_ = std::thread{[this] { keep_on_thread(); }};
  }

  ~postgresql_held_slots() override {
    {
      std::lock_guard lock{mutex_};
      stopping_ = true;
    }
    wake_.notify_all();
    if (keeper_.joinable()) keeper_.join();
  }

  std::optional<std::uint64_t> take(const std::string& holder, const std::string& client, std::size_t per_holder,
                                    std::size_t per_client, full* why) override {
    std::vector<std::string> returned;
    {
      std::lock_guard lock{mutex_};
      returned.swap(given_back_);
    }
    auto c = pool_.acquire();
    pg::rows r;
    try {
      c->send_exec("BEGIN");
      c->send(held_lock, {});
      // This node's slots given back since its keeper last ran go first: a client that closed a
      // stream and opens another at once is not refused for the one it closed.
      if (!returned.empty()) c->send(held_drop, {pg::array_literal(returned)});
      r = c->run_and_commit(held_take, {node_, domain::hex_encode(holder), domain::hex_encode(client),
                                        num(static_cast<std::int64_t>(lifetime.count())),
                                        num(static_cast<std::int64_t>(per_holder)),
                                        num(static_cast<std::int64_t>(per_client))});
    } catch (...) {
      try {
        c->discard();
        if (c->healthy()) c->exec("ROLLBACK");
      } catch (...) {
      }
      std::lock_guard lock{mutex_};  // not given back yet: the keeper tries again
      given_back_.insert(given_back_.end(), returned.begin(), returned.end());
      throw;
    }
    if (r.is_null(0, 0)) {
      *why = r.integer(0, 1) >= static_cast<std::int64_t>(per_holder) ? full::holder : full::client;
      return std::nullopt;
    }
    auto id = static_cast<std::uint64_t>(r.integer(0, 0));
    std::lock_guard lock{mutex_};
    live_.insert(id);
    return id;
  }

  void give_back(std::uint64_t id) override {
    {
      std::lock_guard lock{mutex_};
      live_.erase(id);
      given_back_.push_back(std::to_string(id));
    }
    wake_.notify_all();
  }

  static constexpr std::chrono::milliseconds lifetime{30000};

  /// The service's ticker: given-back slots leave within a tick (this node's own next `take`
  /// drops them first anyway), the live ones are kept every third of their lifetime.
  std::chrono::milliseconds keep() override {
    if (own_thread_) return std::chrono::milliseconds{0};
    std::vector<std::string> returned, live;
    bool keeping = false;
    {
      std::lock_guard lock{mutex_};
      returned.swap(given_back_);
      keeping = std::chrono::steady_clock::now() >= next_keep_;
      if (keeping)
        for (auto id : live_) live.push_back(std::to_string(id));
    }
    try {
      if (!returned.empty()) db_.run(held_drop, {pg::array_literal(returned)});
      if (keeping) {
        if (!live.empty()) db_.run(held_keep, {pg::array_literal(live), num(static_cast<std::int64_t>(lifetime.count()))});
        db_.run(held_forget);
      }
    } catch (...) {
      std::lock_guard lock{mutex_};  // not given back yet: the next round tries again
      given_back_.insert(given_back_.end(), returned.begin(), returned.end());
      throw;
    }
    if (keeping) {
      std::lock_guard lock{mutex_};
      next_keep_ = std::chrono::steady_clock::now() + lifetime / 3;
    }
    return std::chrono::milliseconds{100};
  }

private:
  void keep_on_thread() {
    auto next_keep = std::chrono::steady_clock::now();
    bool failing = false;  // the database is away: try again in a second, not at every give-back
    std::unique_lock lock{mutex_};
    for (;;) {
      wake_.wait_until(lock, next_keep, [&] { return stopping_ || (!failing && !given_back_.empty()); });
      if (stopping_) break;
      std::vector<std::string> returned;
      returned.swap(given_back_);
      bool keeping = std::chrono::steady_clock::now() >= next_keep;
      std::vector<std::string> live;
      if (keeping)
        for (auto id : live_) live.push_back(std::to_string(id));
      lock.unlock();
      bool done = true;
      try {
        if (!returned.empty()) db_.run(held_drop, {pg::array_literal(returned)});
        if (keeping) {
          if (!live.empty()) db_.run(held_keep, {pg::array_literal(live), num(static_cast<std::int64_t>(lifetime.count()))});
          db_.run(held_forget);
        }
      } catch (const std::exception&) {
        // What was not given back is tried again; a live slot that lapses meanwhile stops counting
        // (the limits are looser while the database is away, never stricter).
        done = false;
      }
      lock.lock();
      auto now = std::chrono::steady_clock::now();
      if (!done) {
        given_back_.insert(given_back_.end(), returned.begin(), returned.end());
        next_keep = now + std::chrono::seconds{1};
      } else if (keeping) {
        next_keep = now + lifetime / 3;
      }
      failing = !done;
    }
  }

  pg::pool pool_;
  pg::pooled_session db_;
  std::string node_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::set<std::uint64_t> live_;            ///< slots this node holds
  std::vector<std::string> given_back_;     ///< ids to delete
  bool own_thread_;
  std::chrono::steady_clock::time_point next_keep_{};  ///< `keep`'s next keep-alive
  std::thread keeper_;
};

}  // namespace

std::shared_ptr<held_slot_store> open_postgresql_held_slots(const postgresql_settings& settings, std::string node) {
  return std::make_shared<postgresql_held_slots>(settings, std::move(node));
}

std::shared_ptr<lease_store> open_postgresql_leases(const postgresql_settings& settings) {
  return std::make_shared<postgresql_leases>(settings);
}

std::shared_ptr<rate_exchange> open_postgresql_rate_exchange(const postgresql_settings& settings, std::string node) {
  return std::make_shared<postgresql_rate_exchange>(settings, std::move(node));
}

}  // namespace cl::storage
