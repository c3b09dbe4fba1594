// The PostgreSQL schema, as numbered migrations (the SQL mapping each store header writes down).
// Keys are `text COLLATE "C"`: ids compare byte by byte, as on LMDB, so pages come in the same
// order on both backends. Records are `text`: the canonical JSON bytes, unchanged (a `jsonb`
// column would reorder members and change every ETag).

#include "domain/base64url.hpp"
#include "storage/postgresql/backend.hpp"
#include "storage/postgresql/connection.hpp"
#include "storage/postgresql/postgresql_store.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace cl::storage::pg {

namespace {

std::map<std::string, std::vector<std::string>>& parts() {
  static std::map<std::string, std::vector<std::string>> p;
  return p;
}

/// The core's part: its stores, the change log and its consumers. Route groups declare their own
/// parts beside their stores (storage/postgresql/blob_store.cpp, webhook_store.cpp).
const bool core = schema_part("core", {
  // 1: the core's stores, the change log and its consumers.
  R"sql(
CREATE TABLE resources (
  tenant text COLLATE "C" NOT NULL, id text COLLATE "C" NOT NULL,
  work_id text COLLATE "C" NOT NULL, type text NOT NULL, language text NOT NULL, version text NOT NULL,
  blobs text[] NOT NULL, record text NOT NULL,
  PRIMARY KEY (tenant, id));
CREATE INDEX resources_by_work ON resources (tenant, work_id, id) WHERE work_id <> '';
CREATE TABLE resource_versions (
  tenant text COLLATE "C" NOT NULL, id text COLLATE "C" NOT NULL, version text COLLATE "C" NOT NULL,
  record text NOT NULL,
  PRIMARY KEY (tenant, id, version));
CREATE TABLE resource_blobs (
  tenant text COLLATE "C" NOT NULL, blob_id text COLLATE "C" NOT NULL, resource_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant, blob_id, resource_id));
CREATE TABLE activities (
  tenant text COLLATE "C" NOT NULL, id text COLLATE "C" NOT NULL,
  about_resource text COLLATE "C" NOT NULL, type text NOT NULL, record text NOT NULL,
  PRIMARY KEY (tenant, id));
CREATE INDEX activities_by_resource ON activities (tenant, about_resource, id) WHERE about_resource <> '';
CREATE TABLE activity_readers (
  tenant text COLLATE "C" NOT NULL, principal text COLLATE "C" NOT NULL, activity_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant, principal, activity_id));
CREATE TABLE catalog (
  kind smallint NOT NULL, tenant text COLLATE "C" NOT NULL, id text COLLATE "C" NOT NULL, record text NOT NULL,
  PRIMARY KEY (kind, tenant, id));
CREATE TABLE contract_versions (
  tenant text COLLATE "C" NOT NULL, id text COLLATE "C" NOT NULL, version bigint NOT NULL,
  status text NOT NULL, works text[] NOT NULL, record text NOT NULL,
  PRIMARY KEY (tenant, id, version));
CREATE TABLE contracts (
  tenant text COLLATE "C" NOT NULL, id text COLLATE "C" NOT NULL, version bigint NOT NULL,
  status text NOT NULL, works text[] NOT NULL, record text NOT NULL,
  PRIMARY KEY (tenant, id));
CREATE TABLE contract_works (
  tenant text COLLATE "C" NOT NULL, work_id text COLLATE "C" NOT NULL, contract_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant, work_id, contract_id));
CREATE TABLE contract_usages (
  tenant text COLLATE "C" NOT NULL, usage_type text COLLATE "C" NOT NULL, status text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant, usage_type, status));
CREATE TABLE grants (
  tenant text COLLATE "C" NOT NULL, resource_id text COLLATE "C" NOT NULL, principal text COLLATE "C" NOT NULL,
  role text NOT NULL, record text NOT NULL,
  PRIMARY KEY (tenant, resource_id, principal));
CREATE INDEX grants_by_principal ON grants (tenant, principal, resource_id);
CREATE TABLE idempotency (
  tenant text COLLATE "C" NOT NULL, client_id text COLLATE "C" NOT NULL, key text COLLATE "C" NOT NULL,
  created_ms bigint NOT NULL, record text NOT NULL,
  PRIMARY KEY (tenant, client_id, key));
CREATE INDEX idempotency_by_age ON idempotency (created_ms);
CREATE TABLE change_log (
  seq bigint PRIMARY KEY, transaction bigint NOT NULL, tenant text COLLATE "C" NOT NULL, kind smallint NOT NULL,
  id text COLLATE "C" NOT NULL, op smallint NOT NULL, at_ms bigint NOT NULL, version text NOT NULL,
  hash text NOT NULL, principal text NOT NULL);
CREATE TABLE change_head (
  one boolean PRIMARY KEY DEFAULT true CHECK (one), seq bigint NOT NULL);
INSERT INTO change_head (one, seq) VALUES (true, 0);
CREATE TABLE change_consumers (
  name text COLLATE "C" PRIMARY KEY, applied bigint NOT NULL);
)sql",
  // 2: when each consumer last acknowledged (a node's search index that no longer does is let go).
  R"sql(ALTER TABLE change_consumers ADD COLUMN acknowledged_ms bigint NOT NULL DEFAULT 0)sql",
  // 3: the timeline each commit stamps the head with (replica reads: storage/postgresql/replicas.hpp).
  R"sql(ALTER TABLE change_head ADD COLUMN timeline bigint NOT NULL DEFAULT 0)sql",
});

/// Facts every node on the database shares (`record_secrets_fingerprint`), the leases, the rate tally
/// and the held requests.
const bool cluster = schema_part("cluster", {
  // 1: the facts, by name.
  R"sql(CREATE TABLE cluster_facts (name text COLLATE "C" PRIMARY KEY, value text NOT NULL))sql",
  // 2: the leases of work done once in the cluster, and the rate limiters' tally (storage/postgresql/leases.cpp).
  R"sql(
CREATE TABLE leases (
  name text COLLATE "C" PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL, taken_at timestamptz NOT NULL);
CREATE TABLE rate_admissions (
  client_id text COLLATE "C" NOT NULL, node text COLLATE "C" NOT NULL, admitted double precision NOT NULL,
  began_at timestamptz NOT NULL, changed_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, node));
CREATE INDEX rate_admissions_by_change ON rate_admissions (changed_at);
)sql",
  // 3: the held requests of every node (storage/postgresql/leases.cpp, `held_slot_store`): a row per
  // held stream or long poll, alive while its node keeps moving its expiry on.
  R"sql(
CREATE TABLE held_requests (
  id bigserial PRIMARY KEY, node text COLLATE "C" NOT NULL, holder text COLLATE "C" NOT NULL,
  client text COLLATE "C" NOT NULL, expires_at timestamptz NOT NULL);
CREATE INDEX held_requests_by_holder ON held_requests (holder);
CREATE INDEX held_requests_by_client ON held_requests (client);
)sql",
});

/// The key of the advisory lock every node takes to migrate ("contentlake schema").
constexpr const char* migration_lock = "SELECT pg_advisory_xact_lock(7362846102834651)";

}  // namespace

bool schema_part(std::string name, std::vector<std::string> migrations) {
  parts()[std::move(name)] = std::move(migrations);
  return true;
}

std::vector<std::pair<std::string, int>> schema_versions() {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& [name, steps] : parts()) out.emplace_back(name, static_cast<int>(steps.size()));
  return out;
}

const std::string& schema_step(const std::string& part, int version) {
  return parts().at(part).at(static_cast<std::size_t>(version - 1));
}

std::string migrate(const connection& db) {
  std::string versions, migrated;
  db.exec("BEGIN");
  try {
    db.exec(migration_lock);
    db.exec("CREATE TABLE IF NOT EXISTS contentlake_schema (part text NOT NULL, version integer NOT NULL, "
            "applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (part, version))");
    static const statement current{"SELECT coalesce(max(version), 0) FROM contentlake_schema WHERE part = $1"};
    static const statement applied{"INSERT INTO contentlake_schema (part, version) VALUES ($1, $2)"};
    // "core" first: the route groups' tables may refer to it.
    auto names = schema_versions();
    std::stable_partition(names.begin(), names.end(), [](const auto& p) { return p.first == "core"; });
    for (const auto& [name, known] : names) {
      auto have = static_cast<int>(db.run(current, {name}).integer(0, 0));
      if (have > known)
        throw std::runtime_error("the database's schema (" + name + ") is version " + std::to_string(have)
                                 + ", newer than this build's (" + std::to_string(known)
                                 + "): run the newer contentlake, or restore a backup taken before the upgrade");
      const auto& steps = parts()[name];
      for (int v = have + 1; v <= known; ++v) {
        db.exec(steps[static_cast<std::size_t>(v - 1)]);
        db.run(applied, {name, std::to_string(v)});
      }
      versions += (versions.empty() ? "" : ", ") + name + " " + std::to_string(known);
      if (have < known)
        migrated += (migrated.empty() ? "" : ", ") + name + " " + (have == 0 ? std::string{"created"}
                                                                              : std::to_string(have) + " -> "
                                                                                  + std::to_string(known));
    }
    db.exec("COMMIT");
    return "postgresql schema " + versions + (migrated.empty() ? "" : "; migrated " + migrated);
  } catch (...) {
    try {
      db.exec("ROLLBACK");
    } catch (...) {
    }
    throw;
  }
}

}  // namespace cl::storage::pg

namespace cl::storage {

std::string record_secrets_fingerprint(const postgresql_settings& settings, const std::string& fingerprint,
                                       bool from_file) {
  // A record made by a node with its own secrets gives way to one from a secrets file (the move to
  // several nodes); one from a file never does.
  static const pg::statement claim{
    "INSERT INTO cluster_facts (name, value) VALUES ('secrets_fingerprint', $1) ON CONFLICT (name) DO UPDATE "
    "SET value = excluded.value WHERE cluster_facts.value LIKE 'dir:%' AND excluded.value LIKE 'file:%'"};
  static const pg::statement read{"SELECT value FROM cluster_facts WHERE name = 'secrets_fingerprint'"};
  pg::connection db{settings.url, settings.password, settings.replan_after, settings.answer_wait};
  db.run(claim, {std::string{from_file ? "file:" : "dir:"} + fingerprint});
  auto recorded = db.run(read, {}).str(0, 0);
  return recorded.substr(recorded.find(':') + 1);
}

namespace {

/// A migration's progress as rows `migrate:<kind>` of `cluster_facts`, the positions in hex (text).
class database_state final : public migration_state {
public:
  explicit database_state(const postgresql_settings& settings)
      : db_{settings.url, settings.password, settings.replan_after, settings.answer_wait} {}

  migration_progress load() override {
    static const pg::statement read{"SELECT substr(name, 9), value FROM cluster_facts WHERE name LIKE 'migrate:%'"};
    migration_progress p;
    auto rows = db_.run(read, {});
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto raw = domain::hex_decode(rows.text(i, 1));
      if (!raw) throw std::runtime_error("the migration's progress in the target database is damaged");
      p[rows.str(i, 0)] = std::move(*raw);
    }
    return p;
  }

  void save(const migration_progress& p) override {
    static const pg::statement clear{"DELETE FROM cluster_facts WHERE name LIKE 'migrate:%'"};
    static const pg::statement put{"INSERT INTO cluster_facts (name, value) VALUES ('migrate:' || $1, $2)"};
    db_.exec("BEGIN");
    try {
      db_.run(clear, {});
      for (const auto& [kind, position] : p) db_.run(put, {kind, domain::hex_encode(position)});
      db_.exec("COMMIT");
    } catch (...) {
      try {
        db_.exec("ROLLBACK");
      } catch (...) {
      }
      throw;
    }
  }

  std::string where() const override { return "the target database (cluster_facts)"; }

private:
  pg::connection db_;
};

}  // namespace

std::unique_ptr<migration_state> postgresql_migration_state(const postgresql_settings& settings) {
  return std::make_unique<database_state>(settings);
}

}  // namespace cl::storage
