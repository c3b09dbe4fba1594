// The public listener's event loops: one named thread each, and the time slice they ask of the
// kernel (EEVDF's slice per thread, Linux 6.12 and later; earlier kernels keep none and say so).
#include "http/event_loops.hpp"

#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <pthread.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <future>
#include <string>

namespace {

struct seen {
  std::string name;
  std::uint64_t slice_ns;
};

/// The calling thread's name and its slice as the scheduler shows it (/proc/thread-self/sched,
/// `se.slice`; 0 where the kernel shows none).
seen look() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof name);
  std::ifstream in{"/proc/thread-self/sched"};
  std::uint64_t slice = 0;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("se.slice ", 0) == 0) slice = std::stoull(line.substr(line.find(':') + 1));
  return {name, slice};
}

seen look_on(boost::asio::io_context* loop) {
  std::promise<seen> p;
  boost::asio::post(*loop, [&p] { p.set_value(look()); });
  return p.get_future().get();
}

bool kernel_keeps_slices() {  // Linux 6.12 and later
  utsname u{};
  uname(&u);
  int major = 0, minor = 0;
  std::sscanf(u.release, "%d.%d", &major, &minor);
  return major > 6 || (major == 6 && minor >= 12);
}

}  // namespace

TEST_CASE("each event loop runs on a thread of its own, named for it", "[http][loops]") {
  cl::http::event_loops loops{2};
  loops.start();
  auto all = loops.loops();
  CHECK(look_on(all[0]).name == "cl-http-0");
  CHECK(look_on(all[1]).name == "cl-http-1");
  CHECK(loops.slice_us() == 0);  // none asked
  loops.finish();
}

TEST_CASE("the loops' threads run on the slice they ask for, and no other thread does", "[http][loops]") {
  auto before = look().slice_ns;
  cl::http::event_loops loops{2, 200};
  loops.start();
  for (auto* loop : loops.loops()) {
    auto s = look_on(loop);
    if (kernel_keeps_slices()) {
      CHECK(s.slice_ns == 200'000);
    } else {
      CHECK(s.slice_ns == before);  // the kernel took the call and kept its default
    }
  }
  CHECK(loops.slice_us() == (kernel_keeps_slices() ? 200 : 0));
  CHECK(look().slice_ns == before);  // the caller's thread keeps its own
  loops.finish();
}

TEST_CASE("the kernel takes a slice below its floor as its floor", "[http][loops]") {
  cl::http::event_loops loops{1, 20};
  loops.start();
  CHECK(loops.slice_us() == (kernel_keeps_slices() ? 100 : 0));
  loops.finish();
}
