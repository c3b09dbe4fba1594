#pragma once
/// A configuration file an actor keeps in force while the service runs (the JWKS file, the
/// platform policy, the group directory): parsed at start, re-read when it changes, a rejected
/// version logged and never applied. The owning actor polls `recheck` once a second
/// (actors/recheck.hpp) and publishes the value when it changed.

#include "config/watched_file.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include <functional>
#include <string>
#include <utility>
#include <variant>

namespace cl::config {

template <class T>
class watched_config {
public:
  /// The file's text -> its value, or what is wrong with it.
  using parser = std::function<std::variant<T, std::string>(const std::string&)>;
  /// A short description of a value for log lines (e.g. the policy's version).
  using describer = std::function<std::string(const T&)>;
  /// What a file that disappears while running means.
  enum class on_missing {
    keep,       ///< keep the value in force (logged as an error)
    fall_back,  ///< go back to the fallback (e.g. no groups)
  };

  /// `what` names the file in log lines ("rights: policy file"); an empty `path` watches nothing
  /// and keeps `fallback`.
  watched_config(std::string what, std::string path, parser parse, T fallback, on_missing missing,
                 describer describe = {})
    : what_(std::move(what)),
      file_(std::move(path)),
      parse_(std::move(parse)),
      fallback_(std::move(fallback)),
      value_(fallback_),
      missing_(missing),
      describe_(std::move(describe)) {}

  /// The value the file gives now for a start-up check: the fallback when there is no path or no
  /// file; an error naming the file when it is there but invalid (the service refuses to start).
  std::variant<T, std::string> check() const {
    if (file_.path().empty()) return fallback_;
    auto text = read_file(file_.path());
    if (!text) return fallback_;
    auto parsed = parse_(*text);
    if (auto* error = std::get_if<std::string>(&parsed)) return file_.path() + ": " + *error;
    return parsed;
  }

  /// At the owning actor's (re)start: the file as found now. A file that has turned invalid since
  /// the service started leaves the fallback in force (logged) rather than keeping the actor down.
  const T& start() {
    value_ = fallback_;
    auto change = file_.poll();
    if (!change.changed) return value_;  // no file configured
    if (!change.text) {
      std::error_code ec;
      spdlog::warn("{} {} not found; using {} until it appears", what_,
                   std::filesystem::absolute(file_.path(), ec).string(), shown(fallback_));
      return value_;
    }
    adopt(*change.text, "using " + shown(fallback_) + " until it is fixed");
    return value_;
  }

  /// Re-reads the file if it changed since the last poll; true when the value in force changed.
  bool recheck() {
    auto change = file_.poll();
    if (!change.changed) return false;
    if (!change.text) {
      if (missing_ == on_missing::keep) {
        spdlog::error("{} {} cannot be read; keeping {}", what_, file_.path(), shown(value_));
        return false;
      }
      spdlog::warn("{} {} is gone; back to {}", what_, file_.path(), shown(fallback_));
      value_ = fallback_;
      return true;
    }
    return adopt(*change.text, "keeping " + shown(value_));
  }

  const T& current() const { return value_; }
  /// Whether a file is configured (an actor with none needs no recheck).
  bool watching() const { return !file_.path().empty(); }
  const std::string& path() const { return file_.path(); }

private:
  /// Parses `text` and puts it in force; when it is invalid, logs that (and `otherwise`) and
  /// leaves the value as it is. True when the value changed.
  bool adopt(const std::string& text, const std::string& otherwise) {
    auto parsed = parse_(text);
    if (auto* error = std::get_if<std::string>(&parsed)) {
      spdlog::error("{} {} rejected ({}); {}", what_, file_.path(), *error, otherwise);
      return false;
    }
    value_ = std::get<T>(std::move(parsed));
    spdlog::info("{} {} in effect: {}", what_, file_.path(), shown(value_));
    return true;
  }

  std::string shown(const T& v) const { return describe_ ? describe_(v) : std::string{"the version in force"}; }

  std::string what_;
  watched_file file_;
  parser parse_;
  T fallback_;
  T value_;
  on_missing missing_;
  describer describe_;
};

}  // namespace cl::config
