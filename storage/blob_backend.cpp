#include "storage/blob_backend.hpp"

#include "domain/sigv4.hpp"

namespace cl::storage {

namespace {

class embedded_backend final : public blob_backend {
public:
  explicit embedded_backend(embedded_backend_config cfg) : cfg_(std::move(cfg)) {}

  std::string presign_put(const std::string& key, std::int64_t now, std::int64_t seconds) const override {
    return url("PUT", key, {}, now, seconds);
  }
  std::string presign_part(const std::string& key, const std::string& upload_id, int number, std::int64_t now,
                           std::int64_t seconds) const override {
    return url("PUT", key, {{"partNumber", std::to_string(number)}, {"uploadId", upload_id}}, now, seconds);
  }
  std::string presign_get(const std::string& key, std::int64_t now, std::int64_t seconds) const override {
    return url("GET", key, {}, now, seconds);
  }

  std::string create_multipart(const std::string& key, const std::string& content_type) override {
    return cfg_.files->create_upload(cfg_.bucket, key, content_type);
  }
  std::vector<std::pair<int, object_info>> list_parts(const std::string& upload_id) const override {
    return cfg_.files->parts(upload_id);
  }
  complete_error complete_multipart(const std::string& upload_id, std::uint64_t min_part_size,
                                    object_info& out) override {
    std::vector<std::pair<int, std::string>> all;
    for (const auto& [n, info] : cfg_.files->parts(upload_id)) all.emplace_back(n, info.etag);
    if (all.empty()) return cfg_.files->upload(upload_id) ? complete_error::invalid_part : complete_error::no_such_upload;
    return cfg_.files->complete_upload(upload_id, all, min_part_size, out);
  }
  bool abort_multipart(const std::string& upload_id) override { return cfg_.files->abort_upload(upload_id); }
  std::optional<object_info> stat(const std::string& key) const override { return cfg_.files->stat(cfg_.bucket, key); }

private:
  std::string url(const std::string& method, const std::string& key,
                  std::vector<std::pair<std::string, std::string>> query, std::int64_t now, std::int64_t seconds) const {
    domain::sigv4::presign_request r;
    r.method = method;
    r.host = cfg_.host;
    r.path = "/" + cfg_.bucket + "/" + key;
    r.query = std::move(query);
    r.access_key_id = cfg_.access_key_id;
    r.secret_access_key = cfg_.secret_access_key;
    r.region = cfg_.region;
    r.now = now;
    r.expires = seconds;
    return cfg_.public_url + domain::sigv4::presign(r);
  }

  embedded_backend_config cfg_;
};

}  // namespace

std::unique_ptr<blob_backend> make_embedded_backend(embedded_backend_config cfg) {
  return std::make_unique<embedded_backend>(std::move(cfg));
}

}  // namespace cl::storage
