#pragma once
// A spdlog sink that keeps lines in memory for assertions.

#include <spdlog/sinks/base_sink.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cl::testing {

class capture_sink final : public spdlog::sinks::base_sink<std::mutex> {
public:
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> guard{mutex_};
    return lines_;
  }

protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    lines_.emplace_back(formatted.data(), formatted.size());
  }
  void flush_() override {}

private:
  std::vector<std::string> lines_;
};

/// The sink behind the "access" logger in the end-to-end test binary.
inline std::shared_ptr<capture_sink> access_log() {
  static auto sink = std::make_shared<capture_sink>();
  return sink;
}

}  // namespace cl::testing
