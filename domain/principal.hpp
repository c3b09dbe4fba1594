#pragma once
/// The verified caller: the claims of spec 5.2 after every check has passed.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cl::domain {

/// Who is calling, for which tenant, with which scopes. Built only by token verification.
struct principal {
  std::string subject;    ///< `u_` user or `a_` application
  std::string tenant_id;  ///< the single tenant the token is scoped to
  std::string client_id;  ///< `a_` application the token was obtained through
  std::string issuer;
  std::string token_id;   ///< `jti`
  std::vector<std::string> scopes;
  std::int64_t issued_at = 0;
  std::int64_t expires_at = 0;
  std::optional<std::int64_t> auth_time;  ///< human tokens only

  /// True when the token carries `scope` exactly.
  bool has_scope(std::string_view scope) const {
    return std::find(scopes.begin(), scopes.end(), scope) != scopes.end();
  }

  /// True for a person (`u_` subject), false for an application acting as itself.
  bool is_user() const { return subject.rfind("u_", 0) == 0; }
};

}  // namespace cl::domain
