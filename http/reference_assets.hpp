#pragma once
/// The pinned Redoc bundle (docs/vendor/redoc/, fetched by scripts/fetch-redoc), compiled into the binary
/// like the OpenAPI document (http/openapi.hpp).

#include <string_view>

namespace cl::http {

/// The bytes of docs/vendor/redoc/redoc.standalone.js.
std::string_view redoc_bundle();

}  // namespace cl::http
