// The coordinator's message flow on CAF's deterministic scheduler, with mock collaborators that
// implement the real typed interfaces.

#include "actors/coordinator.hpp"
#include "actors/deadlines.hpp"
#include "actors/plan_support.hpp"
#include "actors/plans.hpp"
#include "actors/rate_limiter.hpp"
#include "tests/support/reader_mocks.hpp"

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace cl;
using namespace cl::actors;

namespace {

struct calls {
  int auth = 0;
  int rate = 0;
  int store = 0;
  int access = 0;
};

auth_actor::behavior_type mock_auth(auth_actor::pointer, std::shared_ptr<calls> n, auth_outcome answer) {
  return {
    [n, answer](verify_atom, const std::string&) {
      ++n->auth;
      return answer;
    },
    [](recheck_atom) {},
  };
}

rate_limiter_actor::behavior_type mock_rate(rate_limiter_actor::pointer, std::shared_ptr<calls> n, rate_decision d) {
  return {[n, d](admit_atom, const std::string&) {
    ++n->rate;
    return d;
  }};
}

/// Access (layer 2) that gives every caller `role` on every Resource.
access_actor::behavior_type mock_access(access_actor::pointer, std::shared_ptr<calls> n, domain::access_role role) {
  return {
    [n, role](check_atom, const std::string&, const std::string&, const std::string&) {
      ++n->access;
      return static_cast<std::int32_t>(role);
    },
    [](principals_atom, const std::string&, const std::string& subject) { return std::vector<std::string>{subject}; },
    [](group_atom, const std::string&, const std::string&) { return false; },
    [](recheck_atom) {},
  };
}

struct held_state {
  std::vector<caf::typed_response_promise<fetch_outcome>> held;
};

/// A store that answers "not found", or never (holding its promises) when `silent`.
reader_actor::behavior_type mock_store(reader_actor::stateful_pointer<held_state> self,
                                               std::shared_ptr<calls> n, bool silent) {
  return cl::testing::reader_finding_nothing_else(
    [self, n, silent](fetch_atom, const std::string&, const std::string&) -> caf::result<fetch_outcome> {
      ++n->store;
      if (!silent) return fetch_outcome{false, {}};
      auto rp = self->make_response_promise<fetch_outcome>();
      self->state.held.push_back(rp);
      return rp;
    });
}

/// A store whose every read fails (a disk or a database connection gone).
reader_actor::behavior_type failing_store(reader_actor::pointer) {
  return cl::testing::reader_finding_nothing_else(
    [](fetch_atom, const std::string&, const std::string&) -> caf::result<fetch_outcome> {
      return caf::make_error(backend_error::storage_failure, "storage read failed");
    });
}

domain::principal alice(std::vector<std::string> scopes = {"content-lake.read"}) {
  domain::principal p;
  p.subject = "u_alice";
  p.tenant_id = "t_one";
  p.client_id = "a_app";
  p.scopes = std::move(scopes);
  return p;
}

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::shared_ptr<calls> n = std::make_shared<calls>();
  std::shared_ptr<concern_handles> handles = std::make_shared<concern_handles>();

  fixture() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
  }

  ~fixture() {
    // Held promises keep their actor alive; stop the mocks explicitly before the system ends.
    for (auto a : {caf::actor_cast<caf::actor>(handles->get<auth_actor>()), caf::actor_cast<caf::actor>(handles->get<rate_limiter_actor>()),
                   caf::actor_cast<caf::actor>(handles->get<reader_actor>()), caf::actor_cast<caf::actor>(handles->get<access_actor>())})
      if (a) caf::anon_send_exit(a, caf::exit_reason::kill);
    handles.reset();
    sched->run();
  }

  void with(auth_outcome a, rate_decision r = {true, 0}, bool silent_store = false,
            domain::access_role role = domain::access_role::reader) {
    handles->set<access_actor>(sys->spawn(mock_access, n, role));
    handles->set<auth_actor>(sys->spawn(mock_auth, n, a));
    handles->set<rate_limiter_actor>(sys->spawn(mock_rate, n, r));
    handles->set<reader_actor>(sys->spawn(mock_store, n, silent_store));
    sched->run();
  }

  /// A GET-resource request for res_1 that stores its answer in `answer`; not started yet.
  request_job resource_job(std::string authorization, std::optional<domain::api_reply>& answer) {
    request_job job;
    job.request.method = "GET";
    job.request.authorization = std::move(authorization);
    job.params = {{"id", "res_1"}};
    job.required_scope = "content-lake.read";
    job.plan = &plan_get_resource;
    job.actors = handles;
    job.timeout = std::chrono::seconds{2};
    job.reply = [&answer](domain::api_reply r) { answer = std::move(r); };
    return job;
  }

  /// Runs one GET-resource request through a coordinator and returns its answer.
  std::optional<domain::api_reply> get_resource(std::string authorization = "Bearer t0k3n",
                                                std::shared_ptr<deadline_watch> deadlines = nullptr) {
    std::optional<domain::api_reply> answer;
    auto job = resource_job(std::move(authorization), answer);
    job.deadlines = std::move(deadlines);
    coordinate(*sys, std::move(job));
    sched->run();
    return answer;
  }
};

domain::error_id reason(const std::optional<domain::api_reply>& r) {
  REQUIRE(r);
  REQUIRE(r->error);
  return r->error->id;
}

}  // namespace

TEST_CASE("auth, then rate limiter and store in parallel, joined into one answer", "[coordinator]") {
  fixture f;
  f.with({true, alice(), {}});
  auto r = f.get_resource();
  CHECK(reason(r) == domain::error_id::resource_not_found);
  CHECK(r->tenant == "t_one");
  CHECK(r->client_id == "a_app");
  CHECK(f.n->auth == 1);
  CHECK(f.n->rate == 1);
  CHECK(f.n->store == 1);
}

TEST_CASE("layer 2 comes before the store: without a grant nothing is fetched", "[coordinator][access]") {
  fixture f;
  f.with({true, alice(), {}}, {true, 0}, false, domain::access_role::none);
  auto r = f.get_resource();
  CHECK(reason(r) == domain::error_id::access_denied);
  CHECK(f.n->access == 1);
  CHECK(f.n->store == 0);
}

TEST_CASE("a token in the shared token cache is not sent to the auth actor again", "[coordinator]") {
  fixture f;
  f.with({true, alice(), {}});
  auto tokens = std::make_shared<token_cache>(10);
  auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  tokens->insert("t0k3n", alice(), now + 60, now);
  f.handles->tokens = tokens;
  auto r = f.get_resource("Bearer t0k3n");
  CHECK(reason(r) == domain::error_id::resource_not_found);
  CHECK(r->tenant == "t_one");
  CHECK(f.n->auth == 0);
  CHECK(f.n->store == 1);
  // Another token still goes to the auth actor.
  f.get_resource("Bearer other");
  CHECK(f.n->auth == 1);
}

TEST_CASE("no bearer token is answered without asking anybody", "[coordinator]") {
  fixture f;
  f.with({true, alice(), {}});
  CHECK(reason(f.get_resource("")) == domain::error_id::token_missing);
  CHECK(reason(f.get_resource("Basic abc")) == domain::error_id::token_missing);
  CHECK(f.n->auth == 0);
  // On the calling thread, before coordinate returns: no coordinator is spawned for it.
  std::optional<domain::api_reply> answer;
  coordinate(*f.sys, f.resource_job("Bearer  ", answer));
  CHECK(reason(answer) == domain::error_id::token_missing);
}

TEST_CASE("an auth failure is the answer; nothing else is asked", "[coordinator]") {
  fixture f;
  f.with({false, {}, domain::api_error{domain::error_id::token_expired, "expired", {}}});
  CHECK(reason(f.get_resource()) == domain::error_id::token_expired);
  CHECK(f.n->rate == 0);
  CHECK(f.n->store == 0);
}

TEST_CASE("a missing scope is SCOPE_MISSING before rate limiting or fetching", "[coordinator]") {
  fixture f;
  f.with({true, alice({"content-lake.write"}), {}});
  auto r = f.get_resource();
  CHECK(reason(r) == domain::error_id::scope_missing);
  CHECK(r->error->message.find("content-lake.read") != std::string::npos);
  CHECK(f.n->rate == 0);
  CHECK(f.n->store == 0);
}

TEST_CASE("a refused rate limit wins over the plan's answer", "[coordinator]") {
  fixture f;
  f.with({true, alice(), {}}, {false, 7});
  auto r = f.get_resource();
  CHECK(reason(r) == domain::error_id::rate_limited);
  CHECK(r->retry_after_seconds == 7);
}

namespace {

std::atomic<int> write_plan_runs{0};

/// A write's plan that only counts that it ran.
void counting_write_plan(const plan_run& run) {
  ++write_plan_runs;
  domain::api_reply r;
  r.status = 201;
  run.answer(std::move(r));
}

}  // namespace

TEST_CASE("a write refused by the rate limiter never runs: 429 means not executed", "[coordinator]") {
  for (bool admitted : {false, true}) {
    fixture f;
    f.with({true, alice({"content-lake.write"}), {}}, {admitted, 3});
    write_plan_runs = 0;
    std::optional<domain::api_reply> answer;
    auto job = f.resource_job("Bearer t0k3n", answer);
    job.request.method = "POST";
    job.required_scope = "content-lake.write";
    job.plan = &counting_write_plan;
    coordinate(*f.sys, std::move(job));
    f.sched->run();
    REQUIRE(answer);
    if (admitted) {
      CHECK(answer->status == 201);
      CHECK(write_plan_runs == 1);
    } else {
      CHECK(reason(answer) == domain::error_id::rate_limited);
      CHECK(write_plan_runs == 0);
    }
  }
}

TEST_CASE("a callee that never answers becomes 503 when the ask times out", "[coordinator]") {
  fixture f;
  f.with({true, alice(), {}}, {true, 0}, true);
  std::optional<domain::api_reply> answer;
  coordinate(*f.sys, f.resource_job("Bearer x", answer));
  f.sched->run();
  CHECK_FALSE(answer);  // still waiting for the store
  CHECK(f.sched->trigger_timeouts() > 0);
  f.sched->run();
  CHECK(reason(answer) == domain::error_id::backend_unavailable);
  CHECK(answer->retry_after_seconds == 1);
  CHECK(answer->error->message == "The record reader service did not answer in time; retry shortly.");
}

TEST_CASE("a callee whose storage fails is 503 at once, and its message says so, not that it was late", "[coordinator]") {
  fixture f;
  f.with({true, alice(), {}});
  f.handles->set<reader_actor>(f.sys->spawn(failing_store));
  f.sched->run();
  auto answer = f.get_resource();
  CHECK(reason(answer) == domain::error_id::backend_unavailable);
  CHECK(answer->retry_after_seconds == 1);
  CHECK(answer->error->message == "The record reader service could not use its storage; retry shortly.");
}

TEST_CASE("with a deadline watch, asks carry no timeout and the request's deadline answers 503", "[coordinator]") {
  fixture f;
  f.with({true, alice(), {}}, {true, 0}, true);
  auto watch = std::make_shared<deadline_watch>();  // no thread: the test moves time
  std::optional<domain::api_reply> answer;
  auto job = f.resource_job("Bearer x", answer);
  job.timeout = std::chrono::milliseconds{1500};
  job.deadlines = watch;
  auto started = deadline_watch::clock::now();
  coordinate(*f.sys, std::move(job));
  f.sched->run();
  CHECK_FALSE(answer);                         // waiting for the silent store
  CHECK(f.sched->trigger_timeouts() == 0);     // nothing registered with CAF's clock
  CHECK(watch->expire_due(started) == 0);      // not yet due
  CHECK(watch->expire_due(started + std::chrono::seconds{2}) == 1);
  CHECK(reason(answer) == domain::error_id::backend_unavailable);
  CHECK(answer->retry_after_seconds == 1);
  CHECK(answer->error->message.find("1500 ms") != std::string::npos);
  f.sched->run();  // the coordinator was told to stop
  CHECK(watch->expire_due(started + std::chrono::seconds{3}) == 0);
}

TEST_CASE("a deadline that passes after the answer changes nothing", "[coordinator]") {
  fixture f;
  f.with({true, alice(), {}});
  auto watch = std::make_shared<deadline_watch>();
  int answers = 0;
  std::optional<domain::api_reply> answer;
  auto job = f.resource_job("Bearer x", answer);
  job.deadlines = watch;
  job.reply = [&](domain::api_reply r) {
    ++answers;
    answer = std::move(r);
  };
  coordinate(*f.sys, std::move(job));
  f.sched->run();
  CHECK(reason(answer) == domain::error_id::resource_not_found);
  CHECK(watch->pending() == 1);
  CHECK(watch->expire_due(deadline_watch::clock::now() + std::chrono::seconds{5}) == 0);
  CHECK(answers == 1);
  CHECK(watch->pending() == 0);
}

TEST_CASE("a dead concern actor is 503 at once", "[coordinator]") {
  fixture f;
  f.with({true, alice(), {}});
  caf::anon_send_exit(f.handles->get<auth_actor>(), caf::exit_reason::kill);
  f.sched->run();
  auto answer = f.get_resource();
  CHECK(reason(answer) == domain::error_id::backend_unavailable);
  CHECK(answer->error->message == "The auth service is restarting; retry shortly.");
  // Asks without a timeout (deadline watched instead) notice a dead callee just as fast.
  auto watch = std::make_shared<deadline_watch>();
  CHECK(reason(f.get_resource("Bearer t0k3n", watch)) == domain::error_id::backend_unavailable);
  CHECK(watch->expire_due(deadline_watch::clock::now() + std::chrono::seconds{5}) == 0);
}

TEST_CASE("the rate limiter admits a client's burst, then asks it to wait", "[rate]") {
  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("testing"));
  caf::actor_system sys{cfg};
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  auto cfg_rl = std::make_shared<rate_limiter_config>();
  cfg_rl->requests_per_second = 0.5;
  cfg_rl->burst = 2;
  auto aut = sys.spawn(rate_limiter, std::shared_ptr<const rate_limiter_config>{cfg_rl});
  caf::scoped_actor self{sys};
  auto ask = [&](const std::string& client) {
    rate_decision d;
    auto h = self->request(aut, caf::infinite, admit_atom_v, client);
    sched.run();
    h.receive([&](rate_decision r) { d = r; }, [](caf::error&) { FAIL("rate limiter failed"); });
    return d;
  };
  CHECK(ask("a_one").admitted);
  CHECK(ask("a_one").admitted);
  auto third = ask("a_one");
  CHECK_FALSE(third.admitted);
  CHECK(third.retry_after_seconds == 2);
  CHECK(ask("a_two").admitted);
  caf::anon_send_exit(aut, caf::exit_reason::user_shutdown);
  sched.run();
}

TEST_CASE("the directory spreads reads over its readers and updates every view", "[directory]") {
  fixture f;
  actor_directory directory{3};
  std::vector<reader_actor> readers;
  for (int i = 0; i < 3; ++i) {
    readers.push_back(f.sys->spawn(mock_store, f.n, false));
    directory.publish(static_cast<std::size_t>(i), readers.back());
  }
  std::set<caf::actor_addr> seen;
  for (int i = 0; i < 3; ++i) seen.insert(directory.snapshot()->get<reader_actor>().address());
  CHECK(seen.size() == 3);
  auto auth = f.sys->spawn(mock_auth, f.n, auth_outcome{});
  directory.update([&](concern_handles& h) { h.set<auth_actor>(auth); });
  for (int i = 0; i < 3; ++i) CHECK(directory.snapshot()->get<auth_actor>() == auth);
  directory.clear();
  CHECK_FALSE(directory.snapshot()->get<reader_actor>());
  for (auto& r : readers) caf::anon_send_exit(r, caf::exit_reason::kill);
  caf::anon_send_exit(auth, caf::exit_reason::kill);
  f.sched->run();
}

namespace {

/// A store that finds one Resource attached to wk_1.
reader_actor::behavior_type mock_found_store(reader_actor::pointer) {
  return {
    [](fetch_atom, const std::string&, const std::string&) {
      return fetch_outcome{true, R"({"id":"res_1","work_id":"wk_1","title":"T","content":{"format":"cl.content/1","blocks":[]}})"};
    },
    [](cl::actors::fetch_atom, const cl::storage::version_ref&) { return cl::actors::fetch_outcome{false, {}}; },
    [](cl::actors::fetch_atom, const cl::storage::record_ref&) { return cl::actors::fetch_outcome{false, {}}; },
    [](cl::actors::fetch_atom, const cl::storage::activity_ref&) { return cl::actors::fetch_outcome{false, {}}; },
    [](cl::actors::list_atom, const cl::storage::version_query&) { return cl::actors::scan_result{}; },
    [](cl::actors::list_atom, const cl::storage::catalog_query&) { return cl::actors::scan_result{}; },
    [](fetch_atom, const cl::storage::grant_ref&) { return fetch_outcome{false, {}}; },
    [](list_atom, const cl::storage::grant_query&) { return scan_result{}; },
    [](list_atom, const cl::storage::resource_query&) { return scan_result{}; },
    [](list_atom, const cl::storage::activity_query&) { return scan_result{}; },
  };
}

rights_actor::behavior_type mock_rights(rights_actor::pointer, std::shared_ptr<int> asked) {
  return {
    [asked](resolve_atom, const std::string&, const std::string&) {
      ++*asked;
      return domain::no_contract_rights("2026-11-22T12:00:00Z");
    },
    [asked](resolve_atom, const std::string&, const std::vector<std::string>& works) {
      ++*asked;
      return std::vector<domain::resolved_rights>(works.size(), domain::no_contract_rights("2026-11-22T12:00:00Z"));
    },
    [](possible_atom, const std::string&, const std::string&) { return caf::make_result(true, true); },
    [](recheck_atom) {},
  };
}

}  // namespace

TEST_CASE("a cached resolution of the current rights epoch saves the ask to the resolver", "[coordinator]") {
  fixture f;
  f.with({true, alice(), {}});
  auto asked = std::make_shared<int>(0);
  f.handles->set<reader_actor>(f.sys->spawn(mock_found_store));
  f.handles->set<rights_actor>(f.sys->spawn(mock_rights, asked));
  auto cache = std::make_shared<shared_cache<std::shared_ptr<const domain::resolved_rights>>>(100);
  auto epoch = std::make_shared<std::atomic<std::uint64_t>>(7);
  f.handles->rights_cache = cache;
  f.handles->rights_epoch = epoch;
  auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto cached = std::make_shared<const domain::resolved_rights>(domain::no_contract_rights("2026-11-22T11:00:00Z"));
  cache->insert(rights_cache_key("t_one", "wk_1", 7), cached, now + 60, now);

  auto hit = f.get_resource();
  REQUIRE(hit);
  REQUIRE_FALSE(hit->error);
  CHECK(hit->body.find("2026-11-22T11:00:00Z") != std::string::npos);  // the cached resolution
  CHECK(*asked == 0);

  ++*epoch;  // a contract changed: the cached resolution is of an old epoch
  auto miss = f.get_resource();
  REQUIRE(miss);
  CHECK(miss->body.find("2026-11-22T12:00:00Z") != std::string::npos);
  CHECK(*asked == 1);
}

TEST_CASE("the deadlines of finished requests do not pile up until they pass", "[coordinator][deadlines]") {
  struct counted final : deadline_target {
    int* expired;
    explicit counted(int* e) : expired(e) {}
    void expire() override { ++*expired; }
  };
  deadline_watch watch;  // no thread: the test moves time
  int expired = 0;
  auto far = deadline_watch::clock::now() + std::chrono::minutes{30};  // a blob completion's deadline
  std::vector<std::shared_ptr<counted>> in_flight;
  for (int i = 0; i < 100000; ++i) {
    auto request = std::make_shared<counted>(&expired);
    watch.watch(far + std::chrono::milliseconds{i}, request);
    if (i % 10000 == 0) in_flight.push_back(request);  // 10 still running; the rest answered at once
  }
  // What is held follows the requests in flight (10), not the 100,000 watched.
  CHECK(watch.pending() <= deadline_watch::compact_floor);
  CHECK(watch.expire_due(far + std::chrono::minutes{2}) == 10);
  CHECK(expired == 10);
  CHECK(watch.pending() == 0);
}

TEST_CASE("the watching thread expires exactly the live requests, watched from several threads", "[coordinator][deadlines]") {
  // Coordinators watch from every scheduler thread while the watch's own thread expires
  // (scripts/check-sanitizers tsan runs this for races).
  std::mutex m;
  std::condition_variable cv;
  int expired = 0;
  struct counted final : deadline_target {
    std::mutex* m;
    std::condition_variable* cv;
    int* expired;
    counted(std::mutex* mm, std::condition_variable* c, int* e) : m(mm), cv(c), expired(e) {}
    void expire() override {
      {
        std::lock_guard<std::mutex> guard{*m};
        ++*expired;
      }
      cv->notify_all();
    }
  };
  std::vector<std::shared_ptr<counted>> kept[2];  // outlive the watch (declared before it)
  deadline_watch watch{std::chrono::milliseconds{1}};
  std::vector<std::thread> threads;
  // Every deadline is past the moment its request is answered: one due while its request is still
  // alive is rightly expired (a deadline of `now` was, once in a CI run: 61 of 60).
  auto start = deadline_watch::clock::now() + std::chrono::seconds{2};
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3000; ++i) {
        auto request = std::make_shared<counted>(&m, &cv, &expired);
        watch.watch(start + std::chrono::milliseconds{i % 50}, request);
        if (i % 100 == 0) kept[t].push_back(request);  // 30 per thread still running; the rest answered
      }
    });
  for (auto& t : threads) t.join();
  std::unique_lock<std::mutex> lock{m};
  CHECK(cv.wait_for(lock, std::chrono::seconds{30}, [&] { return expired >= 60; }));
  CHECK(expired == 60);
}

namespace {

/// A plan that answers at once, from nothing an actor holds.
void plan_answering_at_once(const plan_run& run) { run.answer(domain::api_reply::failure(domain::error_id::resource_not_found, "none here")); }

/// A plan that asks the reader first (a cache miss), then answers what it found.
void plan_asking_the_reader(const plan_run& run) {
  ask(run, run->actors->get<reader_actor>(), "record reader",
      [run](fetch_outcome& found) {
        run.answer(found.found ? domain::api_reply{} : domain::api_reply::failure(domain::error_id::resource_not_found, "gone"));
      },
      fetch_atom_v, run->who.tenant_id, std::string{"res_1"});
}

void plan_failing(const plan_run&) { throw std::runtime_error("a plan bug"); }

/// A fixture whose token cache holds alice and whose rate table admits one request of hers.
struct in_place_fixture : fixture {
  in_place_fixture() {
    with({true, alice(), {}});
    auto tokens = std::make_shared<token_cache>(10);
    auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    tokens->insert("t0k3n", alice(), now + 60, now);
    handles->tokens = tokens;
    handles->rates = std::make_shared<rate_table>(0.001, 1, nullptr, nullptr);
  }

  /// Hands a request of `plan` to `coordinate`; `answered_at_once` tells whether its answer came
  /// before `coordinate` returned (no actor ran meanwhile: the test scheduler runs nothing by itself).
  std::optional<domain::api_reply> run(plan_fn plan, bool& answered_at_once, bool in_place = true,
                                       std::string position = {}) {
    std::optional<domain::api_reply> answer;
    auto job = resource_job("Bearer t0k3n", answer);
    job.plan = plan;
    job.in_place = in_place;
    job.request.position = std::move(position);
    coordinate(*sys, std::move(job));
    answered_at_once = answer.has_value();
    sched->run();
    return answer;
  }
};

}  // namespace

TEST_CASE("a read run in place is answered before coordinate returns, without a coordinator", "[coordinator][in_place]") {
  in_place_fixture f;
  bool at_once = false;
  auto r = f.run(&plan_answering_at_once, at_once);
  CHECK(at_once);
  CHECK(reason(r) == domain::error_id::resource_not_found);
  CHECK(r->tenant == "t_one");  // attributed to its caller, as a coordinator's answer is
  CHECK(r->client_id == "a_app");
  CHECK(f.n->auth == 0);
  CHECK(f.n->rate == 0);  // the rate table decided in place
  // The table admitted one request of alice's: a second is refused, in place too.
  auto again = f.run(&plan_answering_at_once, at_once);
  CHECK(at_once);
  CHECK(reason(again) == domain::error_id::rate_limited);
}

TEST_CASE("a plan run in place that must ask an actor goes to a coordinator, charged once", "[coordinator][in_place]") {
  in_place_fixture f;
  bool at_once = true;
  auto r = f.run(&plan_asking_the_reader, at_once);
  CHECK_FALSE(at_once);
  // The coordinator ran the plan again and asked the reader; the one admission the table grants
  // was spent once (a second charge would have answered 429).
  CHECK(reason(r) == domain::error_id::resource_not_found);
  CHECK(r->error->message == "gone");
  CHECK(f.n->store == 1);
  CHECK(r->tenant == "t_one");
}

TEST_CASE("a plan that fails in place is 503, as a coordinator that dies", "[coordinator][in_place]") {
  in_place_fixture f;
  bool at_once = false;
  auto r = f.run(&plan_failing, at_once);
  CHECK(at_once);
  CHECK(reason(r) == domain::error_id::backend_unavailable);
  CHECK(r->error->message == "The coordinator service failed to answer; retry shortly.");  // not "late"
}

TEST_CASE("what is not run in place goes to a coordinator: another route, a position, no cached token", "[coordinator][in_place]") {
  in_place_fixture f;
  bool at_once = true;
  f.run(&plan_answering_at_once, at_once, /*in_place=*/false);
  CHECK_FALSE(at_once);
  // A request that names a change-log position waits for it in a coordinator (here: not a position).
  f.handles->rates = std::make_shared<rate_table>(1000, 1000, nullptr, nullptr);
  auto positioned = f.run(&plan_answering_at_once, at_once, true, "pos_x");
  CHECK_FALSE(at_once);
  CHECK(reason(positioned) == domain::error_id::position_invalid);
  std::optional<domain::api_reply> answer;
  auto job = f.resource_job("Bearer not-cached", answer);
  job.plan = &plan_answering_at_once;
  job.in_place = true;
  coordinate(*f.sys, std::move(job));
  CHECK_FALSE(answer);
  f.sched->run();
  CHECK(f.n->auth == 1);  // verified by the auth actor, in a coordinator
  CHECK(reason(answer) == domain::error_id::resource_not_found);
}
