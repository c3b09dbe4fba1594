#include "http/answers.hpp"

#include "domain/sign_in.hpp"
#include "http/resource_metadata.hpp"

namespace cl::http::answers {

namespace bhttp = boost::beast::http;

namespace {

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
  return res;
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
  if (status != 304 && status != 204) res->content_length(length);
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
