// Plans of the blobs route group: uploads (start, fresh part URLs, complete, abort) and reads
// (one blob's 302, a batch of locations). See actors/blobs/blob_plans.hpp for the reading rule.

#include "actors/blobs/blob_plans.hpp"

#include "actors/blobs/blob_broker.hpp"
#include "actors/plan_access.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_write.hpp"
#include "actors/plan_support.hpp"
#include "domain/access.hpp"
#include "domain/layer3.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <charconv>

namespace cl::actors {

namespace json = boost::json;

namespace {

using domain::error_id;

blob_caller caller(const request_context& ctx) {
  return blob_caller{ctx.who.tenant_id, ctx.who.subject, ctx.who.client_id};
}

/// What stops a caller from reading a blob.
enum class verdict { allowed, no_grant, prohibited };

/// The Resource whose rights decided a blob read (the one that allowed it, or the last that
/// refused it): its rights travel with the answer.
struct decided_by {
  std::string resource;
  domain::resolved_rights rights;
};
using verdict_fn = std::function<void(verdict, std::shared_ptr<const decided_by>)>;

/// Decides whether the caller may read the blob `f` describes: its uploader may; anyone else needs
/// a Resource referencing it that they may read (layer 2) and whose rights allow `use` (layer 3).
/// References are tried in id order until one allows.
void authorize(const plan_run& run, std::shared_ptr<const blob_found> f, domain::content_use use, verdict_fn k) {
  if (!f->uploader.empty() && f->uploader == run->who.subject) return k(verdict::allowed, nullptr);
  struct walk {
    std::size_t next = 0;
    bool some_grant = false;
    std::shared_ptr<const decided_by> refused;
    std::function<void()> step;
  };
  auto w = std::make_shared<walk>();
  // The step holds its walk weakly (no cycle); the pending continuations hold it strongly.
  w->step = [run, f, use, k, weak = std::weak_ptr<walk>{w}] {
    auto w = weak.lock();
    if (!w) return;
    if (w->next == f->referenced_by.size())
      return k(w->some_grant ? verdict::prohibited : verdict::no_grant, w->refused);
    const auto& [resource, work] = f->referenced_by[w->next++];
    with_role(run, resource, [run, resource = resource, work = work, use, k, w](domain::access_role held) {
      if (held < domain::access_role::reader) return w->step();
      w->some_grant = true;
      with_rights(run, work, [resource, use, k, w](const domain::resolved_rights& rights) {
        auto decided = std::make_shared<const decided_by>(decided_by{resource, rights});
        if (!domain::refuse_content(rights, use, true)) return k(verdict::allowed, decided);
        w->refused = std::move(decided);
        w->step();
      });
    });
  };
  w->step();
}

json::object location_json(const blob_found& f) {
  return json::object{{"id", f.version.blob_id},
                      {"version", f.version.version},
                      {"url", f.url},
                      {"size", f.version.size},
                      {"content_type", f.version.content_type},
                      {"checksum", "sha256:" + f.version.sha256},
                      {"expires_at", domain::format_utc(f.expires_at)}};
}

/// The SHA-256 a completion declares: 64 hex digits, answered in lower case.
std::optional<std::string> declared_sha256(const json::object& body) {
  auto* v = body.if_contains("sha256");
  if (!v || !v->is_string() || v->as_string().size() != 64) return std::nullopt;
  std::string hex{v->as_string()};
  for (auto& c : hex) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  return hex;
}

/// Asks the broker about an upload; its refusal is the answer, otherwise `k` gets the outcome.
template <class K, class... Args>
void ask_broker(const plan_run& run, K k, Args&&... args) {
  ask(
    run, run->actors->get<blob_broker_actor>(), "blob broker",
    [run, k = std::move(k)](blob_outcome& o) {
      if (o.error) return run.answer(domain::api_reply::from(std::move(*o.error)));
      k(o);
    },
    std::forward<Args>(args)...);
}

/// Asks the broker what exists of `lookups` for a read, with the request's declared use (layer 3);
/// a malformed `X-Usage-Purpose` is answered here.
void locate(const plan_run& run, std::vector<blob_lookup> lookups,
            std::function<void(std::vector<blob_found>&, const domain::content_use&)> k) {
  auto parsed = request_use(*run);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  ask(
    run, run->actors->get<blob_broker_actor>(), "blob broker",
    [k = std::move(k), use = std::get<domain::content_use>(parsed)](std::vector<blob_found>& found) { k(found, use); },
    locate_atom_v, caller(*run), std::move(lookups));
}

/// An answer holding presigned URLs: never stored by a cache.
domain::api_reply uncacheable(int status, std::string body) {
  auto r = json_reply(status, std::move(body));
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace

void plan_start_upload(const plan_run& run) {
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto request = domain::parse_upload_request(std::get<boost::json::object>(parsed));
  if (auto* e = std::get_if<domain::api_error>(&request)) return run.answer(domain::api_reply::from(std::move(*e)));
  ask_broker(
    run,
    [run](blob_outcome& o) {
      auto outcome = std::make_shared<write_outcome>();
      storage::mutation m = [u = o.upload, body = o.body, outcome](storage::write_txn& tx) {
        storage::blobs(tx).put_upload(u);
        outcome->reply = uncacheable(201, body);
        return true;
      };
      write_then(run, std::move(m), outcome, "The upload");
    },
    upload_atom_v, caller(*run), std::get<domain::upload_request>(request));
}

void plan_upload_parts(const plan_run& run) {
  std::int64_t from = 1;
  if (auto raw = query_param(run->request.query, "from"); !raw.empty()) {
    auto n = positive(raw);
    if (!n || *n > 10000) return run.answer(invalid_field("from", "must be a part number, 1 to 10000"));
    from = *n;
  }
  ask_broker(
    run,
    [run](blob_outcome& o) {
      // The fresh URLs live until the new expiry: the sweep must not abort the upload before.
      auto outcome = std::make_shared<write_outcome>();
      storage::mutation m = [u = o.upload, body = o.body, outcome](storage::write_txn& tx) {
        auto stored = storage::blobs(tx).upload(u.tenant, u.id);
        if (!stored || stored->state != "IN_PROGRESS") {
          outcome->refusal = domain::api_error{error_id::upload_not_in_progress, "The upload ended meanwhile.", {}};
          return false;
        }
        if (stored->expires_at < u.expires_at) {
          stored->expires_at = u.expires_at;
          storage::blobs(tx).put_upload(*stored);
        }
        outcome->reply = uncacheable(200, body);
        return true;
      };
      write_then(run, std::move(m), outcome, "The upload");
    },
    parts_atom_v, caller(*run), run->param("uploadId"), static_cast<std::int32_t>(from));
}

void plan_complete_upload(const plan_run& run) {
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto& body = std::get<json::object>(parsed);
  if (auto r = unknown_members(body, {"sha256"})) return run.answer(std::move(*r));
  auto sha256 = declared_sha256(body);
  if (!sha256)
    return run.answer(invalid_field("/sha256", "must be the SHA-256 of the whole blob, 64 hexadecimal digits"));
  ask(
    run, run->actors->get<blob_broker_actor>(), "blob broker",
    [run](blob_outcome& o) {
      if (o.error && !o.upload.id.empty()) {
        // Refused, and the store now keeps the upload under a new id: record it, then refuse.
        auto outcome = std::make_shared<write_outcome>();
        storage::mutation m = [u = o.upload, e = *o.error, outcome](storage::write_txn& tx) {
          auto stored = storage::blobs(tx).upload(u.tenant, u.id);
          if (stored && stored->state == "IN_PROGRESS") {
            stored->store_upload_id = u.store_upload_id;
            storage::blobs(tx).put_upload(*stored);
          }
          outcome->reply = domain::api_reply::from(e);
          return true;
        };
        return write_then(run, std::move(m), outcome, "The upload");
      }
      if (o.error) return run.answer(domain::api_reply::from(std::move(*o.error)));
      if (o.recorded) return run.answer(json_reply(201, blob_version_json(o.version)));
      auto outcome = std::make_shared<write_outcome>();
      storage::mutation m = [u = o.upload, v = o.version, outcome](storage::write_txn& tx) {
        auto stored = storage::blobs(tx).upload(u.tenant, u.id);
        if (!stored || stored->state == "ABORTED") {
          outcome->refusal = domain::api_error{error_id::upload_not_in_progress, "The upload was aborted meanwhile.", {}};
          return false;
        }
        if (stored->state == "COMPLETED") {  // a concurrent completion recorded it first
          auto recorded = storage::blobs(tx).version(u.tenant, u.blob_id, stored->version);
          if (!recorded) return false;
          outcome->reply = json_reply(201, blob_version_json(*recorded));
          return true;
        }
        auto version = v;
        auto latest = storage::blobs(tx).version(u.tenant, u.blob_id, 0);
        version.version = latest ? latest->version + 1 : 1;
        storage::blobs(tx).add_version(version);
        stored->state = "COMPLETED";
        stored->version = version.version;
        storage::blobs(tx).put_upload(*stored);
        log_change(tx, u.tenant, storage::change_op::created, storage::change_kind::blob, u.blob_id);
        outcome->reply = json_reply(201, blob_version_json(version));
        return true;
      };
      write_then(run, std::move(m), outcome, "The blob version");
    },
    complete_atom_v, caller(*run), run->param("uploadId"), *sha256);
}

void plan_abort_upload(const plan_run& run) {
  auto outcome = std::make_shared<write_outcome>();
  auto released = std::make_shared<std::optional<storage::upload_record>>();
  storage::mutation m = [who = run->who, id = run->param("uploadId"), outcome, released](storage::write_txn& tx) {
    released->reset();
    auto u = storage::blobs(tx).upload(who.tenant_id, id);
    if (!u || u->uploader != who.subject) {
      outcome->refusal =
        domain::api_error{error_id::upload_not_found, "No upload with this id was started by the caller in this tenant.", {}};
      return false;
    }
    if (u->state == "COMPLETED") {
      outcome->refusal =
        domain::api_error{error_id::upload_not_in_progress, "The upload is completed: its blob version is immutable.", {}};
      return false;
    }
    if (u->state == "IN_PROGRESS") {
      u->state = "ABORTED";
      storage::blobs(tx).put_upload(*u);
    }
    *released = *u;  // closed at the store again on a repeated abort: the first may have failed there
    domain::api_reply r;
    r.status = 204;
    r.content_type.clear();
    outcome->reply = std::move(r);
    return true;
  };
  // The record says aborted first; then the store closes the upload's key and releases the
  // bytes, and only then is the 204 answered: a PUT after it is refused. A completion racing with
  // this one finds the upload aborted and records nothing. A store that fails: 503, and the
  // client's retry closes it (the record is aborted already).
  auto close_then_answer = [run, released](domain::api_reply r) {
    auto broker = run->actors->get<blob_broker_actor>();
    if (r.error || !*released) return run.answer(std::move(r));
    if (!broker) return run.answer(backend_unavailable("blob broker", backend_error::gone));
    run.self()
      ->request(broker, run->timeout, abort_atom_v, **released)
      .then(
        [run, r](blob_outcome& o) mutable {
          if (o.error) return run.answer(domain::api_reply::from(std::move(*o.error)));
          run.answer(std::move(r));
        },
        [run](caf::error& e) { run.answer(backend_unavailable("blob broker", classify(e))); });
  };
  write_then(run.answering(close_then_answer), std::move(m), outcome, "The upload");
}

void with_readable_blobs(const plan_run& run, std::vector<domain::blob_reference> refs, std::function<void()> k) {
  if (refs.empty()) return k();
  std::vector<blob_lookup> lookups;
  for (const auto& r : refs) lookups.push_back({r.blob_id, 0});
  ask(
    run, run->actors->get<blob_broker_actor>(), "blob broker",
    [run, refs = std::move(refs), k = std::move(k)](std::vector<blob_found>& found) {
      if (found.size() != refs.size()) return run.answer(backend_unavailable("blob broker", backend_error::other));
      // Each reference is authorised on its own (in parallel); the first refused, in document
      // order, is named.
      struct join {
        std::vector<bool> allowed;
        std::size_t pending = 0;
        bool answered = false;
      };
      auto j = std::make_shared<join>();
      j->allowed.assign(refs.size(), false);
      j->pending = refs.size();
      auto finish = [run, j, refs, k] {
        j->answered = true;
        for (std::size_t i = 0; i < refs.size(); ++i)
          if (!j->allowed[i])
            return run.answer(domain::api_reply::from(domain::to_api_error(
              {"PCF011", refs[i].pointer, "the image's blob does not exist or the writer may not read it"})));
        k();
      };
      reply_fn once = [run, j](domain::api_reply r) {
        if (j->answered) return;
        j->answered = true;
        run.answer(std::move(r));
      };
      auto plain_read = domain::content_use{};
      for (std::size_t i = 0; i < found.size(); ++i) {
        auto f = std::make_shared<const blob_found>(std::move(found[i]));
        if (!f->exists) {
          if (--j->pending == 0 && !j->answered) finish();
          continue;
        }
        authorize(run.answering(once), f, plain_read,
                  [j, i, finish](verdict v, const std::shared_ptr<const decided_by>&) {
                    j->allowed[i] = v == verdict::allowed;
                    if (--j->pending == 0 && !j->answered) finish();
                  });
      }
    },
    locate_atom_v, caller(*run), std::move(lookups));
}

void plan_get_blob(const plan_run& run) {
  std::int64_t version = 0;
  if (auto raw = query_param(run->request.query, "version"); !raw.empty()) {
    auto n = positive(raw);
    if (!n) return run.answer(invalid_field("version", "must be a version number, 1 or more"));
    version = *n;
  }
  locate(run, {{run->param("id"), version}}, [run](std::vector<blob_found>& found, const domain::content_use& use) {
    if (found.size() != 1) return run.answer(backend_unavailable("blob broker", backend_error::other));
    auto f = std::make_shared<const blob_found>(std::move(found.front()));
    authorize(run, f, use, [run, f](verdict v, const std::shared_ptr<const decided_by>& by) {
      if (v == verdict::no_grant)
        return run.answer(domain::api_reply::failure(
          error_id::access_denied,
          "The caller did not upload this blob and may read no Resource that references it (or it does not exist)."));
      if (v == verdict::prohibited) {
        auto refused = domain::api_reply::failure(
          error_id::usage_prohibited,
          "The rights of every Resource the caller may read that references this blob refuse this use of its content.");
        if (by) travel_headers(refused, by->rights, by->resource);
        return run.answer(std::move(refused));
      }
      if (!f->exists) return run.answer(domain::api_reply::failure(error_id::blob_not_found));
      domain::api_reply r;
      if (by) travel_headers(r, by->rights, by->resource);
      r.status = 302;
      r.content_type.clear();
      r.headers.emplace_back("Location", f->url);
      r.headers.emplace_back("Cache-Control", "private, no-store");
      run.answer(std::move(r));
    });
  });
}

void plan_blob_locations(const plan_run& run) {
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto& body = std::get<json::object>(parsed);
  if (auto r = unknown_members(body, {"blobs"})) return run.answer(std::move(*r));
  auto* refs = body.if_contains("blobs");
  if (!refs || !refs->is_array()) return run.answer(invalid_field("/blobs", "must be an array of blob references"));
  const auto& list = refs->as_array();
  constexpr std::size_t max_refs = 100;
  if (list.size() > max_refs)
    return run.answer(domain::api_reply::failure(error_id::limit_exceeded, "At most 100 blob references per request.",
                                                 {{"/blobs", "at most 100 entries"}}));
  std::vector<blob_lookup> lookups;
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto at = "/blobs/" + std::to_string(i);
    if (!list[i].is_object()) return run.answer(invalid_field(at, "must be an object {\"id\", \"version\"?}"));
    const auto& ref = list[i].as_object();
    if (auto r = unknown_members(ref, {"id", "version"})) return run.answer(std::move(*r));
    auto* id = ref.if_contains("id");
    if (!id || !id->is_string() || id->as_string().empty() || id->as_string().size() > 128)
      return run.answer(invalid_field(at + "/id", "must be a blob id"));
    blob_lookup l{std::string{id->as_string()}, 0};
    if (auto* v = ref.if_contains("version")) {
      if (!v->is_int64() || v->as_int64() < 1)
        return run.answer(invalid_field(at + "/version", "must be a version number, 1 or more"));
      l.version = v->as_int64();
    }
    lookups.push_back(std::move(l));
  }
  locate(run, std::move(lookups), [run](std::vector<blob_found>& found, const domain::content_use& use) {
    // Each reference is authorised on its own (in parallel); the answer keeps the request's order.
    struct join {
      std::vector<std::shared_ptr<const blob_found>> found;
      std::vector<bool> allowed;
      std::size_t pending = 0;
      bool answered = false;
    };
    auto j = std::make_shared<join>();
    for (auto& f : found) j->found.push_back(std::make_shared<const blob_found>(std::move(f)));
    j->allowed.assign(j->found.size(), false);
    j->pending = j->found.size();
    auto finish = [run, j] {
      j->answered = true;
      json::array out;
      for (std::size_t i = 0; i < j->found.size(); ++i)
        if (j->allowed[i] && j->found[i]->exists) out.push_back(location_json(*j->found[i]));
      auto r = json_reply(200, json::serialize(json::object{{"locations", std::move(out)}}));
      r.headers.emplace_back("Cache-Control", "private, no-store");
      run.answer(std::move(r));
    };
    if (j->pending == 0) return finish();
    // A failure of a collaborator answers once (503); later answers are dropped.
    reply_fn once = [run, j](domain::api_reply r) {
      if (j->answered) return;
      j->answered = true;
      run.answer(std::move(r));
    };
    for (std::size_t i = 0; i < j->found.size(); ++i) {
      if (!j->found[i]->exists) {  // nothing to show whoever asks
        if (--j->pending == 0 && !j->answered) finish();
        continue;
      }
      authorize(run.answering(once), j->found[i], use,
                [j, i, finish](verdict v, const std::shared_ptr<const decided_by>&) {
                  j->allowed[i] = v == verdict::allowed;
                  if (--j->pending == 0 && !j->answered) finish();
                });
    }
  });
}

}  // namespace cl::actors
