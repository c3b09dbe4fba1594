#include "domain/sigv4.hpp"

#include "domain/base64url.hpp"
#include "domain/contract.hpp"

#include <openssl/crypto.h>
#include "domain/aead.hpp"
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace cl::domain::sigv4 {

namespace {

std::string hmac(std::string_view key, std::string_view data) {
  return hmac_sha256(key, data);
}

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Header value as canonicalised: trimmed, inner runs of spaces collapsed to one.
std::string trimmed(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

std::string signing_key(std::string_view secret, const credential_scope& scope) {
  auto k_date = hmac("AWS4" + std::string{secret}, scope.date);
  auto k_region = hmac(k_date, scope.region);
  auto k_service = hmac(k_region, scope.service);
  return hmac(k_service, "aws4_request");
}

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

/// The pieces of `AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...` or of the
/// X-Amz-* query parameters.
struct claimed {
  std::string access_key, date, region, service, terminator;
  std::vector<std::string> signed_headers;
  std::string signature, when;
  std::int64_t expires = 0;  ///< presigned only
};

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    auto at = s.find(sep, start);
    out.emplace_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

bool parse_credential(std::string_view text, claimed& c) {
  auto parts = split(text, '/');
  if (parts.size() != 5) return false;
  c.access_key = parts[0];
  c.date = parts[1];
  c.region = parts[2];
  c.service = parts[3];
  c.terminator = parts[4];
  return !c.access_key.empty() && c.date.size() == 8 && c.terminator == "aws4_request";
}

bool parse_signed_headers(std::string_view text, claimed& c) {
  c.signed_headers = split(text, ';');
  for (const auto& h : c.signed_headers)
    if (h.empty() || h != lower(h)) return false;
  return std::find(c.signed_headers.begin(), c.signed_headers.end(), "host") != c.signed_headers.end();
}

std::optional<std::string> query_value(const received_request& r, std::string_view name) {
  std::optional<std::string> found;
  for (const auto& [k, v] : r.query)
    if (k == name) {
      if (found) return std::nullopt;  // repeated: not a usable signature
      found = v;
    }
  return found;
}

verdict refuse(failure why, std::string detail, std::string access_key = {}) {
  verdict v;
  v.why = why;
  v.detail = std::move(detail);
  v.access_key_id = std::move(access_key);
  return v;
}

/// From the query string of a presigned URL.
std::optional<claimed> claimed_in_query(const received_request& r, std::string& why) {
  claimed c;
  auto get = [&](std::string_view name) { return query_value(r, name); };
  auto alg = get("X-Amz-Algorithm"), cred = get("X-Amz-Credential"), date = get("X-Amz-Date"),
       expires = get("X-Amz-Expires"), headers = get("X-Amz-SignedHeaders"), sig = get("X-Amz-Signature");
  if (!alg || *alg != algorithm) return why = "X-Amz-Algorithm must be AWS4-HMAC-SHA256", std::nullopt;
  if (!cred || !parse_credential(*cred, c)) return why = "X-Amz-Credential is malformed", std::nullopt;
  if (!date) return why = "X-Amz-Date is missing", std::nullopt;
  c.when = *date;
  if (!expires || expires->empty() || expires->size() > 7
      || !std::all_of(expires->begin(), expires->end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return why = "X-Amz-Expires must be a number of seconds", std::nullopt;
  c.expires = std::stoll(*expires);
  if (c.expires < 1 || c.expires > max_expires_seconds)
    return why = "X-Amz-Expires must be between 1 and 604800 seconds", std::nullopt;
  if (!headers || !parse_signed_headers(*headers, c)) return why = "X-Amz-SignedHeaders is malformed", std::nullopt;
  if (!sig || sig->size() != 64) return why = "X-Amz-Signature is malformed", std::nullopt;
  c.signature = *sig;
  return c;
}

/// From an `Authorization: AWS4-HMAC-SHA256 ...` header.
std::optional<claimed> claimed_in_header(const received_request& r, const std::string& auth, std::string& why) {
  claimed c;
  if (auth.rfind(std::string{algorithm} + " ", 0) != 0) return why = "the Authorization header is not AWS4-HMAC-SHA256", std::nullopt;
  std::map<std::string, std::string> fields;
  for (auto& part : split(std::string_view{auth}.substr(algorithm.size() + 1), ',')) {
    auto item = trimmed(part);
    auto eq = item.find('=');
    if (eq == std::string::npos) return why = "the Authorization header is malformed", std::nullopt;
    fields[item.substr(0, eq)] = item.substr(eq + 1);
  }
  if (!fields.count("Credential") || !parse_credential(fields["Credential"], c))
    return why = "the Authorization header's Credential is malformed", std::nullopt;
  if (!fields.count("SignedHeaders") || !parse_signed_headers(fields["SignedHeaders"], c))
    return why = "the Authorization header's SignedHeaders is malformed", std::nullopt;
  if (!fields.count("Signature") || fields["Signature"].size() != 64)
    return why = "the Authorization header's Signature is malformed", std::nullopt;
  c.signature = fields["Signature"];
  auto date = r.header("x-amz-date");
  if (!date) return why = "the request has no x-amz-date header", std::nullopt;
  c.when = *date;
  return c;
}

}  // namespace

std::string uri_encode(std::string_view text, bool keep_slash) {
  static constexpr char upper_hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(upper_hex[c >> 4]);
      out.push_back(upper_hex[c & 15]);
    }
  }
  return out;
}

std::optional<std::string> uri_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size() || !std::isxdigit(static_cast<unsigned char>(text[i + 1]))
        || !std::isxdigit(static_cast<unsigned char>(text[i + 2])))
      return std::nullopt;
    out.push_back(static_cast<char>(std::stoi(std::string{text.substr(i + 1, 2)}, nullptr, 16)));
    i += 2;
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  return hex_encode(std::string_view{reinterpret_cast<const char*>(digest), sizeof digest});
}

std::string amz_date(std::int64_t unix_seconds) {
  auto iso = format_utc(unix_seconds);  // YYYY-MM-DDTHH:MM:SSZ
  std::string out;
  for (char c : iso)
    if (c != '-' && c != ':') out.push_back(c);
  return out;
}

std::optional<std::int64_t> parse_amz_date(std::string_view t) {
  if (t.size() != 16 || t[8] != 'T' || t[15] != 'Z') return std::nullopt;
  std::string iso = std::string{t.substr(0, 4)} + "-" + std::string{t.substr(4, 2)} + "-" + std::string{t.substr(6, 2)}
                    + "T" + std::string{t.substr(9, 2)} + ":" + std::string{t.substr(11, 2)} + ":"
                    + std::string{t.substr(13, 2)} + "Z";
  return parse_utc(iso);
}

std::string canonical_request(const request_parts& p) {
  std::vector<std::pair<std::string, std::string>> query;
  for (const auto& [k, v] : p.query)
    if (k != "X-Amz-Signature") query.emplace_back(uri_encode(k, false), uri_encode(v, false));
  std::sort(query.begin(), query.end());
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& [k, v] : p.headers) headers.emplace_back(lower(k), trimmed(v));
  std::sort(headers.begin(), headers.end());
  std::string out = p.method + "\n" + uri_encode(p.path.empty() ? "/" : p.path, true) + "\n";
  for (std::size_t i = 0; i < query.size(); ++i) out += (i ? "&" : "") + query[i].first + "=" + query[i].second;
  out += "\n";
  std::string names;
  for (const auto& [k, v] : headers) {
    out += k + ":" + v + "\n";
    names += (names.empty() ? "" : ";") + k;
  }
  out += "\n" + names + "\n" + p.payload_hash;
  return out;
}

std::string string_to_sign(std::string_view when, const credential_scope& scope, std::string_view canonical) {
  return std::string{algorithm} + "\n" + std::string{when} + "\n" + scope.text() + "\n" + sha256_hex(canonical);
}

std::string sign(std::string_view secret, std::string_view when, const credential_scope& scope,
                 const request_parts& parts) {
  auto mac = hmac(signing_key(secret, scope), string_to_sign(when, scope, canonical_request(parts)));
  return hex_encode(mac);
}

namespace {

/// What every signature starts from: the time, its credential scope and the request's line.
struct signing {
  std::string when;
  credential_scope scope;
  request_parts parts;
};

signing start_signing(std::int64_t now, const std::string& region, const std::string& method, const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& query) {
  signing s;
  s.when = amz_date(now);
  s.scope = credential_scope{s.when.substr(0, 8), region, "s3"};
  s.parts.method = method;
  s.parts.path = path;
  s.parts.query = query;
  return s;
}

}  // namespace

std::string presign(const presign_request& r) {
  auto [when, scope, parts] = start_signing(r.now, r.region, r.method, r.path, r.query);
  parts.query.emplace_back("X-Amz-Algorithm", std::string{algorithm});
  parts.query.emplace_back("X-Amz-Credential", r.access_key_id + "/" + scope.text());
  parts.query.emplace_back("X-Amz-Date", when);
  parts.query.emplace_back("X-Amz-Expires", std::to_string(r.expires));
  parts.query.emplace_back("X-Amz-SignedHeaders", "host");
  parts.headers = {{"host", r.host}};
  parts.payload_hash = std::string{unsigned_payload};
  auto signature = sign(r.secret_access_key, when, scope, parts);
  std::vector<std::pair<std::string, std::string>> encoded;
  for (const auto& [k, v] : parts.query) encoded.emplace_back(uri_encode(k, false), uri_encode(v, false));
  std::sort(encoded.begin(), encoded.end());
  std::string out = uri_encode(r.path, true) + "?";
  for (const auto& [k, v] : encoded) out += k + "=" + v + "&";
  return out + "X-Amz-Signature=" + signature;
}

std::string presign(const credentials& who, std::string method, std::string host, std::string path,
                    std::vector<std::pair<std::string, std::string>> query, std::int64_t now, std::int64_t seconds) {
  presign_request r;
  r.method = std::move(method);
  r.host = std::move(host);
  r.path = std::move(path);
  r.query = std::move(query);
  r.access_key_id = who.access_key_id;
  r.secret_access_key = who.secret_access_key;
  r.region = who.region;
  r.now = now;
  r.expires = seconds;
  return presign(r);
}

std::vector<std::pair<std::string, std::string>> sign_headers(const header_sign_request& r) {
  auto [when, scope, parts] = start_signing(r.now, r.region, r.method, r.path, r.query);
  parts.headers = r.headers;
  parts.headers.emplace_back("host", r.host);
  parts.headers.emplace_back("x-amz-content-sha256", r.payload_hash);
  parts.headers.emplace_back("x-amz-date", when);
  parts.payload_hash = r.payload_hash;
  std::vector<std::string> names;
  for (const auto& [k, v] : parts.headers) {
    std::string lower;
    for (char c : k) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    names.push_back(lower);
  }
  std::sort(names.begin(), names.end());
  std::string signed_headers;
  for (const auto& n : names) signed_headers += (signed_headers.empty() ? "" : ";") + n;
  auto signature = sign(r.secret_access_key, when, scope, parts);
  return {{"x-amz-date", when},
          {"x-amz-content-sha256", r.payload_hash},
          {"Authorization", std::string{algorithm} + " Credential=" + r.access_key_id + "/" + scope.text()
                              + ", SignedHeaders=" + signed_headers + ", Signature=" + signature}};
}

verdict verify(const received_request& r, const secret_lookup& secrets, std::string_view region, std::int64_t now) {
  auto auth = r.header("authorization");
  bool in_query = query_value(r, "X-Amz-Signature").has_value() || query_value(r, "X-Amz-Algorithm").has_value();
  if (!auth && !in_query) return refuse(failure::missing, "the request is not signed");
  if (auth && in_query) return refuse(failure::malformed, "the request is signed twice (header and query)");
  std::string why;
  auto c = in_query ? claimed_in_query(r, why) : claimed_in_header(r, *auth, why);
  if (!c) return refuse(failure::malformed, why);
  auto when = parse_amz_date(c->when);
  if (!when || c->when.substr(0, 8) != c->date) return refuse(failure::malformed, "X-Amz-Date is malformed or not the credential's date", c->access_key);
  if (c->service != "s3") return refuse(failure::malformed, "the credential's service must be s3", c->access_key);
  if (c->region != region)
    return refuse(failure::wrong_region, "the credential's region is not " + std::string{region}, c->access_key);
  auto secret = secrets(c->access_key);
  if (!secret) return refuse(failure::unknown_key, "the access key id is not known", c->access_key);
  if (*when > now + allowed_skew_seconds) return refuse(failure::not_yet_valid, "Request is not valid yet", c->access_key);
  if (in_query ? now > *when + c->expires : now > *when + allowed_skew_seconds)
    return refuse(failure::expired, "Request has expired", c->access_key);

  request_parts parts;
  parts.method = r.method;
  parts.path = r.path;
  parts.query = r.query;
  for (const auto& name : c->signed_headers) {
    auto value = r.header(name);
    if (!value) return refuse(failure::malformed, "a signed header is missing: " + name, c->access_key);
    parts.headers.emplace_back(name, *value);
  }
  if (in_query) {
    parts.payload_hash = std::string{unsigned_payload};
  } else {
    auto declared = r.header("x-amz-content-sha256");
    parts.payload_hash = declared ? *declared : std::string{empty_payload_sha256};
  }
  credential_scope scope{c->date, c->region, c->service};
  if (!same(sign(*secret, c->when, scope, parts), c->signature))
    return refuse(failure::signature_mismatch,
                  "The request signature we calculated does not match the signature you provided.", c->access_key);
  verdict ok;
  ok.access_key_id = c->access_key;
  ok.payload_hash = parts.payload_hash;
  return ok;
}

}  // namespace cl::domain::sigv4
