#include "app/access_sink.hpp"

#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

/// A temporary file (not a terminal: lines are batched), removed at the end.
struct temp_output {
  std::string path = "/tmp/cl_access_sink_XXXXXX";
  int fd = ::mkstemp(path.data());
  ~temp_output() {
    ::close(fd);
    ::unlink(path.c_str());
  }
  std::vector<std::string> lines() const {
    std::ifstream in{path};
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
};

}  // namespace

TEST_CASE("the access sink batches a thread's lines and writes them at a flush", "[access_log]") {
  temp_output out;
  REQUIRE(out.fd >= 0);
  auto sink = std::make_shared<cl::app::access_sink>(out.fd, 4096);
  spdlog::logger log{"access_test", sink};
  log.info("one");
  log.info("two");
  CHECK(out.lines().empty());  // under the batch: held until a flush
  log.flush();
  CHECK(out.lines() == std::vector<std::string>{"one", "two"});
  // A batch's worth is written by the thread that fills it, without a flush.
  std::string long_line(1000, 'x');
  for (int i = 0; i < 5; ++i) log.info(long_line);
  CHECK(out.lines().size() == 7);
}

TEST_CASE("the access sink loses no line of many threads, mixes none, and keeps each thread's order",
          "[access_log]") {
  temp_output out;
  REQUIRE(out.fd >= 0);
  auto sink = std::make_shared<cl::app::access_sink>(out.fd, 4096);
  auto log = std::make_shared<spdlog::logger>("access_test", sink);
  constexpr int threads = 4, each = 3000;
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t)
    writers.emplace_back([log, t] {
      for (int i = 0; i < each; ++i) log->info("t" + std::to_string(t) + " " + std::to_string(i) + " " + std::string(80, 'a' + t));
    });
  // Flushes beside the writers, as the once-a-second flusher runs.
  std::thread flusher{[log] {
    for (int i = 0; i < 50; ++i) log->flush();
  }};
  for (auto& w : writers) w.join();
  flusher.join();
  log->flush();  // the ended threads' last lines
  std::map<int, int> next;
  int lines = 0;
  for (const auto& line : out.lines()) {
    ++lines;
    std::istringstream fields{line};
    char tag = 0;
    int t = -1, i = -1;
    std::string pad;
    fields >> tag >> t >> i >> pad;
    REQUIRE(tag == 't');
    REQUIRE(pad == std::string(80, static_cast<char>('a' + t)));  // whole, not mixed with another line
    REQUIRE(i == next[t]);                                          // in its thread's order
    ++next[t];
  }
  CHECK(lines == threads * each);
}
