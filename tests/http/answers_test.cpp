// The session's own writer of whole answers (http/answers.hpp `whole_bytes`) against Beast's
// serializer of the same answer (`whole`): the same bytes, header and body, for every kind of
// answer the service gives, or no bytes at all where it leaves the answer to Beast.

#include "http/answers.hpp"

#include <boost/beast/http/write.hpp>
#include <catch2/catch.hpp>

#include <sstream>

using namespace cl;
namespace answers = cl::http::answers;

namespace {

/// What Beast writes for `whole(r, status, f)`.
std::string by_beast(domain::api_reply r, int status, const answers::framing& f) {
  std::ostringstream out;
  out << *answers::whole(r, status, f);
  return out.str();
}

/// What the session's writer writes, or "(none)".
std::string by_hand(domain::api_reply r, int status, const answers::framing& f) {
  auto bytes = answers::whole_bytes(r, status, f);
  return bytes ? bytes->header + bytes->body : std::string{"(none)"};
}

domain::api_reply resource_read() {
  domain::api_reply r;
  r.body = R"({"id":"res_1","title":"Tides"})";
  r.headers = {{"ETag", "\"sha256:abc\""},
               {"Cache-Control", "private, max-age=1"},
               {"Vary", "Accept"},
               {"Content-Usage", "train-ai=n"},
               {"Link", "</v0/content-lake/resources/res_1/rights/odrl>; rel=\"odrl:policy\""},
               {"tdm-reservation", "1"},
               {"Content-Lake-Position", "42"}};
  return r;
}

}  // namespace

TEST_CASE("whole answers written by hand are Beast's bytes", "[http][answers]") {
  answers::framing keep{11, true, "req_1"};
  answers::framing close{11, false, "req_2"};
  answers::framing old_keep{10, true, "req_3"};
  answers::framing old_close{10, false, "req_4"};
  for (const auto& f : {keep, close, old_keep, old_close}) {
    CAPTURE(f.version, f.keep_alive);
    auto ok = resource_read();
    CHECK(by_hand(ok, 200, f) == by_beast(ok, 200, f));

    domain::api_reply not_modified;
    not_modified.status = 304;
    not_modified.headers = {{"ETag", "\"sha256:abc\""}, {"Cache-Control", "private, max-age=1"}};
    CHECK(by_hand(not_modified, 304, f) == by_beast(not_modified, 304, f));
    // RFC 9110 8.6: no Content-Length on a 304 (ours would not be the 200's) nor on a 204.
    CHECK(by_hand(not_modified, 304, f).find("Content-Length") == std::string::npos);

    auto denied = domain::api_reply::failure(domain::error_id::access_denied, "No grant on this Resource.");
    CHECK(by_hand(denied, 403, f) == by_beast(denied, 403, f));

    auto limited = domain::api_reply::failure(domain::error_id::rate_limited, "Slow down.");
    limited.retry_after_seconds = 3;
    limited.headers = {{"WWW-Authenticate", "Bearer"}};
    CHECK(by_hand(limited, 429, f) == by_beast(limited, 429, f));

    // A name set twice, in another case: the later one stays, at the end (Beast's `set`).
    domain::api_reply twice;
    twice.content_type = "text/markdown; charset=utf-8";
    twice.body = "# Tides\n";
    twice.headers = {{"Vary", "Accept"}, {"ETag", "\"x\""}, {"vary", "Accept, Origin"}, {"X-Request-Id", "ignored"}};
    CHECK(by_hand(twice, 200, f) == by_beast(twice, 200, f));

    domain::api_reply no_type;
    no_type.content_type.clear();
    no_type.status = 204;
    CHECK(by_hand(no_type, 204, f) == by_beast(no_type, 204, f));
    CHECK(by_hand(no_type, 204, f).find("Content-Length") == std::string::npos);

    domain::api_reply unusual;  // a status without a reason phrase of its own
    unusual.body = "{}";
    CHECK(by_hand(unusual, 299, f) == by_beast(unusual, 299, f));
  }
}

TEST_CASE("answers the hand writer does not know are left to Beast, body intact", "[http][answers]") {
  answers::framing f{11, true, "req_1"};
  domain::api_reply framed;
  framed.body = "{}";
  framed.headers = {{"Connection", "upgrade"}};
  CHECK_FALSE(answers::whole_bytes(framed, 200, f));
  CHECK(framed.body == "{}");  // still there for `whole`
  domain::api_reply bodied_304;
  bodied_304.body = "x";
  CHECK_FALSE(answers::whole_bytes(bodied_304, 304, f));
  CHECK(bodied_304.body == "x");
  answers::framing http2{20, true, "req_1"};
  domain::api_reply plain;
  CHECK_FALSE(answers::whole_bytes(plain, 200, http2));
}
