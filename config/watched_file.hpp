#pragma once
/// Configuration files read at start and again whenever they change (the JWKS file, the platform
/// policy, the group directory): the actors that own them poll once a second.

#include <optional>
#include <string>

namespace cl::config {

/// Reads a whole file; nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path);

/// Modification time of `path` in nanoseconds plus its size, to notice changes; 0 if missing.
long long file_signature(const std::string& path);

/// A configuration file read again whenever it changes (by `file_signature`).
class watched_file {
public:
  explicit watched_file(std::string path = {}) : path_(std::move(path)) {}

  struct change {
    bool changed = false;             ///< false: as at the last poll (or no path)
    std::optional<std::string> text;  ///< when changed: the new text, or none if unreadable
  };
  /// The first poll always reports a change (the file as found at start).
  change poll() {
    if (path_.empty()) return {};
    auto sig = file_signature(path_);
    if (polled_ && sig == signature_) return {};
    polled_ = true;
    signature_ = sig;
    return {true, read_file(path_)};
  }
  const std::string& path() const { return path_; }

private:
  std::string path_;
  long long signature_ = 0;
  bool polled_ = false;
};

}  // namespace cl::config
