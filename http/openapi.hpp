#pragma once
/// The OpenAPI 3.1 document (docs/openapi.json), compiled into the binary.

#include <string_view>

namespace cl::http {

/// The document's bytes, exactly as in docs/openapi.json.
std::string_view openapi_document();

/// The shipped platform policy (config/policy.json), the fallback when the configured file is absent.
std::string_view builtin_policy_document();

}  // namespace cl::http
