#include "domain/access_log.hpp"

#include "domain/json_text.hpp"

namespace cl::domain {

std::string access_log_line(const access_entry& e, std::string_view ts) {
  std::string line;
  line.reserve(320);
  line += "{\"ts\":";
  append_json_string(line, ts);
  line += ",\"type\":\"access\",\"listener\":";
  append_json_string(line, e.listener);
  line += ",\"request_id\":";
  append_json_string(line, e.request_id);
  line += ",\"method\":";
  append_json_string(line, e.method);
  line += ",\"route\":";
  append_json_string(line, e.route);
  line += ",\"status\":";
  line += std::to_string(e.status);
  // Milliseconds with three decimals, from whole microseconds (no printf per request).
  auto micros = static_cast<std::int64_t>(e.seconds * 1e6 + 0.5);
  auto fraction = std::to_string(1000 + micros % 1000);
  line += ",\"latency_ms\":";
  line += std::to_string(micros / 1000);
  line += '.';
  line.append(fraction, 1, 3);
  line += ",\"tenant\":";
  append_json_string(line, e.tenant);
  line += ",\"client_id\":";
  append_json_string(line, e.client_id);
  if (!e.reason.empty()) {
    line += ",\"reason\":";
    append_json_string(line, e.reason);
  }
  line += "}";
  return line;
}

}  // namespace cl::domain
