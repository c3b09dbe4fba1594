#pragma once
/// The blobs route group's configuration section (`blobs.*`), in `settings::groups`.

#include "config/settings.hpp"

#include <string>

namespace cl::app {

struct blobs_settings {
  /// The embedded S3-compatible object store's listener (port 0: ephemeral).
  config::endpoint embedded_listen{"127.0.0.1", 8081};
  std::string embedded_bucket = "contentlake";
  std::string embedded_region = "us-east-1";
  /// Empty: generated at first start into <data_dir>/identity (mode 0600).
  std::string embedded_access_key_id;
  std::string embedded_secret_access_key;
};

}  // namespace cl::app
