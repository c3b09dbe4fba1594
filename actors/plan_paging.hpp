#pragma once
/// List routes of route plans: a page of a typed query, its `page_size` and `page_token` (bound to
/// the tenant, the collection and its filters), and the answer `{"<collection>":[...],
/// "next_page_token":"..."}`.

#include "actors/plan_support.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cl::actors {

/// Turns stored records into the items a list shows (e.g. adds rights); calls `k` with the items,
/// or with nullopt when a collaborator failed (503). Runs in the coordinator.
using item_presenter =
  std::function<void(std::vector<std::string> records, std::function<void(std::optional<std::vector<std::string>>)> k)>;

/// Fetches up to `limit` list items after `after` through a typed query and calls `k` with the
/// page; answers 503 through the plan's `run` itself when the asked actor fails.
using page_fetch =
  std::function<void(const std::string& after, std::size_t limit, std::function<void(scan_result)> k)>;

/// Answers a list route whose pages come from a typed query (`fetch`): `page_size` and
/// `page_token` (bound to the tenant, `collection` and `filters`), as
/// `{"<collection>":[...],"next_page_token":"..."}`; the token is absent on the last page. A page
/// may hold fewer items than asked when filtering examined its budget.
void answer_query(const plan_run& run, const std::string& collection,
                  const std::vector<std::pair<std::string, std::string>>& filters, page_fetch fetch,
                  item_presenter present = nullptr, bool masks_items = false);

/// Pages of typed query `q` (its `after` and `limit` set per page) asked of `actor` (the reader,
/// or the contracts actor); a failure answers 503 naming `concern`.
template <class Handle, class Query>
page_fetch query_pages(const plan_run& run, Handle actor, const char* concern, Query q) {
  return
    [run, actor, concern, q](const std::string& after, std::size_t limit, std::function<void(scan_result)> k) mutable {
      q.after = after;
      q.limit = limit;
      ask(
        run, actor, concern, [k](scan_result& page) { k(std::move(page)); }, list_atom_v, q);
    };
}

}  // namespace cl::actors
