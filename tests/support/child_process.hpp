#pragma once
// A child process running the `contentlake` binary, its standard output and error captured; it is
// killed (SIGKILL) if still running when the object goes.

#include "tests/support/paths.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

namespace cl::testing {

/// A child process with its standard output and error captured.
struct child {
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  std::string out, err;

  child(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    const std::string binary = contentlake_binary(), checkout = source_dir();  // read before the fork
    int out_pipe[2], err_pipe[2];
    REQUIRE(::pipe(out_pipe) == 0);
    REQUIRE(::pipe(err_pipe) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(out_pipe[1], 1);
      ::dup2(err_pipe[1], 2);
      ::close(out_pipe[0]);
      ::close(err_pipe[0]);
      for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
      // From the checkout, as a user runs it: the default policy and group directory are there.
      if (::chdir(checkout.c_str()) != 0) ::_exit(126);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(binary.c_str()));
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(binary.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    out_fd = out_pipe[0];
    err_fd = err_pipe[0];
  }

  ~child() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    ::close(out_fd);
    ::close(err_fd);
  }

  /// Reads output until `pattern` appears in stderr or the deadline passes.
  bool wait_for_stderr(const std::regex& pattern, std::smatch& m, int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds{timeout_ms};
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::regex_search(err, m, pattern)) return true;
      if (!pump(100)) break;
    }
    return std::regex_search(err, m, pattern);
  }

  /// Reads whatever is available within `timeout_ms`; false when both pipes are closed.
  bool pump(int timeout_ms) {
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    if (::poll(fds, 2, timeout_ms) < 0) return false;
    bool open = false;
    char buf[4096];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents & (POLLIN | POLLHUP)) {
        auto n = ::read(fds[i].fd, buf, sizeof buf);
        if (n > 0) {
          (i == 0 ? out : err).append(buf, static_cast<std::size_t>(n));
          open = true;
        }
      } else {
        open = true;
      }
    }
    return open;
  }

  /// Waits (bounded) for exit; the exit status, or -1 on timeout.
  int wait_exit(int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds{timeout_ms};
    while (std::chrono::steady_clock::now() < deadline) {
      pump(20);
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        while (pump(10)) {
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
    return -1;
  }
};


}  // namespace cl::testing
