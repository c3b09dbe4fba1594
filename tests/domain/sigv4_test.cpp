// SigV4 for S3: the AWS documentation's published examples, URLs presigned by boto3 (botocore
// 1.43, path-style, fixed inputs), and every way a request is refused.

#include "domain/sigv4.hpp"

#include <catch2/catch.hpp>

#include <map>

using namespace cl::domain::sigv4;

namespace {

// The credentials of the AWS documentation's examples ("Signature Calculations for the
// Authorization Header" and "Query String Authentication", S3 API reference).
constexpr const char* doc_key = "AKIAIOSFODNN7EXAMPLE";
constexpr const char* doc_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

// The credentials the boto3 URLs below were presigned with.
constexpr const char* test_key = "CLTESTKEY0000000001";
constexpr const char* test_secret = "c2VjcmV0LXRlc3Qta2V5LW5vdC1yZWFs";

/// Splits `/path?query` into a received request (decoded), as the embedded store will.
received_request parse(const std::string& method, const std::string& target,
                       std::map<std::string, std::string> headers = {{"host", "127.0.0.1:8081"}}) {
  received_request r;
  r.method = method;
  auto q = target.find('?');
  r.path = *uri_decode(target.substr(0, q));
  if (q != std::string::npos) {
    std::string rest = target.substr(q + 1);
    std::size_t start = 0;
    while (start <= rest.size()) {
      auto amp = rest.find('&', start);
      auto item = rest.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
      auto eq = item.find('=');
      r.query.emplace_back(*uri_decode(item.substr(0, eq)), eq == std::string::npos ? "" : *uri_decode(item.substr(eq + 1)));
      if (amp == std::string::npos) break;
      start = amp + 1;
    }
  }
  r.header = [headers](std::string_view name) -> std::optional<std::string> {
    auto it = headers.find(std::string{name});
    if (it == headers.end()) return std::nullopt;
    return it->second;
  };
  return r;
}

secret_lookup keys() {
  return [](std::string_view id) -> std::optional<std::string> {
    if (id == test_key) return std::string{test_secret};
    if (id == doc_key) return std::string{doc_secret};
    return std::nullopt;
  };
}

const std::string boto3_get =
  "/contentlake/t_demo/blb_1/v%201~x.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=CLTESTKEY0000000001%2F20261122"
  "%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261122T190018Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
  "&X-Amz-Signature=d49503989c510d4c88d0dd1626fb5fac8e995da2439366a134570dfe0103cdba";
const std::string boto3_part =
  "/contentlake/t_demo/blb_2/1?uploadId=upl_abc&partNumber=3&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential="
  "CLTESTKEY0000000001%2F20261122%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261122T190018Z&X-Amz-Expires=3600"
  "&X-Amz-SignedHeaders=host&X-Amz-Signature=56de370e84bf0705952aa42e02c508e2e018bb5fa0ebe6abbaebfeee12ee755b";
const std::int64_t boto3_time = *parse_amz_date("20261122T190018Z");

}  // namespace

TEST_CASE("the AWS documentation's GET Object example (Authorization header, Range) signs to its published signature",
          "[sigv4]") {
  request_parts p;
  p.method = "GET";
  p.path = "/test.txt";
  p.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
               {"Range", "bytes=0-9"},
               {"x-amz-content-sha256", std::string{empty_payload_sha256}},
               {"x-amz-date", "20130524T000000Z"}};
  p.payload_hash = std::string{empty_payload_sha256};
  credential_scope scope{"20130524", "us-east-1", "s3"};
  CHECK(sign(doc_secret, "20130524T000000Z", scope, p)
        == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST_CASE("the AWS documentation's presigned URL example signs to its published signature", "[sigv4]") {
  presign_request r;
  r.method = "GET";
  r.host = "examplebucket.s3.amazonaws.com";
  r.path = "/test.txt";
  r.access_key_id = doc_key;
  r.secret_access_key = doc_secret;
  r.region = "us-east-1";
  r.now = *parse_amz_date("20130524T000000Z");
  r.expires = 86400;
  auto url = presign(r);
  CHECK(url.substr(url.size() - 64) == "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
  CHECK(url.rfind("/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2F", 0) == 0);
}

TEST_CASE("URLs presigned by boto3 verify, and ours for the same inputs carry the same signature", "[sigv4]") {
  auto get = verify(parse("GET", boto3_get), keys(), "us-east-1", boto3_time + 10);
  INFO(get.detail);
  CHECK(get);
  CHECK(get.access_key_id == test_key);
  CHECK(get.payload_hash == unsigned_payload);
  CHECK(verify(parse("PUT", boto3_part), keys(), "us-east-1", boto3_time + 3000));

  presign_request r;
  r.method = "GET";
  r.host = "127.0.0.1:8081";
  r.path = "/contentlake/t_demo/blb_1/v 1~x.bin";
  r.access_key_id = test_key;
  r.secret_access_key = test_secret;
  r.region = "us-east-1";
  r.now = boto3_time;
  r.expires = 900;
  CHECK(presign(r).substr(presign(r).size() - 64) == boto3_get.substr(boto3_get.size() - 64));
  r.method = "PUT";
  r.path = "/contentlake/t_demo/blb_2/1";
  r.query = {{"uploadId", "upl_abc"}, {"partNumber", "3"}};
  r.expires = 3600;
  CHECK(presign(r).substr(presign(r).size() - 64) == boto3_part.substr(boto3_part.size() - 64));
}

TEST_CASE("what a presigned URL does not allow is refused, each for its own reason", "[sigv4]") {
  auto at = boto3_time + 10;
  SECTION("expired") {
    auto v = verify(parse("GET", boto3_get), keys(), "us-east-1", boto3_time + 901);
    CHECK(v.why == failure::expired);
    CHECK(v.detail == "Request has expired");
  }
  SECTION("another method than signed") {
    CHECK(verify(parse("PUT", boto3_get), keys(), "us-east-1", at).why == failure::signature_mismatch);
  }
  SECTION("another key than signed") {
    auto other = boto3_get;
    other.replace(other.find("blb_1"), 5, "blb_9");
    CHECK(verify(parse("GET", other), keys(), "us-east-1", at).why == failure::signature_mismatch);
  }
  SECTION("a tampered signature or expiry") {
    auto tampered = boto3_get;
    tampered[tampered.size() - 1] = tampered.back() == 'a' ? 'b' : 'a';
    CHECK(verify(parse("GET", tampered), keys(), "us-east-1", at).why == failure::signature_mismatch);
    auto longer = boto3_get;
    longer.replace(longer.find("X-Amz-Expires=900"), 17, "X-Amz-Expires=901");
    CHECK(verify(parse("GET", longer), keys(), "us-east-1", at).why == failure::signature_mismatch);
  }
  SECTION("a parameter added after signing") {
    CHECK(verify(parse("GET", boto3_get + "&partNumber=1"), keys(), "us-east-1", at).why == failure::signature_mismatch);
  }
  SECTION("another host than signed") {
    CHECK(verify(parse("GET", boto3_get, {{"host", "127.0.0.1:9999"}}), keys(), "us-east-1", at).why
          == failure::signature_mismatch);
  }
  SECTION("an unknown key, another region, no signature, a future date") {
    auto none = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
    CHECK(verify(parse("GET", boto3_get), none, "us-east-1", at).why == failure::unknown_key);
    CHECK(verify(parse("GET", boto3_get), keys(), "eu-west-3", at).why == failure::wrong_region);
    CHECK(verify(parse("GET", "/contentlake/x"), keys(), "us-east-1", at).why == failure::missing);
    CHECK(verify(parse("GET", boto3_get), keys(), "us-east-1", boto3_time - 3600).why == failure::not_yet_valid);
  }
  SECTION("malformed parameters") {
    auto bad = boto3_get;
    bad.replace(bad.find("X-Amz-Expires=900"), 17, "X-Amz-Expires=9e9");
    CHECK(verify(parse("GET", bad), keys(), "us-east-1", at).why == failure::malformed);
    CHECK(verify(parse("GET", boto3_get + "&X-Amz-Signature=00"), keys(), "us-east-1", at).why == failure::malformed);
  }
}

TEST_CASE("a request signed in its Authorization header verifies, with its declared payload hash", "[sigv4]") {
  request_parts p;
  p.method = "PUT";
  p.path = "/contentlake/t_demo/blb_3/1";
  auto body_hash = sha256_hex("hello");
  p.headers = {{"host", "127.0.0.1:8081"}, {"x-amz-content-sha256", body_hash}, {"x-amz-date", "20261122T190018Z"}};
  p.payload_hash = body_hash;
  credential_scope scope{"20261122", "us-east-1", "s3"};
  auto signature = sign(test_secret, "20261122T190018Z", scope, p);
  std::map<std::string, std::string> headers{
    {"host", "127.0.0.1:8081"},
    {"x-amz-content-sha256", body_hash},
    {"x-amz-date", "20261122T190018Z"},
    {"authorization", "AWS4-HMAC-SHA256 Credential=" + std::string{test_key}
                        + "/20261122/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                          "Signature=" + signature}};
  auto v = verify(parse("PUT", "/contentlake/t_demo/blb_3/1", headers), keys(), "us-east-1", boto3_time + 60);
  INFO(v.detail);
  CHECK(v);
  CHECK(v.payload_hash == body_hash);
  // A header-signed request lives only the allowed skew (15 minutes).
  CHECK(verify(parse("PUT", "/contentlake/t_demo/blb_3/1", headers), keys(), "us-east-1", boto3_time + 901).why
        == failure::expired);
  headers["x-amz-content-sha256"] = sha256_hex("other");
  CHECK(verify(parse("PUT", "/contentlake/t_demo/blb_3/1", headers), keys(), "us-east-1", boto3_time + 60).why
        == failure::signature_mismatch);
}

TEST_CASE("sign_headers makes what the verifier accepts, extra signed headers included", "[sigv4]") {
  header_sign_request r;
  r.method = "PUT";
  r.host = "127.0.0.1:8081";
  r.path = "/contentlake/t/blb_4/upl 1";
  r.query = {{"partNumber", "2"}, {"uploadId", "mpu_x"}};
  r.headers = {{"x-amz-copy-source", "/contentlake/t/blb_4/a"}};
  r.payload_hash = sha256_hex("");
  r.access_key_id = test_key;
  r.secret_access_key = test_secret;
  r.region = "us-east-1";
  r.now = boto3_time;
  std::map<std::string, std::string> headers{{"host", r.host}, {"x-amz-copy-source", "/contentlake/t/blb_4/a"}};
  for (const auto& [k, v] : sign_headers(r)) {
    std::string lower;
    for (char c : k) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    headers[lower] = v;
  }
  CHECK(headers.at("authorization").find("SignedHeaders=host;x-amz-content-sha256;x-amz-copy-source;x-amz-date,")
        != std::string::npos);
  auto target = "/contentlake/t/blb_4/upl%201?partNumber=2&uploadId=mpu_x";
  auto v = verify(parse("PUT", target, headers), keys(), "us-east-1", boto3_time + 5);
  INFO(v.detail);
  CHECK(v);
  headers["x-amz-copy-source"] = "/contentlake/t/blb_4/b";  // a signed header changed on the way
  CHECK(verify(parse("PUT", target, headers), keys(), "us-east-1", boto3_time + 5).why == failure::signature_mismatch);
}

TEST_CASE("uri_encode keeps only unreserved characters (and '/' in paths)", "[sigv4]") {
  CHECK(uri_encode("a b/c~d-e_f.g+h=i", true) == "a%20b/c~d-e_f.g%2Bh%3Di");
  CHECK(uri_encode("a/b", false) == "a%2Fb");
  CHECK(uri_decode("a%2Fb%20c") == "a/b c");
  CHECK_FALSE(uri_decode("a%2"));
  CHECK(amz_date(*parse_amz_date("20130524T000000Z")) == "20130524T000000Z");
  CHECK_FALSE(parse_amz_date("2013-05-24T00:00:00Z"));
}
