#pragma once
/// One access-log line (docs/operations.md, "Logs"): a JSON object per request, with what an
/// operator needs to find it and nothing a client sent as a secret: no token, no query string, no
/// body. Strings are JSON-escaped, so a control character in a claim or a path never splits a line.

#include <cstdint>
#include <string>
#include <string_view>

namespace cl::domain {

struct access_entry {
  std::string_view listener;    ///< "public" or "admin"
  std::string_view request_id;
  std::string_view method;      ///< as sent (HEAD stays HEAD); "-" for a request that was not HTTP
  std::string_view route;       ///< the route template, or "unmatched"
  int status = 0;
  double seconds = 0;           ///< from the request's read to its answer
  std::string_view tenant;      ///< the verified caller's, if any
  std::string_view client_id;
  std::string_view reason;      ///< an error answer's reason, else empty (not written)
};

/// `{"ts":..,"type":"access","listener":..,"request_id":..,"method":..,"route":..,"status":..,
/// "latency_ms":12.345,"tenant":..,"client_id":..[,"reason":..]}`, `ts` as given (ISO 8601).
std::string access_log_line(const access_entry& e, std::string_view ts);

}  // namespace cl::domain
