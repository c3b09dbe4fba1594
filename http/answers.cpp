#include "http/answers.hpp"

#include "domain/sign_in.hpp"
#include "http/resource_metadata.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/status.hpp>

#include <algorithm>
#include <array>

namespace cl::http::answers {

namespace bhttp = boost::beast::http;
using boost::beast::iequals;

namespace {

/// An answer that has no content (RFC 9110 15.2, 15.3.5, 15.4.5): no body, and no Content-Length.
bool bodiless(int status) { return status < 200 || status == 204 || status == 304; }

template <class Message>
void set_common_headers(Message& res, const domain::api_reply& r, const framing& f) {
  res.version(f.version);
  for (const auto& [name, value] : r.headers) res.set(name, value);
  if (r.retry_after_seconds > 0) res.set(bhttp::field::retry_after, std::to_string(r.retry_after_seconds));
  res.set("X-Request-Id", boost::beast::string_view{f.request_id.data(), f.request_id.size()});
  res.keep_alive(f.keep_alive);
}

}  // namespace

void add_challenge(domain::api_reply& r, std::int64_t recent_sign_in_seconds, const resource_metadata* metadata,
                   const std::string& host) {
  if (!r.error) return;
  auto challenge = domain::bearer_challenge(*r.error, recent_sign_in_seconds);
  if (auto url = metadata ? metadata->url_for(host) : std::string{}; !url.empty())
    challenge += (challenge == "Bearer" ? " " : ", ") + std::string{"resource_metadata=\""} + url + "\"";
  r.headers.emplace_back("WWW-Authenticate", std::move(challenge));
}

std::shared_ptr<whole_answer> whole(domain::api_reply& r, int status, const framing& f) {
  auto res = std::make_shared<whole_answer>();
  res->result(static_cast<unsigned>(status));
  if (r.error) {
    res->body() = domain::render_error_body(*r.error);
    res->set(bhttp::field::content_type, "application/json");
    res->set(bhttp::field::cache_control, "no-store");
  } else {
    res->body() = std::move(r.body);
    if (!r.content_type.empty()) res->set(bhttp::field::content_type, r.content_type);
  }
  set_common_headers(*res, r, f);
  res->prepare_payload();
  // RFC 9110 8.6: no Content-Length on a 1xx or 204, nor on a 304 unless it is the 200's length
  // (not known here); Beast's prepare_payload writes 0 on them.
  if (bodiless(status)) res->content_length(boost::none);
  return res;
}

namespace {

/// "HTTP/1.x NNN Reason\r\n" for every status, as Beast writes it (its reason phrases), made once.
const std::string& status_line(unsigned version, int status) {
  static const auto lines = [] {
    std::array<std::array<std::string, 1000>, 2> out;
    for (unsigned v = 0; v < 2; ++v)
      for (int code = 0; code < 1000; ++code) {
        auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(code));
        out[v][static_cast<std::size_t>(code)] = std::string{v == 0 ? "HTTP/1.0 " : "HTTP/1.1 "} + std::to_string(code)
                                                 + " " + std::string{reason.data(), reason.size()} + "\r\n";
      }
    return out;
  }();
  return lines[version == 11 ? 1 : 0][static_cast<std::size_t>(status)];
}

/// Header lines in the order Beast's `set` leaves them: a name set again goes, with every line of
/// that name (any case), to the end.
class header_lines {
public:
  void set(std::string_view name, std::string_view value) {
    lines_.erase(std::remove_if(lines_.begin(), lines_.end(), [&](const auto& l) { return iequals(l.first, name); }),
                 lines_.end());
    lines_.emplace_back(name, value);
  }
  bool has(std::string_view name) const {
    return std::any_of(lines_.begin(), lines_.end(), [&](const auto& l) { return iequals(l.first, name); });
  }
  void write(std::string& out) const {
    for (const auto& [name, value] : lines_) {
      out.append(name).append(": ").append(value).append("\r\n");
    }
    out.append("\r\n");
  }

private:
  std::vector<std::pair<std::string_view, std::string_view>> lines_;
};

}  // namespace

std::optional<answer_bytes> whole_bytes(domain::api_reply& r, int status, const framing& f) {
  if (f.version != 10 && f.version != 11) return std::nullopt;
  if (status < 100 || status > 999) return std::nullopt;
  std::optional<answer_bytes> out{answer_bytes{}};
  out->body = r.error ? domain::render_error_body(*r.error) : std::move(r.body);
  if (bodiless(status) && !out->body.empty()) {
    if (!r.error) r.body = std::move(out->body);  // left for `whole`, which refuses it as Beast does
    return std::nullopt;
  }
  header_lines lines;
  if (r.error) {
    lines.set("Content-Type", "application/json");
    lines.set("Cache-Control", "no-store");
  } else if (!r.content_type.empty()) {
    lines.set("Content-Type", r.content_type);
  }
  for (const auto& [name, value] : r.headers) {
    if (iequals(name, "Connection") || iequals(name, "Content-Length") || iequals(name, "Transfer-Encoding")) {
      if (!r.error) r.body = std::move(out->body);
      return std::nullopt;
    }
    lines.set(name, value);
  }
  std::string retry = r.retry_after_seconds > 0 ? std::to_string(r.retry_after_seconds) : std::string{};
  if (!retry.empty()) lines.set("Retry-After", retry);
  lines.set("X-Request-Id", f.request_id);
  if (f.version == 11 && !f.keep_alive) lines.set("Connection", "close");
  if (f.version == 10 && f.keep_alive) lines.set("Connection", "keep-alive");
  auto length = std::to_string(out->body.size());
  if (!bodiless(status)) lines.set("Content-Length", length);
  out->header.reserve(512);
  out->header = status_line(f.version, status);
  lines.write(out->header);
  return out;
}

std::shared_ptr<header_answer> head(const domain::api_reply& r, int status, const framing& f) {
  auto res = std::make_shared<header_answer>();
  res->result(static_cast<unsigned>(status));
  std::size_t length = r.body.size();
  if (r.error) {
    length = domain::render_error_body(*r.error).size();
    res->set(bhttp::field::content_type, "application/json");
    res->set(bhttp::field::cache_control, "no-store");
  } else if (!r.content_type.empty()) {
    res->set(bhttp::field::content_type, r.content_type);
  }
  set_common_headers(*res, r, f);
  if (!bodiless(status)) res->content_length(length);
  return res;
}

std::shared_ptr<header_answer> stream_header(const domain::api_reply& r, const framing& f) {
  auto header = std::make_shared<header_answer>();
  header->result(static_cast<unsigned>(r.status));
  if (!r.content_type.empty()) header->set(bhttp::field::content_type, r.content_type);
  set_common_headers(*header, r, f);
  header->chunked(true);
  return header;
}

}  // namespace cl::http::answers
