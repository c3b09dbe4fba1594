#include "actors/plan_paging.hpp"
#include "domain/change_cursor.hpp"
#include "actors/plan_body.hpp"

#include "domain/json_text.hpp"
#include "domain/page_token.hpp"

namespace cl::actors {

namespace {

/// The page asked for: its size and the position after which it starts (from `page_token`,
/// bound to the tenant and the list's filters), or the refusal of a bad size or token.
struct list_window {
  std::size_t page_size = 50;
  std::string after;
  std::string binding;
};

std::variant<list_window, domain::api_reply> window_of(const request_context& ctx, const std::string& collection,
                                                       const std::vector<std::pair<std::string, std::string>>& filters,
                                                       bool masks_items) {
  list_window w;
  // A list whose items are Resources masks each (its route parsed `fields`); the others answer
  // whole items (or their summaries).
  if (!masks_items && !query_param(ctx.request.query, "fields").empty())
    return domain::api_reply::failure(domain::error_id::invalid_argument,
                                      "fields is not supported on lists: read one item with fields for a masked answer.",
                                      {{"fields", "not supported on list routes"}});
  auto size = domain::page_size_from(query_param(ctx.request.query, "page_size"));
  if (auto* e = std::get_if<domain::api_error>(&size)) return domain::api_reply::from(std::move(*e));
  w.page_size = std::get<std::size_t>(size);
  w.binding = collection + "?" + domain::canonical_query(filters);
  if (auto token = query_param(ctx.request.query, "page_token"); !token.empty()) {
    auto opened = ctx.page_tokens->open(token, ctx.who.tenant_id, w.binding);
    if (auto* e = std::get_if<domain::api_error>(&opened)) return domain::api_reply::from(std::move(*e));
    w.after = std::get<std::string>(opened);
  }
  return w;
}

/// Answers `page` (asked with the window's size + 1): `{"<collection>":[...],"next_page_token"}`,
/// the token absent on the last page; items through `present` when set.
void answer_page(const plan_run& run, const list_window& w, const std::string& collection, scan_result page,
                 const item_presenter& present) {
  std::string resume;
  if (page.entries.size() > w.page_size) {
    page.entries.resize(w.page_size);
    resume = page.entries.back().first;
  } else if (!page.exhausted && !page.resume_after.empty()) {
    resume = page.resume_after;  // the filter's budget ran out before the page filled
  }
  std::string next;
  if (!resume.empty()) next = run->page_tokens->issue({run->who.tenant_id, w.binding, resume});
  // Where the change feed stood before this page was read: following it from here misses nothing.
  std::string changes;
  if (run->feed_cursors)
    changes = run->feed_cursors->seal({run->who.tenant_id, domain::feed_binding_any(), page.log_position});
  std::vector<std::string> records;
  records.reserve(page.entries.size());
  for (auto& entry : page.entries) records.push_back(std::move(entry.second));
  auto render = [run, collection, next, changes](std::optional<std::vector<std::string>> items) {
    if (!items) return run.answer(backend_unavailable("rights resolver", backend_error::other));
    std::string body = "{" + domain::json_string(collection) + ":[";
    for (std::size_t i = 0; i < items->size(); ++i) body += (i ? "," : "") + (*items)[i];
    body += "]";
    if (!next.empty()) body += ",\"next_page_token\":" + domain::json_string(next);
    if (!changes.empty()) body += ",\"changes_cursor\":" + domain::json_string(changes);
    body += "}";
    auto r = json_reply(200, std::move(body));
    private_for_a_second(r);
    run.answer(std::move(r));
  };
  if (present) return present(std::move(records), render);
  render(std::move(records));
}

}  // namespace

void answer_query(const plan_run& run, const std::string& collection,
                  const std::vector<std::pair<std::string, std::string>>& filters, page_fetch fetch,
                  item_presenter present, bool masks_items) {
  auto window = window_of(*run, collection, filters, masks_items);
  if (auto* refusal = std::get_if<domain::api_reply>(&window)) return run.answer(std::move(*refusal));
  auto w = std::get<list_window>(std::move(window));
  // Tokens issued before lists were index-driven held a table key (tenant NUL id): the id goes on.
  if (auto nul = w.after.find('\0'); nul != std::string::npos) w.after = w.after.substr(nul + 1);
  fetch(w.after, w.page_size + 1,
        [run, w, collection, present](scan_result page) { answer_page(run, w, collection, std::move(page), present); });
}

}  // namespace cl::actors
