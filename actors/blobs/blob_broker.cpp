#include "actors/blobs/blob_broker.hpp"
#include "actors/fault_hooks.hpp"

#include "actors/backend_error.hpp"
#include "storage/objects/object_files.hpp"
#include "domain/clock.hpp"
#include "domain/contract.hpp"
#include "domain/ids.hpp"

#include "storage/leases.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

namespace json = boost::json;

namespace {

using domain::error_id;

blob_outcome failure(error_id id, std::string message, std::vector<domain::error_detail> details = {}) {
  blob_outcome o;
  o.error = domain::api_error{id, std::move(message), std::move(details)};
  return o;
}

blob_outcome upload_not_found() {
  return failure(error_id::upload_not_found, "No upload with this id was started by the caller in this tenant.");
}

/// The caller's upload: absent, or another principal's, reads as not found (no answer confirms
/// another's upload id).
std::optional<storage::upload_record> callers_upload(const blob_broker_config& cfg, const blob_caller& who,
                                                     const std::string& id) {
  auto u = storage::blobs(*cfg.store).upload(who.tenant, id);
  if (!u || u->uploader != who.sub) return std::nullopt;
  return u;
}

/// An upload in progress whose URLs have expired is as good as aborted: the sweep may take it
/// any moment, so it neither completes nor hands out more URLs.
bool expired(const storage::upload_record& u) {
  return u.state == "IN_PROGRESS" && u.expires_at <= domain::now_seconds();
}

blob_outcome not_in_progress(const storage::upload_record& u) {
  auto state = u.state == "COMPLETED" ? "completed" : (u.state == "ABORTED" ? "aborted" : "expired");
  return failure(error_id::upload_not_in_progress,
                 "The upload is " + std::string{state} + "; start a new upload (POST /v0/content-lake/blobs/uploads).");
}

json::array part_urls(const blob_broker_config& cfg, const storage::upload_record& u, int from, std::int64_t now,
                      std::int64_t& next) {
  auto layout = domain::layout_upload(u.size, cfg.limits);
  layout.part_size = u.part_size;  // as laid out when it started (settings may have changed since)
  layout.part_count = static_cast<int>((u.size + u.part_size - 1) / u.part_size);
  json::array parts;
  for (const auto& p : layout.parts(from, cfg.limits.parts_per_answer))
    parts.push_back(json::object{{"part_number", p.number},
                                 {"size", p.size},
                                 {"url", cfg.backend->presign_part(u.object_key, u.store_upload_id, p.number, p.size, now,
                                                                    u.expires_at - now)}});
  auto last = from + static_cast<int>(parts.size()) - 1;
  next = last < layout.part_count ? last + 1 : 0;
  return parts;
}

/// The answer describing an upload in progress, with URLs valid until `u.expires_at`.
json::object upload_json(const blob_broker_config& cfg, const storage::upload_record& u, int from, std::int64_t now) {
  json::object o{{"upload_id", u.id},
                 {"blob_id", u.blob_id},
                 {"state", u.state},
                 {"expires_at", domain::format_utc(u.expires_at)},
                 {"method", u.method},
                 {"size", u.size},
                 {"content_type", u.content_type}};
  if (u.method == "SINGLE") {
    o["url"] = cfg.backend->presign_put(u.object_key, u.size, now, u.expires_at - now);
    return o;
  }
  std::int64_t next = 0;
  o["part_size"] = u.part_size;
  o["part_count"] = (u.size + u.part_size - 1) / u.part_size;
  o["parts"] = part_urls(cfg, u, from, now, next);
  if (next) o["next_part"] = next;
  return o;
}

/// Until when the store must refuse an ended upload's URL: past the last moment any URL handed
/// out for it is valid (with the store's allowance for clocks that differ).
std::int64_t closed_until(const storage::upload_record& u) {
  return u.expires_at + 15 * 60;
}

/// Runs `job` on a detached worker and answers through `rp`.
///
/// The ask has no timeout. CAF 0.17 keeps a request's timeout in its clock until it fires, answered
/// or not, so a finite one long enough for a completion (which reads every byte of the object) held
/// one entry per blob call for that long: the soak's heap grew by about 1.5 MiB a minute. The worker
/// answers every job (it holds no promise, and `guarded` turns a store call's exceptions into an
/// answer), a dead worker is reported at once (request_receiver_down), and the HTTP request keeps its
/// own deadline; a store call that never returns keeps only its worker's thread and its waiters.
void on_worker(blob_broker_actor::stateful_pointer<blob_broker_state> self, std::function<blob_outcome()> job,
               std::function<void(blob_outcome)> k) {
  auto worker = self->spawn<caf::detached>(blob_worker);
  self->request(worker, caf::infinite, run_atom_v, blob_job{std::move(job)})
    .then([k](blob_outcome& o) { k(std::move(o)); },
          [k](caf::error& e) {
            spdlog::error("blob broker: a store call failed: {}", to_string(e));
            k(failure(error_id::backend_unavailable, "The object store did not answer; retry."));
          });
}

/// A store call's exceptions become an answer (a throwing handler would end the worker unanswered).
template <class F>
blob_outcome guarded(F f) {
  try {
    return f();
  } catch (const std::exception& e) {
    spdlog::error("blob broker: object store: {}", e.what());
    if (storage::disk_full(e))
      return failure(error_id::storage_full, "The object store has no room: nothing was stored; retry once "
                                             "an operator has made room.");
    return failure(error_id::backend_unavailable, "The object store failed; retry.");
  }
}

/// Closes an aborted upload's key at the store (its URLs are refused from then on) and releases
/// its parts or object; `k` gets the store's answer.
void release_at_store(blob_broker_actor::stateful_pointer<blob_broker_state> self,
                      const std::shared_ptr<const blob_broker_config>& cfg, const storage::upload_record& u,
                      std::function<void(blob_outcome)> k) {
  on_worker(
    self,
    [cfg, u] {
      return guarded([&] {
        cfg->backend->abort(u.object_key, u.store_upload_id, closed_until(u));
        return blob_outcome{};
      });
    },
    std::move(k));
}

/// The upload a request asks for, validated and laid out; the store is not called yet (a
/// MULTIPART upload still needs `open_at_store`).
blob_outcome start_upload(const blob_broker_config& cfg, const blob_caller& who, const domain::upload_request& r) {
  if (auto over = domain::over_limits(r, cfg.limits)) {
    blob_outcome o;
    o.error = std::move(*over);
    return o;
  }
  if (r.blob_id) {
    auto latest = storage::blobs(*cfg.store).version(who.tenant, *r.blob_id, 0);
    if (!latest)
      return failure(error_id::blob_not_found, "The blob has no version to follow; leave blob_id out for a new blob.",
                     {{"/blob_id", "no such blob in this tenant"}});
    if (latest->uploader != who.sub)
      return failure(error_id::access_denied, "Only the blob's uploader adds versions to it.",
                     {{"/blob_id", "uploaded by another principal"}});
  }
  auto now = domain::now_seconds();
  auto layout = domain::layout_upload(r.size, cfg.limits);
  blob_outcome o;
  auto& u = o.upload;
  u.tenant = who.tenant;
  u.id = domain::random_id("upl_");
  u.blob_id = r.blob_id ? *r.blob_id : domain::random_id("blb_");
  u.uploader = who.sub;
  u.client_id = who.client_id;
  u.method = layout.multipart ? "MULTIPART" : "SINGLE";
  // A SINGLE upload's URL names a key of its own under uploads/; its version gets another key at
  // completion (commit_single). A MULTIPART upload's parts name the version's key with the store's
  // upload id, which the store forgets when it assembles them.
  u.object_key = layout.multipart ? blob_object_key(u.tenant, u.blob_id, u.id)
                                  : "uploads/" + blob_object_key(u.tenant, u.blob_id, u.id);
  u.content_type = r.content_type;
  u.size = r.size;
  u.part_size = layout.part_size;
  u.expires_at = now + cfg.upload_url_ttl_seconds;
  if (!layout.multipart) o.body = json::serialize(upload_json(cfg, u, 1, now));
  return o;
}

/// A MULTIPART upload's store side (blocking: on a worker), then its answer.
blob_outcome open_at_store(const blob_broker_config& cfg, blob_outcome o) {
  auto& u = o.upload;
  u.store_upload_id = cfg.backend->create_multipart(u.object_key, u.content_type);
  o.body = json::serialize(upload_json(cfg, u, 1, domain::now_seconds()));
  return o;
}

blob_outcome fresh_parts(const blob_broker_config& cfg, storage::upload_record u, int from) {
  auto now = domain::now_seconds();
  u.expires_at = std::max(u.expires_at, now + cfg.upload_url_ttl_seconds);
  auto o = upload_json(cfg, u, from, now);
  if (u.method == "SINGLE") {
    auto stored = cfg.backend->check_single(u.object_key, {u.size, {}, 0});
    o["stored_size"] = stored.kind == storage::finish_result::nothing_uploaded
                         ? json::value(nullptr)
                         : json::value(stored.kind == storage::finish_result::size_mismatch ? stored.size : u.size);
  } else {
    // null: the store cannot tell (an S3-compatible service without ListParts).
    if (auto listed = cfg.backend->list_parts(u.object_key, u.store_upload_id)) {
      json::array stored;
      for (const auto& [n, info] : *listed) stored.push_back(json::object{{"part_number", n}, {"size", info.size}});
      o["stored_parts"] = std::move(stored);
    } else {
      o["stored_parts"] = nullptr;
    }
  }
  blob_outcome out;
  out.upload = std::move(u);
  out.body = json::serialize(o);
  return out;
}

blob_outcome finish(const blob_broker_config& cfg, const storage::upload_record& u, const std::string& sha256) {
  storage::expected_object expect{u.size, sha256, static_cast<int>((u.size + u.part_size - 1) / u.part_size),
                                  u.part_size};
  auto version_key = u.method == "SINGLE" ? blob_object_key(u.tenant, u.blob_id, u.id) : u.object_key;
  auto r = u.method == "SINGLE" ? cfg.backend->commit_single(u.object_key, version_key, expect, closed_until(u))
                                : cfg.backend->complete_multipart(u.object_key, u.store_upload_id, expect);
  auto refused = [&]() -> std::optional<blob_outcome> {
    switch (r.kind) {
      case storage::finish_result::nothing_uploaded:
        return failure(error_id::upload_incomplete, "The object store holds nothing for this upload yet.");
      case storage::finish_result::missing_parts: {
        std::vector<domain::error_detail> details;
        for (int n : r.missing) details.push_back({"part " + std::to_string(n), "not uploaded yet"});
        return failure(error_id::upload_incomplete,
                       details.empty() ? "Not every part of the upload is in the object store (it cannot say which)."
                                       : "Not every part of the upload is in the object store.",
                       std::move(details));
      }
      case storage::finish_result::size_mismatch:
        return failure(error_id::size_mismatch,
                       "The store holds " + std::to_string(r.size) + " bytes; " + std::to_string(u.size)
                         + " were declared. The upload stays in progress.",
                       {{"/size", "declared " + std::to_string(u.size)}});
      case storage::finish_result::checksum_mismatch:
        return failure(error_id::checksum_mismatch,
                       "The SHA-256 of the uploaded bytes differs from the declared one. The upload stays in progress.",
                       {{"/sha256", "does not match the uploaded bytes"}});
      case storage::finish_result::done: break;
    }
    return std::nullopt;
  }();
  if (refused) {
    // The upload goes on under a new store upload id (an S3 service that had assembled it).
    if (!r.store_upload_id.empty()) {
      refused->upload = u;
      refused->upload.store_upload_id = r.store_upload_id;
    }
    return *refused;
  }
  blob_outcome o;
  o.upload = u;
  auto& v = o.version;
  v.tenant = u.tenant;
  v.blob_id = u.blob_id;
  v.size = r.object.size;
  v.content_type = u.content_type;
  v.sha256 = r.object.sha256;
  v.created = domain::format_utc(domain::now_seconds());
  v.uploader = u.uploader;
  v.object_key = version_key;
  return o;
}

std::vector<blob_found> locate(const blob_broker_config& cfg, const blob_caller& who,
                               const std::vector<blob_lookup>& lookups) {
  std::vector<blob_found> out;
  out.reserve(lookups.size());
  auto now = domain::now_seconds();
  const auto& blobs = storage::blobs(*cfg.store);
  for (const auto& l : lookups) {
    blob_found f;
    auto latest = blobs.version(who.tenant, l.id, 0);
    if (latest) f.uploader = latest->uploader;
    auto v = (l.version == 0 || !latest) ? latest : blobs.version(who.tenant, l.id, l.version);
    if (v) {
      f.exists = true;
      f.version = *v;
      f.expires_at = now + cfg.download_url_ttl_seconds;
      f.url = cfg.backend->presign_get(v->object_key, v->content_type, now, cfg.download_url_ttl_seconds);
    }
    if (f.uploader != who.sub) {
      const auto& resources = cfg.store->resources();
      for (const auto& id : resources.referencing(who.tenant, l.id, {}, cfg.max_referencing)) {
        auto header = resources.header(who.tenant, id);
        if (header) f.referenced_by.emplace_back(id, header->work_id);
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::string blob_object_key(const std::string& tenant, const std::string& blob_id, const std::string& upload_id) {
  return tenant + "/" + blob_id + "/" + upload_id;
}

std::string blob_version_json(const storage::blob_version& v) {
  return json::serialize(json::object{{"id", v.blob_id},
                                      {"version", v.version},
                                      {"size", v.size},
                                      {"content_type", v.content_type},
                                      {"checksum", "sha256:" + v.sha256},
                                      {"created", v.created}});
}

storage::mutation abort_expired_uploads(std::int64_t now, std::size_t limit,
                                        std::shared_ptr<std::vector<storage::upload_record>> aborted) {
  return [now, limit, aborted](storage::write_txn& tx) {
    aborted->clear();
    for (auto u : storage::blobs(tx).expired_uploads(now, limit)) {
      u.state = "ABORTED";
      storage::blobs(tx).put_upload(u);
      aborted->push_back(std::move(u));
    }
    return true;
  };
}

blob_worker_actor::behavior_type blob_worker(blob_worker_actor::pointer self) {
  return {
    [self](run_atom, const blob_job& job) {
      auto o = job.run();
      self->quit();
      return o;
    },
  };
}

blob_broker_actor::behavior_type blob_broker(blob_broker_actor::stateful_pointer<blob_broker_state> self,
                                             std::shared_ptr<const blob_broker_config> cfg) {
  accept_fault_delays(self);
  self->delayed_send(self, cfg->sweep_interval, sweep_atom_v);
  return {
    [self, cfg](upload_atom, const blob_caller& who, const domain::upload_request& body) -> caf::result<blob_outcome> {
      // Validation, the blob lookup and a SINGLE upload's presigned URL are quick: here. Only a
      // MULTIPART upload calls the store (disk or HTTP): on a worker.
      auto o = guarded([&] { return start_upload(*cfg, who, body); });
      if (o.error || o.upload.method != "MULTIPART") return o;
      auto rp = self->make_response_promise<blob_outcome>();
      on_worker(
        self, [cfg, o] { return guarded([&] { return open_at_store(*cfg, o); }); },
        [rp](blob_outcome done) mutable { rp.deliver(std::move(done)); });
      return rp;
    },
    [self, cfg](parts_atom, const blob_caller& who, const std::string& id, std::int32_t from) -> caf::result<blob_outcome> {
      auto u = callers_upload(*cfg, who, id);
      if (!u) return upload_not_found();
      if (u->state != "IN_PROGRESS" || expired(*u)) return not_in_progress(*u);
      auto rp = self->make_response_promise<blob_outcome>();
      on_worker(
        self, [cfg, u = *u, from] { return guarded([&] { return fresh_parts(*cfg, u, from); }); },
        [rp](blob_outcome o) mutable { rp.deliver(std::move(o)); });
      return rp;
    },
    [self, cfg](complete_atom, const blob_caller& who, const std::string& id,
                const std::string& sha256) -> caf::result<blob_outcome> {
      auto u = callers_upload(*cfg, who, id);
      if (!u) return upload_not_found();
      if (u->state == "ABORTED" || expired(*u)) return not_in_progress(*u);
      if (u->state == "COMPLETED") {
        auto v = storage::blobs(*cfg->store).version(who.tenant, u->blob_id, u->version);
        if (!v) return failure(error_id::internal, "The completed upload's blob version is missing.");
        blob_outcome o;
        o.upload = *u;
        o.version = *v;
        o.recorded = true;
        return o;
      }
      auto rp = self->make_response_promise<blob_outcome>();
      auto& waiting = self->state.completing[id];
      waiting.push_back(rp);
      if (waiting.size() > 1) return rp;  // joins the completion already running
      on_worker(
        self, [cfg, u = *u, sha256] { return guarded([&] { return finish(*cfg, u, sha256); }); },
        [self, id](blob_outcome o) {
          auto promises = std::move(self->state.completing[id]);
          self->state.completing.erase(id);
          for (auto& p : promises) p.deliver(o);
        });
      return rp;
    },
    [self, cfg](abort_atom, const storage::upload_record& u) -> caf::result<blob_outcome> {
      auto rp = self->make_response_promise<blob_outcome>();
      release_at_store(self, cfg, u, [rp](blob_outcome o) mutable { rp.deliver(std::move(o)); });
      return rp;
    },
    [cfg](locate_atom, const blob_caller& who, const std::vector<blob_lookup>& lookups) -> caf::result<std::vector<blob_found>> {
      try {
        return locate(*cfg, who, lookups);
      } catch (const std::exception& e) {
        spdlog::error("blob broker: lookup failed: {}", e.what());
        return caf::make_error(backend_error::storage_failure, "blob lookup failed");
      }
    },
    [self, cfg](sweep_atom) {
      try {
        auto now = domain::now_seconds();
        auto writer = cfg->directory ? cfg->directory->snapshot()->get<writer_actor>() : writer_actor{};
        bool mine = !cfg->leases || cfg->leases->holds(storage::lease::upload_expiry);
        if (mine && writer && !storage::blobs(*cfg->store).expired_uploads(now, 1).empty()) {
          auto aborted = std::make_shared<std::vector<storage::upload_record>>();
          self->request(writer, std::chrono::seconds{30}, write_atom_v, abort_expired_uploads(now, 100, aborted))
            .then(
              [self, cfg, aborted](bool stored) {
                if (!stored) return;
                for (const auto& u : *aborted) {
                  spdlog::info("blob broker: upload {} expired; aborted", u.id);
                  release_at_store(self, cfg, u, [](blob_outcome) {});
                }
              },
              [](caf::error&) {});
        }
      } catch (const std::exception& e) {
        spdlog::error("blob broker: sweep failed: {}", e.what());
      }
      self->delayed_send(self, cfg->sweep_interval, sweep_atom_v);
    },
  };
}

}  // namespace cl::actors
