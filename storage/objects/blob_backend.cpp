#include "storage/objects/blob_backend.hpp"

#include "domain/blob_upload.hpp"
#include "domain/sigv4.hpp"

namespace cl::storage {

namespace {

class embedded_backend final : public blob_backend {
public:
  explicit embedded_backend(embedded_backend_config cfg) : cfg_(std::move(cfg)) {}

  std::string presign_put(const std::string& key, std::uint64_t size, std::int64_t now,
                          std::int64_t seconds) const override {
    return url("PUT", key, {{"X-Cl-Length", std::to_string(size)}}, now, seconds);
  }
  std::string presign_part(const std::string& key, const std::string& upload_id, int number, std::uint64_t size,
                           std::int64_t now, std::int64_t seconds) const override {
    return url("PUT", key,
               {{"X-Cl-Length", std::to_string(size)}, {"partNumber", std::to_string(number)}, {"uploadId", upload_id}},
               now, seconds);
  }
  std::string presign_get(const std::string& key, const std::string& content_type, std::int64_t now,
                          std::int64_t seconds) const override {
    std::vector<std::pair<std::string, std::string>> query{{"response-content-type", content_type}};
    if (domain::active_content_type(content_type)) query.emplace_back("response-content-disposition", "attachment");
    return url("GET", key, std::move(query), now, seconds);
  }

  std::string create_multipart(const std::string& key, const std::string& content_type) override {
    return cfg_.files->create_upload(cfg_.bucket, key, content_type);
  }
  std::optional<std::vector<std::pair<int, object_info>>> list_parts(const std::string&,
                                                                     const std::string& upload_id) const override {
    return cfg_.files->parts(upload_id);
  }
  finish_result complete_multipart(const std::string& key, const std::string& upload_id,
                                   const expected_object& expect) override {
    if (!cfg_.files->upload(upload_id)) return check_single(key, expect);
    auto stored = cfg_.files->parts(upload_id);
    if (auto refused = check_parts(stored, expect)) return *refused;
    finish_result r;
    std::vector<std::pair<int, std::string>> listed;
    for (const auto& [n, info] : stored) listed.emplace_back(n, info.etag);
    // Parts are sized by the broker's layout; their total is what matters here.
    switch (cfg_.files->complete_upload(upload_id, listed, 0, r.object, expect.sha256)) {
      case complete_error::none: return r;
      case complete_error::checksum_mismatch: r.kind = finish_result::checksum_mismatch; return r;
      case complete_error::no_such_upload: return check_single(key, expect);  // completed meanwhile
      default: r.kind = finish_result::missing_parts; return r;
    }
  }
  finish_result check_single(const std::string& key, const expected_object& expect) const override {
    finish_result r;
    auto info = cfg_.files->stat(cfg_.bucket, key);
    if (!info) r.kind = finish_result::nothing_uploaded;
    else if (info->size != expect.size) r.kind = finish_result::size_mismatch, r.size = info->size;
    else if (info->sha256 != expect.sha256) r.kind = finish_result::checksum_mismatch;
    else r.object = *info;
    return r;
  }
  finish_result commit_single(const std::string& upload_key, const std::string& version_key,
                              const expected_object& expect, std::int64_t closed_until) override {
    if (upload_key == version_key) return check_single(upload_key, expect);
    if (cfg_.files->stat(cfg_.bucket, version_key)) return check_single(version_key, expect);
    // Closed first, then moved, then checked where it now lies: a PUT arriving meanwhile is
    // refused (or removed by the listener if it was already receiving), never committed.
    cfg_.files->close_key(cfg_.bucket, upload_key, closed_until);
    if (!cfg_.files->move(cfg_.bucket, upload_key, version_key)) {
      cfg_.files->reopen_key(cfg_.bucket, upload_key);
      return check_single(upload_key, expect);  // nothing uploaded
    }
    auto r = check_single(version_key, expect);
    if (r.kind != finish_result::done) {  // the upload stays in progress: its bytes go back
      cfg_.files->move(cfg_.bucket, version_key, upload_key);
      cfg_.files->reopen_key(cfg_.bucket, upload_key);
    }
    return r;
  }
  void abort(const std::string& key, const std::string& upload_id, std::int64_t closed_until) override {
    if (upload_id.empty()) {
      cfg_.files->close_key(cfg_.bucket, key, closed_until);
      cfg_.files->remove(cfg_.bucket, key);
    } else {
      cfg_.files->abort_upload(upload_id);
    }
  }

private:
  std::string url(const std::string& method, const std::string& key,
                  std::vector<std::pair<std::string, std::string>> query, std::int64_t now, std::int64_t seconds) const {
    return cfg_.public_url + domain::sigv4::presign({cfg_.access_key_id, cfg_.secret_access_key, cfg_.region}, method,
                                                    cfg_.host, "/" + cfg_.bucket + "/" + key, std::move(query), now,
                                                    seconds);
  }

  embedded_backend_config cfg_;
};

}  // namespace

std::optional<finish_result> check_parts(const std::vector<std::pair<int, object_info>>& stored,
                                         const expected_object& expect) {
  finish_result r;
  std::uint64_t total = 0;
  for (const auto& [n, info] : stored) total += info.size;
  auto next = stored.begin();
  for (int n = 1; n <= expect.part_count; ++n) {
    while (next != stored.end() && next->first < n) ++next;
    if (next == stored.end() || next->first != n) r.missing.push_back(n);
  }
  if (!r.missing.empty()) {
    if (r.missing.size() > 20) r.missing.resize(20);
    r.kind = finish_result::missing_parts;
    return r;
  }
  if (total != expect.size) {
    r.kind = finish_result::size_mismatch;
    r.size = total;
    return r;
  }
  return std::nullopt;
}

std::unique_ptr<blob_backend> make_embedded_backend(embedded_backend_config cfg) {
  return std::make_unique<embedded_backend>(std::move(cfg));
}

}  // namespace cl::storage
