#include "domain/records.hpp"

#include "domain/ids.hpp"
#include "domain/json_text.hpp"

#include <openssl/sha.h>

#include <chrono>
#include <cstdio>
#include <ctime>

namespace cl::domain {

std::string iso8601_at_ms(std::int64_t unix_ms) {
  auto secs = static_cast<std::time_t>(unix_ms / 1000);
  auto ms = static_cast<int>(unix_ms % 1000);
  if (unix_ms < 0) {  // before 1970: floor, not truncate
    secs -= 1;
    ms += 1000;
  }
  // Most calls (an access-log line, a write's timestamps) fall in the second of the call before:
  // its date and time are formatted once per thread and second.
  thread_local std::time_t cached_secs = -1;
  thread_local char cached[32];
  if (secs != cached_secs) {
    std::tm tm{};
    gmtime_r(&secs, &tm);
    std::snprintf(cached, sizeof cached, "%04d-%02d-%02dT%02d:%02d:%02d.", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec);
    cached_secs = secs;
  }
  std::string out{cached};
  out += static_cast<char>('0' + ms / 100);
  out += static_cast<char>('0' + ms / 10 % 10);
  out += static_cast<char>('0' + ms % 10);
  out += 'Z';
  return out;
}

std::string iso8601_now() {
  auto now = std::chrono::system_clock::now();
  return iso8601_at_ms(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count());
}

agent_ref derived_agent(const principal& who) {
  std::string input = who.tenant_id + '\0' + who.subject;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  // 128 of the digest's bits, like every other id.
  auto id = "agt_" + base32_lower(std::string_view{reinterpret_cast<const char*>(digest), 16});
  return {id, who.is_user() ? "HUMAN" : "SYSTEM"};
}

std::string agent_record_json(const agent_ref& agent, const principal& who, const std::string& at) {
  std::string out = "{\"id\":" + json_string(agent.id) + ",\"kind\":" + json_string(agent.kind)
                    + ",\"principal\":" + json_string(who.subject) + ",\"created\":" + json_string(at) + "}";
  return out;
}

std::string activity_record_json(const activity_input& a) {
  auto list = [](const std::vector<std::string>& items) {
    std::string s = "[";
    for (std::size_t i = 0; i < items.size(); ++i) s += (i ? "," : "") + json_string(items[i]);
    return s + "]";
  };
  return "{\"id\":" + json_string(a.id) + ",\"type\":" + json_string(a.type) + ",\"target\":{\"kind\":"
         + json_string(a.target_kind) + ",\"id\":" + json_string(a.target_id) + "},\"performed_by\":"
         + list(a.performed_by) + ",\"tooling\":" + list(a.tooling) + ",\"at\":" + json_string(a.at) + "}";
}

}  // namespace cl::domain
