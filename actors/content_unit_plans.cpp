// Content units: GET /content-units, GET /content-units/{id}.

#include "actors/access.hpp"
#include "actors/plan_access.hpp"
#include "actors/plan_body.hpp"
#include "domain/change_cursor.hpp"
#include "actors/plan_support.hpp"
#include "actors/resource_stitch.hpp"
#include "actors/plans.hpp"
#include "actors/resource_support.hpp"
#include "domain/field_mask.hpp"
#include "domain/base64url.hpp"
#include "domain/content_format.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/layer3.hpp"
#include "domain/negotiation.hpp"
#include "domain/page_token.hpp"
#include "domain/records.hpp"
#include "domain/resource.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <map>

namespace cl::actors {

namespace json = boost::json;

namespace {

/// A content unit id: `cu_` + base64url(resource id, '/', block key). Opaque to clients; it
/// leads back to its Resource, so units need no table of their own.
std::string unit_id(const std::string& resource_id, std::string_view block_key) {
  return "cu_" + domain::base64url_encode(resource_id + "/" + std::string{block_key});
}

std::optional<std::pair<std::string, std::string>> parse_unit_id(const std::string& id) {
  if (id.rfind("cu_", 0) != 0) return std::nullopt;
  auto raw = domain::base64url_decode(std::string_view{id}.substr(3));
  if (!raw) return std::nullopt;
  auto slash = raw->find('/');
  if (slash == std::string::npos || raw->rfind("res_", 0) != 0) return std::nullopt;
  return std::make_pair(raw->substr(0, slash), raw->substr(slash + 1));
}

std::string unit_json(const std::string& resource_id, const json::object& record, const json::value& block,
                      std::size_t position) {
  const auto& b = block.as_object();
  json::object unit{{"id", unit_id(resource_id, b.at("key").as_string())},
                    {"resource_id", resource_id},
                    {"version", record.at("version")},
                    {"block_key", b.at("key")},
                    {"position", position},
                    {"type", b.at("type")},
                    {"block", block}};
  return json::serialize(unit);
}

}  // namespace

void plan_list_content_units(const plan_run& run) {
  auto resource_id = query_param(run->request.query, "resource_id");
  if (resource_id.empty())
    return run.answer(domain::api_reply::failure(
      domain::error_id::invalid_argument, "Name the Resource whose units to list.", {{"resource_id", "is required"}}));
  auto size = domain::page_size_from(query_param(run->request.query, "page_size"));
  if (auto* e = std::get_if<domain::api_error>(&size)) return run.answer(domain::api_reply::from(std::move(*e)));
  auto page_size = std::get<std::size_t>(size);
  auto binding = "content-units?" + domain::canonical_query({{"resource_id", resource_id}});
  std::size_t start = 0;
  if (auto token = query_param(run->request.query, "page_token"); !token.empty()) {
    auto opened = run->page_tokens->open(token, run->who.tenant_id, binding);
    if (auto* e = std::get_if<domain::api_error>(&opened)) return run.answer(domain::api_reply::from(std::move(*e)));
    start = std::stoul(std::get<std::string>(opened));
  }
  with_granted_resource_at(
    run, resource_id, domain::access_role::reader, domain::error_id::resource_not_found,
    [run, resource_id, page_size, binding, start](std::shared_ptr<std::string> stored, std::uint64_t at) {
      with_content_use(
        run, resource_id, storage::fields_of(*stored).work_id,
        [run, resource_id, page_size, binding, start, stored, at](const domain::resolved_rights& rights) {
          auto record = json::parse(*stored).as_object();
          const auto& blocks = record.at("content").as_object().at("blocks").as_array();
          std::string body = "{\"content_units\":[";
          std::size_t end = std::min(blocks.size(), start + page_size);
          for (std::size_t i = start; i < end; ++i)
            body += (i > start ? "," : "") + unit_json(resource_id, record, blocks[i], i);
          body += "]";
          if (end < blocks.size())
            body += ",\"next_page_token\":"
                    + domain::json_string(run->page_tokens->issue({run->who.tenant_id, binding, std::to_string(end)}));
          if (run->feed_cursors)
            body
              += ",\"changes_cursor\":"
                 + domain::json_string(run->feed_cursors->seal({run->who.tenant_id, domain::feed_binding_any(), at}));
          body += "}";
          auto r = json_reply(200, std::move(body));
          private_for_a_second(r);
          travel_headers(r, rights, resource_id);
          run.answer(std::move(r));
        });
    });
}

void plan_get_content_unit(const plan_run& run) {
  const auto& id = run->param("id");
  auto parts = parse_unit_id(id);
  if (!parts)
    return run.answer(domain::api_reply::failure(domain::error_id::content_unit_not_found, "No such content unit."));
  // Named copies, not a structured binding: lambdas capture them (clang before 16 refuses bindings).
  std::string resource_id = parts->first, key = parts->second;
  with_granted_resource(run, resource_id, domain::access_role::reader, domain::error_id::content_unit_not_found,
                        [run, resource_id, key](std::shared_ptr<std::string> stored) {
                          with_content_use(
                            run, resource_id, storage::fields_of(*stored).work_id,
                            [run, resource_id, key, stored](const domain::resolved_rights& rights) {
                              auto record = json::parse(*stored).as_object();
                              const auto& blocks = record.at("content").as_object().at("blocks").as_array();
                              for (std::size_t i = 0; i < blocks.size(); ++i)
                                if (blocks[i].as_object().at("key").as_string() == key) {
                                  auto r = json_reply(200, unit_json(resource_id, record, blocks[i], i));
                                  private_for_a_second(r);
                                  travel_headers(r, rights, resource_id);
                                  return run.answer(std::move(r));
                                }
                              run.answer(domain::api_reply::failure(domain::error_id::content_unit_not_found,
                                                                    "The Resource no longer has this block."));
                            });
                        });
}

}  // namespace cl::actors
