#pragma once
/// The OpenAPI 3.1 document (docs/openapi.json), compiled into the binary.

#include <string_view>

namespace cl::http {

/// The document's bytes, exactly as in docs/openapi.json.
std::string_view openapi_document();

}  // namespace cl::http
