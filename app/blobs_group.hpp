#pragma once
/// The blobs route group's configuration section (`blobs.*`), in `settings::groups`.

#include "config/settings.hpp"

#include <cstdint>
#include <string>

namespace cl::app {

struct blobs_settings {
  std::string backend = "embedded";  ///< embedded | s3
  std::uint64_t multipart_threshold_bytes = 64ull << 20;
  std::uint64_t part_size_bytes = 16ull << 20;
  std::uint64_t max_blob_bytes = 50ull << 30;
  std::int64_t upload_url_ttl_seconds = 3600;
  /// The embedded S3-compatible object store's listener (port 0: ephemeral).
  config::endpoint embedded_listen{"127.0.0.1", 8081};
  std::string embedded_bucket = "contentlake";
  std::string embedded_region = "us-east-1";
  /// Empty: generated at first start into <data_dir>/identity (mode 0600).
  std::string embedded_access_key_id;
  std::string embedded_secret_access_key;
  /// scheme://host[:port] presigned URLs use; empty: http:// + the listen address (bound port).
  std::string embedded_public_url;
  /// blobs.backend = s3: any S3-compatible service.
  std::string s3_endpoint;
  std::string s3_region = "us-east-1";
  std::string s3_bucket;
  std::string s3_access_key_id;
  std::string s3_secret_access_key;
  std::string s3_secret_access_key_file;
  bool s3_path_style = true;
};

}  // namespace cl::app
