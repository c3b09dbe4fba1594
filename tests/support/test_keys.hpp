#pragma once
// Test signing keys and token builders shared by unit and end-to-end tests.

#include "domain/jwt.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <string>

namespace cl::testing {

inline constexpr const char* test_issuer = "https://issuer.test.invalid";

/// One RSA-2048 key per test process (generation is slow), with a stable kid.
inline const domain::private_key& test_key() {
  static const domain::private_key key = domain::private_key::generate_rsa(2048);
  return key;
}

inline const std::string& test_kid() {
  static const std::string kid = test_key().thumbprint();
  return kid;
}

inline std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// A valid claim set for the test issuer; tests edit it to build hostile tokens.
inline boost::json::object valid_claims(std::string sub = "u_alice") {
  auto now = unix_now();
  boost::json::object c{{"iss", test_issuer},
                        {"sub", sub},
                        {"tenant_id", "t_test"},
                        {"scopes", boost::json::array{"content-lake.read"}},
                        {"client_id", sub.rfind("a_", 0) == 0 ? sub : std::string{"a_testapp"}},
                        {"iat", now},
                        {"exp", now + 600},
                        {"jti", "jti_test"}};
  if (sub.rfind("u_", 0) == 0) c["auth_time"] = now;
  return c;
}

inline boost::json::object valid_header() {
  return boost::json::object{{"alg", "RS256"}, {"typ", "JWT"}, {"kid", test_kid()}};
}

/// Signs `claims` under `header` with the test key.
inline std::string make_token(const boost::json::object& claims, const boost::json::object& header = valid_header()) {
  return domain::sign_compact(boost::json::serialize(header), boost::json::serialize(claims), test_key());
}

/// A valid token with these scopes for tenant `tenant`.
inline std::string token_with(std::string scopes_text, std::string tenant = "t_test", std::string sub = "u_alice") {
  auto c = valid_claims(sub);
  boost::json::array scopes;
  std::size_t start = 0;
  while (start < scopes_text.size()) {
    auto end = scopes_text.find(' ', start);
    if (end == std::string::npos) end = scopes_text.size();
    if (end > start) scopes.emplace_back(scopes_text.substr(start, end - start));
    start = end + 1;
  }
  c["scopes"] = std::move(scopes);
  c["tenant_id"] = tenant;
  return make_token(c);
}

}  // namespace cl::testing
