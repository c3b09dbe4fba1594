// The change feed end to end (issue 29, part 1): polls from now and from a cursor, thin events in
// order with the version and hash the write answered, layer 2 at delivery (appeared, disappeared,
// nothing of what the caller cannot read), types, bookmarks past other changes, cursor errors.

#include "app/groups.hpp"
#include "config/settings.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/json_response.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <future>
#include <set>
#include <regex>

using namespace cl::testing;
namespace json = boost::json;

namespace {

const std::string rw = "content-lake.read content-lake.write";

struct feed {
  test_service svc;
  std::string alice = token_with(rw, "t_test", "u_alice");
  std::string bob = token_with(rw, "t_test", "u_bob");
  std::string eve = token_with(rw, "t_other", "u_eve");

  explicit feed(const std::function<void(cl::config::settings&)>& tweak = {}) : svc(tweak) {}

  std::optional<http_response> poll(const std::string& token, const std::string& query) {
    return get_with_token(svc.port(), "/v0/content-lake/changes" + query, token);
  }

  /// A poll that must succeed: its events and its next cursor.
  std::pair<json::array, std::string> events(const std::string& token, const std::string& query) {
    auto r = poll(token, query);
    REQUIRE(r);
    INFO(r->body);
    REQUIRE(r->status == 200);
    auto o = json_object_of(r);
    return {o.at("events").as_array(), std::string{o.at("next_cursor").as_string()}};
  }

  std::string now(const std::string& token, const std::string& types = "") {
    auto [events, cursor] = this->events(token, types.empty() ? "" : "?types=" + types);
    CHECK(events.empty());
    return cursor;
  }

  json::object create(const std::string& title) {
    auto r = post_json(svc.port(), "/v0/content-lake/resources", alice,
                       R"({"title":")" + title + R"(","type":"CHAPTER","language":"en","content":{"format":"cl.content/1",)"
                         R"("blocks":[{"type":"paragraph","key":"p1","children":[{"type":"span","text":"Tides"}]}]}})");
    REQUIRE(r);
    REQUIRE(r->status == 201);
    return json_object_of(r);
  }

  std::optional<http_response> grant(const std::string& id, const std::string& principal, const std::string& role) {
    return http_request(svc.port(), "PUT", "/v0/content-lake/resources/" + id + "/access/" + principal,
                        {{"Authorization", "Bearer " + alice}, {"Content-Type", "application/json"}},
                        R"({"role":")" + role + "\"}");
  }

  std::optional<http_response> revoke(const std::string& id, const std::string& principal) {
    return http_request(svc.port(), "DELETE", "/v0/content-lake/resources/" + id + "/access/" + principal,
                        {{"Authorization", "Bearer " + alice}});
  }

  json::object patch_title(const std::string& id, const std::string& title) {
    auto current = json_object_of(get_with_token(svc.port(), "/v0/content-lake/resources/" + id, alice));
    auto r = http_request(svc.port(), "PATCH", "/v0/content-lake/resources/" + id,
                          {{"Authorization", "Bearer " + alice}, {"Content-Type", "application/merge-patch+json"}},
                          R"({"title":")" + title + R"(","update_token":")"
                            + std::string{current.at("update_token").as_string()} + "\"}");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    return json_object_of(r);
  }
};

std::string text(const json::value& v, const char* member) {
  return std::string{v.as_object().at(member).as_string()};
}

std::string reason_of(const std::optional<http_response>& r) {
  return std::string{json_object_of(r).at("error").as_object().at("reason").as_string()};
}

}  // namespace

TEST_CASE("a poll without since starts from now; a cursor follows every change once, in order", "[changes]") {
  feed f;
  auto cursor = f.now(f.alice);
  auto created = f.create("Ebb");
  auto id = std::string{created.at("id").as_string()};
  auto patched = f.patch_title(id, "Flood");
  auto [events, next] = f.events(f.alice, "?since=" + cursor);
  REQUIRE(events.size() == 2);
  CHECK(text(events[0], "type") == "resource.created");
  CHECK(text(events[0], "resource_id") == id);
  CHECK(text(events[0], "version") == std::string{created.at("version").as_string()});
  CHECK(text(events[0], "hash") == std::string{created.at("hash").as_string()});
  CHECK(text(events[1], "type") == "resource.updated");
  CHECK(text(events[1], "hash") == std::string{patched.at("hash").as_string()});
  CHECK(std::regex_match(text(events[0], "id"), std::regex{"evt_[0-9a-f]{24}"}));
  CHECK(std::regex_match(text(events[0], "transaction"), std::regex{"txn_[0-9a-f]{24}"}));
  CHECK(text(events[0], "id") != text(events[1], "id"));
  CHECK(std::regex_match(text(events[0], "occurred_at"), std::regex{R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"}));
  // Thin: no title, no content.
  CHECK_FALSE(events[0].as_object().contains("title"));
  CHECK_FALSE(events[0].as_object().contains("content"));
  // The same events again from the same cursor (same ids), none from the next.
  auto [again, next_again] = f.events(f.alice, "?since=" + cursor);
  CHECK(again == events);
  auto [after, cursor3] = f.events(f.alice, "?since=" + next);
  CHECK(after.empty());
  // One at a time: the same events, in order, each once.
  std::vector<std::string> ids;
  auto at = cursor;
  for (int i = 0; i < 4; ++i) {
    auto [page, more] = f.events(f.alice, "?page_size=1&since=" + at);
    for (const auto& e : page) ids.push_back(text(e, "id"));
    at = more;
  }
  CHECK(ids == std::vector<std::string>{text(events[0], "id"), text(events[1], "id")});
}

TEST_CASE("layer 2 at delivery: a reader sees a Resource appear, change and disappear, nothing else", "[changes]") {
  feed f;
  auto bob_cursor = f.now(f.bob);
  auto id = std::string{f.create("Ebb").at("id").as_string()};
  f.patch_title(id, "Before the grant");
  REQUIRE(f.grant(id, "u_bob", "reader")->status == 201);
  f.patch_title(id, "While granted");
  REQUIRE(f.revoke(id, "u_bob")->status == 204);
  f.patch_title(id, "After the revocation");
  auto [events, next] = f.events(f.bob, "?since=" + bob_cursor);
  std::vector<std::string> types;
  for (const auto& e : events) types.push_back(text(e, "type"));
  // Delivered now: bob no longer reads the Resource, so of its changes he gets only that it left.
  CHECK(types == std::vector<std::string>{"resource.disappeared"});
  // Granted again: what he may read now, he sees (the changes made before, too: visibility is now).
  REQUIRE(f.grant(id, "u_bob", "reader")->status == 201);
  auto [now_visible, ignored] = f.events(f.bob, "?since=" + bob_cursor);
  types.clear();
  for (const auto& e : now_visible) types.push_back(text(e, "type"));
  CHECK(types == std::vector<std::string>{"resource.created", "resource.updated", "resource.appeared", "resource.updated",
                                          "resource.updated", "resource.appeared"});
  // Another tenant sees none of it, and its cursor moves on past it.
  auto eve_cursor = f.now(f.eve);
  f.patch_title(id, "Later");
  auto [eves, eve_next] = f.events(f.eve, "?since=" + eve_cursor);
  CHECK(eves.empty());
  CHECK(eve_next != eve_cursor);
}

TEST_CASE("types filter the feed; a poll moves on through changes that are not the caller's", "[changes]") {
  feed f{[](cl::config::settings& s) { set_option(s, "changes.scan_limit", "5"); }};
  auto updates = f.now(f.alice, "resource.updated");
  auto bob_cursor = f.now(f.bob);
  std::vector<std::string> ids;
  for (int i = 0; i < 12; ++i) ids.push_back(std::string{f.create("R" + std::to_string(i)).at("id").as_string()});
  f.patch_title(ids[11], "Changed");
  // Only updates: 13 entries, at most 5 read a poll: the update comes in the third poll, and every
  // poll before it answers no event but a cursor further on.
  std::vector<std::string> seen;
  auto at = updates;
  for (int i = 0; i < 3; ++i) {
    auto [events, next] = f.events(f.alice, "?types=resource.updated&since=" + at);
    for (const auto& e : events) seen.push_back(text(e, "resource_id"));
    CHECK(next != at);
    at = next;
  }
  CHECK(seen == std::vector<std::string>{ids[11]});
  // Bob reads none of them: three polls walk him past all 13 entries, with nothing to show.
  at = bob_cursor;
  for (int i = 0; i < 3; ++i) {
    auto [events, next] = f.events(f.bob, "?since=" + at);
    CHECK(events.empty());
    at = next;
  }
  REQUIRE(f.grant(ids[0], "u_bob", "reader")->status == 201);
  auto [granted, after] = f.events(f.bob, "?since=" + at);
  REQUIRE(granted.size() == 1);
  CHECK(text(granted[0], "type") == "resource.appeared");
}

TEST_CASE("cursors are refused for another tenant, other types or when not ours; parameters are checked",
          "[changes]") {
  feed f;
  auto all = f.now(f.alice);
  auto updates = f.now(f.alice, "resource.updated");
  auto mismatch = f.poll(f.alice, "?types=resource.created&since=" + updates);
  REQUIRE(mismatch);
  CHECK(mismatch->status == 400);
  CHECK(reason_of(mismatch) == "CURSOR_MISMATCH");
  auto other_tenant = f.poll(f.eve, "?since=" + all);
  REQUIRE(other_tenant);
  CHECK(other_tenant->status == 400);
  CHECK(reason_of(other_tenant) == "CURSOR_MISMATCH");
  // The same tenant, another principal: a cursor is the tenant's (visibility is decided at delivery).
  CHECK(f.poll(f.bob, "?since=" + all)->status == 200);
  for (const std::string& bad : {std::string{"garbage"}, all.substr(0, all.size() - 4), std::string(5000, 'A')}) {
    auto r = f.poll(f.alice, "?since=" + bad);
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(reason_of(r) == "CURSOR_INVALID");
  }
  for (const std::string& query : {std::string{"?types=resource.deleted"}, std::string{"?types=resource.created,"},
                                   std::string{"?page_size=0"}, std::string{"?page_size=1001"}, std::string{"?page_size=x"}}) {
    auto r = f.poll(f.alice, query);
    REQUIRE(r);
    INFO(query);
    CHECK(r->status == 400);
    CHECK(reason_of(r) == "INVALID_ARGUMENT");
  }
  // A token without the read scope.
  auto r = f.poll(token_with("content-lake.write", "t_test", "u_alice"), "");
  REQUIRE(r);
  CHECK(r->status == 403);
  CHECK(reason_of(r) == "SCOPE_MISSING");
  CHECK(f.poll("", "")->status == 401);
}

namespace {

double gauge(test_service& svc, const std::string& name) {
  auto m = http_request(svc.admin_port(), "GET", "/metrics");
  auto at = m ? m->body.find("\n" + name + " ") : std::string::npos;
  return at == std::string::npos ? -1.0 : std::stod(m->body.substr(at + name.size() + 2));
}

}  // namespace

TEST_CASE("a long poll waits for the caller's next change and answers it; other changes do not end the wait",
          "[changes][wait]") {
  feed f;
  auto cursor = f.now(f.bob);
  auto waiting = std::async(std::launch::async, [&] { return f.events(f.bob, "?wait=20&since=" + cursor); });
  REQUIRE(eventually([&] { return gauge(f.svc, "contentlake_changes_waiting_polls") == 1.0; }));
  // A change bob may not read: the poll reads past it and goes on waiting.
  auto scanned = gauge(f.svc, "contentlake_changes_scanned_total");
  auto id = std::string{f.create("Ebb").at("id").as_string()};
  REQUIRE(eventually([&] { return gauge(f.svc, "contentlake_changes_scanned_total") > scanned; }));
  CHECK(gauge(f.svc, "contentlake_changes_waiting_polls") == 1.0);
  // Then one he may: the poll answers with it (only with it: the create is behind its cursor).
  REQUIRE(f.grant(id, "u_bob", "reader")->status == 201);
  auto [events, next] = waiting.get();
  REQUIRE(events.size() == 1);
  CHECK(text(events[0], "type") == "resource.appeared");
  CHECK(gauge(f.svc, "contentlake_changes_waiting_polls") == 0.0);
  // Nothing more: a short wait ends empty, with a cursor that still follows.
  auto [none, after] = f.events(f.bob, "?wait=1&since=" + next);
  CHECK(none.empty());
  f.patch_title(id, "Flood");
  auto [updated, more] = f.events(f.bob, "?since=" + after);
  REQUIRE(updated.size() == 1);
  CHECK(text(updated[0], "type") == "resource.updated");
  for (std::string bad : {"31", "-1", "x", "1.5"}) {
    auto r = f.poll(f.bob, "?wait=" + bad);
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(reason_of(r) == "INVALID_ARGUMENT");
  }
}

TEST_CASE("a stop does not wait for long polls: they answer at once, empty, with their cursor", "[changes][wait]") {
  feed f;
  auto cursor = f.now(f.bob);
  auto waiting = std::async(std::launch::async, [&] { return f.poll(f.bob, "?wait=30&since=" + cursor); });
  REQUIRE(eventually([&] { return gauge(f.svc, "contentlake_changes_waiting_polls") == 1.0; }));
  f.svc.service().stop();
  auto answered = waiting.get();
  REQUIRE(answered);
  CHECK(answered->status == 200);
  CHECK(json_object_of(answered).at("events").as_array().empty());
}

namespace {

/// The `id:` and `data:` lines of an event stream, in order ("id <value>", "data <value>", "event <value>").
std::vector<std::string> stream_lines(const std::string& body) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < body.size()) {
    auto end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    auto line = body.substr(start, end - start);
    for (const char* field : {"id: ", "data: ", "event: "})
      if (line.rfind(field, 0) == 0) out.push_back(std::string{field}.substr(0, std::string{field}.size() - 2) + " " + line.substr(std::string{field}.size()));
    start = end + 1;
  }
  return out;
}

std::optional<http_response> stream(feed& f, const std::string& token, const std::string& query,
                                    const std::string& last_event_id = "") {
  std::vector<std::pair<std::string, std::string>> headers{{"Authorization", "Bearer " + token},
                                                           {"Accept", "text/event-stream"}};
  if (!last_event_id.empty()) headers.emplace_back("Last-Event-ID", last_event_id);
  return http_request(f.svc.port(), "GET", "/v0/content-lake/changes" + query, headers);
}

}  // namespace

TEST_CASE("an event stream sends each change with its cursor as id, and resumes from Last-Event-ID",
          "[changes][stream]") {
  feed f{[](cl::config::settings& s) { set_option(s, "changes.stream_seconds", "1"); }};
  auto cursor = f.now(f.alice);
  auto a = std::string{f.create("Ebb").at("id").as_string()};
  auto first = stream(f, f.alice, "?since=" + cursor);  // ends after its second: the client reconnects
  REQUIRE(first);
  REQUIRE(first->status == 200);
  CHECK(first->header("content-type") == "text/event-stream");
  CHECK(first->header("cache-control") == "no-cache, no-transform");
  CHECK(first->header("x-accel-buffering") == "no");
  CHECK(first->body.rfind("retry: ", 0) == 0);
  auto lines = stream_lines(first->body);
  std::vector<std::string> data;
  std::string last_id;
  for (const auto& l : lines) {
    if (l.rfind("data ", 0) == 0) data.push_back(l.substr(5));
    if (l.rfind("id ", 0) == 0) last_id = l.substr(3);
    // Every id names a cursor: an empty one would reset a client's Last-Event-ID.
    if (l.rfind("id", 0) == 0) CHECK(l.size() > 3);
  }
  REQUIRE(data.size() == 1);
  // The event itself carries its cursor (the id just before its data), not only the block after it.
  auto at = std::find(lines.begin(), lines.end(), "data " + data[0]);
  REQUIRE(at != lines.begin());
  CHECK(std::prev(at)->rfind("id ", 0) == 0);
  auto event = json::parse(data[0]).as_object();
  CHECK(event.at("type").as_string() == "resource.created");
  CHECK(event.at("resource_id").as_string() == a);
  REQUIRE_FALSE(last_id.empty());
  // A reconnection with Last-Event-ID (no since) gets what came after, once.
  auto b = std::string{f.create("Flood").at("id").as_string()};
  auto second = stream(f, f.alice, "", last_id);
  REQUIRE(second);
  data.clear();
  for (const auto& l : stream_lines(second->body))
    if (l.rfind("data ", 0) == 0) data.push_back(l.substr(5));
  REQUIRE(data.size() == 1);
  CHECK(json::parse(data[0]).as_object().at("resource_id").as_string() == b);
  // A cursor that does not open ends the stream with an error event; JSON is still there for others.
  auto bad = stream(f, f.alice, "?since=garbage");
  REQUIRE(bad);
  CHECK(bad->status == 200);
  CHECK(bad->body.find("event: error") != std::string::npos);
  CHECK(bad->body.find("CURSOR_INVALID") != std::string::npos);
  auto refused = http_request(f.svc.port(), "GET", "/v0/content-lake/changes",
                              {{"Authorization", "Bearer " + f.alice}, {"Accept", "image/png"}});
  REQUIRE(refused);
  CHECK(refused->status == 406);
}

TEST_CASE("a contract change fans out to resource.rights_changed for each readable Resource of its Works, "
          "page by page", "[changes]") {
  feed f;
  auto lawyer = token_with("contracts.read contracts.write", "t_test", "u_alice");
  auto id_of = [](const std::optional<http_response>& r) {
    REQUIRE(r);
    INFO(r->body);
    REQUIRE(r->status == 201);
    return std::string{json_object_of(r).at("id").as_string()};
  };
  auto work = id_of(post_json(f.svc.port(), "/v0/content-lake/works", f.alice, R"({"title":"Tides"})"));
  auto other = id_of(post_json(f.svc.port(), "/v0/content-lake/works", f.alice, R"({"title":"Currents"})"));
  auto resource_in = [&](const std::string& w) {
    return id_of(post_json(f.svc.port(), "/v0/content-lake/resources", f.alice,
                           R"({"title":"Chapter","type":"CHAPTER","language":"en","work_id":")" + w
                             + R"(","content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1",)"
                               R"("children":[{"type":"span","text":"Tides"}]}]}})"));
  };
  std::set<std::string> in_work = {resource_in(work), resource_in(work), resource_in(work)};
  auto in_other = resource_in(other);
  const std::string types = "?types=resource.rights_changed";
  auto cursor = f.now(f.alice, "resource.rights_changed");
  auto bob_cursor = f.now(f.bob, "resource.rights_changed");
  auto terms = [](const std::string& w) {
    return R"("status":"ACTIVE","valid_from":"2026-01-01T00:00:00Z","work_ids":[")" + w
           + R"("],"territorial_rights":[{"worldwide":true,"status":"PERMITTED"}],)"
             R"("usage_terms":[{"usage_type":"ACCESS","status":"PERMITTED"}])";
  };
  auto contract = id_of(post_json(f.svc.port(), "/v0/contracts", lawyer, R"({"title":"Digital",)" + terms(work) + "}"));

  // Three events for one change-log entry, over two pages of 2: the cursor stops inside the entry.
  auto [first, inside] = f.events(f.alice, types + "&page_size=2&since=" + cursor);
  REQUIRE(first.size() == 2);
  auto [second, after] = f.events(f.alice, types + "&page_size=2&since=" + inside);
  REQUIRE(second.size() == 1);
  std::set<std::string> got, ids;
  for (const auto* page : {&first, &second})
    for (const auto& v : *page) {
      const auto& e = v.as_object();
      CHECK(e.at("type").as_string() == "resource.rights_changed");
      CHECK(e.at("contract_id").as_string() == contract);
      // Where the reader's new policy is (docs/api.md, Rights that travel).
      CHECK(e.at("odrl_policy").as_string() == "/v0/content-lake/resources/" + std::string{e.at("resource_id").as_string()} + "/rights/odrl");
      got.insert(std::string{e.at("resource_id").as_string()});
      ids.insert(std::string{e.at("id").as_string()});
    }
  CHECK(got == in_work);
  CHECK(ids.size() == 3);
  CHECK(f.events(f.alice, types + "&since=" + after).first.empty());
  // Another tenant's contract on its own Work: nothing in this tenant's feed.
  auto eve_lawyer = token_with("contracts.read contracts.write", "t_other", "u_eve");
  auto eve_work = id_of(post_json(f.svc.port(), "/v0/content-lake/works", f.eve, R"({"title":"Elsewhere"})"));
  id_of(post_json(f.svc.port(), "/v0/content-lake/resources", f.eve,
                  R"({"title":"Hers","type":"CHAPTER","language":"en","work_id":")" + eve_work
                    + R"(","content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1",)"
                      R"("children":[{"type":"span","text":"x"}]}]}})"));
  id_of(post_json(f.svc.port(), "/v0/contracts", eve_lawyer, R"({"title":"Hers",)" + terms(eve_work) + "}"));
  CHECK(f.events(f.alice, types + "&since=" + after).first.empty());
  // Bob reads none of those Resources: nothing for him.
  CHECK(f.events(f.bob, types + "&since=" + bob_cursor).first.empty());

  // A version that moves the contract to the other Work moves the rights of both Works' Resources.
  auto read = get_with_token(f.svc.port(), "/v0/contracts/" + contract, lawyer);
  REQUIRE(read);
  auto token = std::string{json_object_of(read).at("update_token").as_string()};
  auto next = post_json(f.svc.port(), "/v0/contracts/" + contract + "/versions", lawyer,
                        R"({"title":"Digital",)" + terms(other) + R"(,"update_token":")" + token + R"("})");
  REQUIRE(next);
  REQUIRE(next->status == 201);
  auto [moved, unused] = f.events(f.alice, types + "&since=" + after);
  got.clear();
  for (const auto& v : moved) got.insert(std::string{v.as_object().at("resource_id").as_string()});
  auto both = in_work;
  both.insert(in_other);
  CHECK(got == both);
}

TEST_CASE("a cursor past retention: a poll is 410 CURSOR_EXPIRED, a stream resuming from it ends with reset",
          "[changes][stream]") {
  feed f{[](cl::config::settings& s) { s.storage.change_log_retention_seconds = 1; }};
  auto cursor = f.now(f.alice);
  f.create("Ebb");
  // Pruning follows commits once entries are older than the retention (and every consumer has
  // applied them): writes go on until the cursor's next entry is gone.
  std::optional<http_response> expired;
  REQUIRE(eventually(
    [&] {
      f.create("Flood");
      expired = f.poll(f.alice, "?since=" + cursor);
      return expired && expired->status == 410;
    },
    30000));
  CHECK(json_object_of(expired).at("error").as_object().at("reason").as_string() == "CURSOR_EXPIRED");
  auto s = stream(f, f.alice, "", cursor);  // Last-Event-ID: the cursor past retention
  REQUIRE(s);
  CHECK(s->status == 200);
  auto reset = s->body.find("event: reset");
  REQUIRE(reset != std::string::npos);
  CHECK(s->body.find("CURSOR_EXPIRED", reset) != std::string::npos);
  CHECK(s->body.find("data: {\"id\"") == std::string::npos);  // no event before the reset
}

TEST_CASE("list, then follow: a list's changes_cursor misses nothing changed after it, and opens for any types",
          "[changes]") {
  feed f;
  auto before = std::string{f.create("Before").at("id").as_string()};
  auto listed = json_object_of(get_with_token(f.svc.port(), "/v0/content-lake/resources", f.alice));
  REQUIRE(listed.contains("changes_cursor"));
  auto cursor = std::string{listed.at("changes_cursor").as_string()};
  auto after = std::string{f.create("After").at("id").as_string()};
  f.patch_title(before, "Changed after the list");
  auto [events, next] = f.events(f.alice, "?since=" + cursor);
  std::vector<std::string> seen;
  for (const auto& e : events) seen.push_back(text(e, "type") + " " + text(e, "resource_id"));
  CHECK(seen == std::vector<std::string>{"resource.created " + after, "resource.updated " + before});
  auto [created, more] = f.events(f.alice, "?types=resource.created&since=" + cursor);
  REQUIRE(created.size() == 1);
  CHECK(text(created[0], "resource_id") == after);
  // Every list answers one: Works, Activities, contracts, grants, versions.
  for (const std::string& list : {std::string{"/v0/content-lake/works"}, std::string{"/v0/content-lake/activities"},
                                  "/v0/content-lake/resources/" + before + "/versions",
                                  "/v0/content-lake/resources/" + before + "/access",
                                  "/v0/content-lake/content-units?resource_id=" + before}) {
    INFO(list);
    auto r = get_with_token(f.svc.port(), list, f.alice);
    REQUIRE(r);
    REQUIRE(r->status == 200);
    CHECK(json_object_of(r).contains("changes_cursor"));
  }
  // Another tenant's list cursor does not open here.
  auto theirs = json_object_of(get_with_token(f.svc.port(), "/v0/content-lake/resources", f.eve));
  auto r = f.poll(f.alice, "?since=" + std::string{theirs.at("changes_cursor").as_string()});
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(reason_of(r) == "CURSOR_MISMATCH");
}

namespace {

/// A request sent on a connection of its own and left open (a held stream or long poll); closing
/// the connection is the client leaving.
std::unique_ptr<connection> hold_open(feed& f, const std::string& token, bool as_stream) {
  auto c = std::make_unique<connection>(f.svc.port());
  std::string target = as_stream ? "/v0/content-lake/changes" : "/v0/content-lake/changes?wait=30";
  c->send("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\n"
          + (as_stream ? "Accept: text/event-stream\r\n" : "") + "\r\n");
  return c;
}

}  // namespace

TEST_CASE("held streams and long polls are limited per principal and per client; a closed one frees its slot at once",
          "[changes][held]") {
  feed f{[](cl::config::settings& s) {
    set_option(s, "changes.max_held_per_principal", "2");
    set_option(s, "changes.max_held_per_client", "3");
  }};
  auto held = [&] { return gauge(f.svc, "contentlake_changes_held_requests"); };
  std::vector<std::unique_ptr<connection>> alices;
  alices.push_back(hold_open(f, f.alice, true));   // a stream
  alices.push_back(hold_open(f, f.alice, false));  // a long poll
  REQUIRE(eventually([&] { return held() == 2.0; }));
  // A third of alice's: 429 before any byte of the stream, and for a long poll alike.
  for (bool as_stream : {true, false}) {
    auto r = http_request(f.svc.port(), "GET", as_stream ? "/v0/content-lake/changes" : "/v0/content-lake/changes?wait=30",
                          {{"Authorization", "Bearer " + f.alice}, {"Accept", as_stream ? "text/event-stream" : "*/*"}});
    REQUIRE(r);
    CHECK(r->status == 429);
    CHECK(reason_of(r) == "TOO_MANY_HELD_REQUESTS");
    CHECK(r->header("retry-after") == "5");
  }
  // A poll that does not wait is never held: it answers.
  CHECK(f.poll(f.alice, "")->status == 200);
  // Another principal of the same client (a_testapp) gets one more; then the client is at its limit.
  auto bobs = hold_open(f, f.bob, true);
  REQUIRE(eventually([&] { return held() == 3.0; }));
  auto carol = token_with(rw, "t_test", "u_carol");
  auto refused = http_request(f.svc.port(), "GET", "/v0/content-lake/changes?wait=30", {{"Authorization", "Bearer " + carol}});
  REQUIRE(refused);
  CHECK(refused->status == 429);
  CHECK(reason_of(refused) == "TOO_MANY_HELD_REQUESTS");
  CHECK(refused->body.find("client_id") != std::string::npos);
  // Alice closes her stream and her long poll: both slots come back well before the next heartbeat
  // (15 s) or the poll's 30 s: the service watches the socket.
  alices.clear();
  REQUIRE(eventually([&] { return held() == 1.0; }, 5000));
  CHECK(gauge(f.svc, "contentlake_changes_waiting_polls") == 1.0);  // bob's stream's wait alone
  auto again = hold_open(f, f.alice, true);
  CHECK(eventually([&] { return held() == 2.0; }));
}

TEST_CASE("held requests keep at most half the connections: the others stay for ordinary requests", "[changes][held]") {
  feed f{[](cl::config::settings& s) { s.http.max_connections = 8; }};  // so at most 4 held in all
  std::vector<std::unique_ptr<connection>> streams;
  for (int i = 0; i < 4; ++i) streams.push_back(hold_open(f, token_with(rw, "t_test", "u_s" + std::to_string(i)), true));
  REQUIRE(eventually([&] { return gauge(f.svc, "contentlake_changes_held_requests") == 4.0; }));
  auto fifth = http_request(f.svc.port(), "GET", "/v0/content-lake/changes",
                            {{"Authorization", "Bearer " + f.bob}, {"Accept", "text/event-stream"}});
  REQUIRE(fifth);
  CHECK(fifth->status == 503);
  CHECK(reason_of(fifth) == "SERVER_OVERLOADED");
  CHECK_FALSE(fifth->header("retry-after").empty());
  // Another tenant's ordinary reads go on.
  auto eves = f.poll(f.eve, "");
  REQUIRE(eves);
  CHECK(eves->status == 200);
}

TEST_CASE("an event stream ends when its token expires, with an event that says so", "[changes][stream]") {
  feed f;
  auto claims = valid_claims("u_alice");
  claims["scopes"] = json::array{"content-lake.read"};
  claims["exp"] = unix_now() + 2;
  auto brief = make_token(claims);
  auto cursor = f.now(f.alice);
  // Read to its end: the token's 2 s (its last event says so), not the stream's own 300 s.
  auto r = stream(f, brief, "?since=" + cursor);
  REQUIRE(r);
  CHECK(r->status == 200);
  auto lines = stream_lines(r->body);
  REQUIRE_FALSE(lines.empty());
  CHECK(lines.back().rfind("data ", 0) == 0);
  CHECK(lines.back().find("TOKEN_EXPIRED") != std::string::npos);
  CHECK(std::find(lines.begin(), lines.end(), "event token_expired") != lines.end());
}
