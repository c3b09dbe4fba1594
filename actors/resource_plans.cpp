#include "actors/plans.hpp"

#include <caf/all.hpp>

namespace cl::actors {

void plan_get_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  const auto& id = ctx->param("id");
  if (!ctx->actors->reader) return done(backend_unavailable("record reader"));
  self->request(ctx->actors->reader, ctx->timeout, fetch_atom_v, ctx->who.tenant_id, id)
    .then(
      [done, id](fetch_outcome& found) {
        if (!found.found) {
          auto shown = id.size() > 64 ? id.substr(0, 64) + "..." : id;
          return done(domain::api_reply::failure(domain::error_id::resource_not_found,
                                                 "No Resource " + shown + " exists in this tenant."));
        }
        domain::api_reply r;
        r.body = std::move(found.json);
        // The body depends on the token (tenant, rights), so shared caches must not keep it.
        r.headers.emplace_back("Cache-Control", "private, max-age=1");
        done(std::move(r));
      },
      [done](caf::error&) { done(backend_unavailable("record reader")); });
}

}  // namespace cl::actors
