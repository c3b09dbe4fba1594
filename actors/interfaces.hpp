#pragma once
/// The typed actor interfaces of the platform every route group builds on (auth, rate limiting,
/// reads, the writer, rights, contracts, access, the ledger). A route group declares its own
/// actors' interfaces and messages in its own header (actors/blobs/blob_messages.hpp,
/// actors/search/search_messages.hpp); docs/architecture.md draws the whole map. Handlers answer with values: domain failures travel inside
/// the reply (e.g. `auth_outcome::error`); a caf::error means the actor itself failed or was
/// late, which the coordinator turns into 503 BACKEND_UNAVAILABLE.

#include "actors/type_ids.hpp"

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>


namespace cl::actors {

/// Auth: verifies bearer tokens against the trusted signing keys (spec 5).
using auth_actor = caf::typed_actor<
  // Verifies a compact JWS; answers with the principal or TOKEN_*/TENANT_MISMATCH.
  caf::replies_to<verify_atom, std::string>::with<auth_outcome>,
  // Internal: re-reads the JWKS file if it changed (sent to itself once a second).
  caf::reacts_to<recheck_atom>>;

/// Rate limiter: a token bucket per `client_id` (spec 8).
using rate_limiter_actor = caf::typed_actor<
  // Takes one request from the client's bucket; answers admitted or the wait.
  caf::replies_to<admit_atom, std::string>::with<rate_decision>>;

/// Reader: typed reads of the record store's typed stores (LMDB read transactions). Queries are
/// values (storage/*_store.hpp), so another backend can answer them.
using reader_actor = caf::typed_actor<
  // (tenant, resource id) -> the Resource's canonical JSON, if any.
  caf::replies_to<fetch_atom, std::string, std::string>::with<fetch_outcome>,
  // A Resource's snapshot at a version, if any.
  caf::replies_to<fetch_atom, storage::version_ref>::with<fetch_outcome>,
  // A Work, Source or Agent, if any.
  caf::replies_to<fetch_atom, storage::record_ref>::with<fetch_outcome>,
  // An Activity, if any.
  caf::replies_to<fetch_atom, storage::activity_ref>::with<fetch_outcome>,
  // One access grant's record, if any.
  caf::replies_to<fetch_atom, storage::grant_ref>::with<fetch_outcome>,
  // A page of the grants on a Resource, in principal order.
  caf::replies_to<list_atom, storage::grant_query>::with<scan_result>,
  // A page of Resources (`entries` are (id, record)).
  caf::replies_to<list_atom, storage::resource_query>::with<scan_result>,
  // A page of Activities.
  caf::replies_to<list_atom, storage::activity_query>::with<scan_result>,
  // A page of a Resource's snapshots, oldest first.
  caf::replies_to<list_atom, storage::version_query>::with<scan_result>,
  // A page of Works (or Sources, Agents).
  caf::replies_to<list_atom, storage::catalog_query>::with<scan_result>>;

/// Log gate: read your writes. Makes this node's reads reflect the change log up to a position
/// (`record_store::reflects`: on PostgreSQL a read of the log, dropping what other nodes changed
/// from the caches), off the coordinators' threads; detached where the backend's reads block.
using log_gate_actor = caf::typed_actor<
  // position -> true once this node's reads reflect it; false for a position past the log's head.
  caf::replies_to<reach_atom, std::uint64_t>::with<bool>>;

/// Rights resolver: contract terms x platform policy x validity window (spec 2.3).
using rights_actor = caf::typed_actor<
  // (tenant, work id or empty for a staged Resource) -> the resolved rights.
  caf::replies_to<resolve_atom, std::string, std::string>::with<domain::resolved_rights>,
  // (tenant, work ids) -> the resolved rights of each, in order (list reads).
  caf::replies_to<resolve_atom, std::string, std::vector<std::string>>::with<std::vector<domain::resolved_rights>>,
  // (tenant, declared usage or empty for a plain read) -> whether the use can be allowed on some
  // Resource of the tenant, and whether it can be refused (`domain::possible_content_answers`).
  caf::replies_to<possible_atom, std::string, std::string>::with<bool, bool>,
  // Internal: re-reads the platform policy file if it changed (sent to itself once a second).
  caf::reacts_to<recheck_atom>>;

/// Writer: the single LMDB write path, with group commit. Detached: fsync never blocks the
/// scheduler threads that serve requests.
using writer_actor = caf::typed_actor<
  // Runs the mutation in the next group transaction; answers true when it kept its changes
  // (after the durable commit), false when it refused them.
  caf::replies_to<write_atom, storage::mutation>::with<bool>,
  // Internal: commits everything pending as one transaction (sent to itself).
  caf::reacts_to<flush_atom>,
  // Internal: removes change-log entries past retention (the pruning writer's own timer).
  caf::reacts_to<prune_atom>>;

/// Contracts (the contracts route group, a preview addition): contract versions in LMDB.
using contracts_actor = caf::typed_actor<
  // (tenant, contract id, version or 0 for the latest) -> that version's record, commercial terms
  // included (plans cut them for callers without contracts.commercial.read).
  caf::replies_to<fetch_atom, std::string, std::string, std::int64_t>::with<fetch_outcome>,
  // A page of the tenant's contracts (latest versions), filtered by status and Work.
  caf::replies_to<list_atom, storage::contract_query>::with<scan_result>,
  // A page of one contract's versions, oldest first.
  caf::replies_to<list_atom, storage::contract_versions_query>::with<scan_result>>;

/// Access (layer 2): the caller's role on a Resource from its grants and the group directory.
using access_actor = caf::typed_actor<
  // (tenant, subject, resource id) -> the caller's effective role (domain::access_role, 0 = none).
  caf::replies_to<check_atom, std::string, std::string, std::string>::with<std::int32_t>,
  // (tenant, subject) -> the principals whose grants count for the caller: the subject, then its
  // groups from the directory (list reads filter by them in the store).
  caf::replies_to<principals_atom, std::string, std::string>::with<std::vector<std::string>>,
  // (tenant, group id) -> whether the directory defines this group.
  caf::replies_to<group_atom, std::string, std::string>::with<bool>,
  // Internal: re-reads the directory file if it changed (sent to itself once a second).
  caf::reacts_to<recheck_atom>>;

/// Idempotency ledger (spec 4.6): which keys are executing, what a finished key answered.
using ledger_actor = caf::typed_actor<
  // (ledger key, request fingerprint, whether the request's only effect is its guarded write) ->
  // fresh (the key is now held), unchecked (held, not looked up), replay, mismatch or in_use.
  caf::replies_to<begin_atom, domain::ledger_key, std::string, bool>::with<ledger_verdict>,
  // (ledger key, request fingerprint) -> what is stored under the key now: replay, mismatch or
  // fresh (nothing). Holds nothing, releases nothing.
  caf::replies_to<check_atom, domain::ledger_key, std::string>::with<ledger_verdict>,
  // (ledger key, ledger_settlement): the request that held it has answered.
  caf::reacts_to<release_atom, domain::ledger_key, int>,
  // Internal: removes records past retention through the writer (sent to itself periodically).
  caf::reacts_to<prune_atom>>;

/// JWKS fetcher: one blocking HTTPS GET on its own thread (spawned detached, quits after).
using jwks_fetcher_actor = caf::typed_actor<
  // URL -> the JWKS document or why it could not be fetched.
  caf::replies_to<jwks_atom, std::string>::with<jwks_document>>;

}  // namespace cl::actors
