// The work lane: a thread of its own that runs jobs in order and hands back results and failures.

#include "actors/work_lane.hpp"
#include "tests/support/threads.hpp"

#include <catch2/catch.hpp>

#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using cl::actors::work_lane;

TEST_CASE("a work lane runs jobs on its own named thread, in order, and hands back results and failures", "[lane]") {
  work_lane lane{"cl-test-lane"};
  CHECK(lane.run([] { return static_cast<int>(::gettid()); }) == lane.tid());
  CHECK(lane.tid() != static_cast<int>(::gettid()));
  auto me = cl::testing::thread_of("self", static_cast<int>(::gettid()));
  auto on_lane = cl::testing::thread_of("self", lane.tid());
  CHECK(on_lane.name == "cl-test-lane");
  CHECK_THROWS_WITH(lane.run([]() -> int { throw std::runtime_error("index full"); }), "index full");
  // Still serving after a failure; callers from several threads are served one job at a time.
  std::vector<int> order;
  std::vector<std::thread> callers;
  for (int i = 0; i < 4; ++i)
    callers.emplace_back([&, i] {
      for (int k = 0; k < 100; ++k) lane.run([&] { order.push_back(i); });  // no lock: one job at a time
    });
  for (auto& c : callers) c.join();
  CHECK(order.size() == 400);
  CHECK(on_lane.nice == me.nice);  // the creator's value
}

TEST_CASE("lowering the other threads passes over lanes; threads created later inherit their creator's value", "[lane]") {
  // In a child process: the lowering is the whole process's and cannot be undone unprivileged.
  auto pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto nice = [](int tid) { return cl::testing::thread_of("self", tid).nice; };
    int base = nice(static_cast<int>(::gettid()));
    int code = 0;
    {
      work_lane lane{"cl-test-lane"};
      std::promise<int> other_tid;
      std::promise<void> finish;
      std::thread sleeper([&] {
        other_tid.set_value(static_cast<int>(::gettid()));
        finish.get_future().wait();
      });
      int other = other_tid.get_future().get();  // `sleeper`'s id
      auto lowered = cl::actors::lower_other_threads(3);
      int later = 0, lane_helper = 0;
      std::thread([&] { later = nice(static_cast<int>(::gettid())); }).join();
      lane.run([&] { std::thread([&] { lane_helper = nice(static_cast<int>(::gettid())); }).join(); });
#if defined(__SANITIZE_THREAD__)
      constexpr int others = 3;  // and ThreadSanitizer's own background thread
#else
      constexpr int others = 2;
#endif
      if (lowered != others) code |= 1;                           // this thread and `sleeper`
      if (nice(static_cast<int>(::gettid())) != base + 3) code |= 2;
      if (nice(other) != base + 3) code |= 4;
      if (nice(lane.tid()) != base) code |= 8;
      if (later != base + 3) code |= 16;                          // created by a lowered thread
      if (lane_helper != base) code |= 32;                        // created by the lane
      finish.set_value();
      sleeper.join();
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // bits name what failed
}
