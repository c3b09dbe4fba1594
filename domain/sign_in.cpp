#include "domain/sign_in.hpp"

namespace cl::domain {

std::optional<api_error> recent_sign_in_refusal(const principal& who, std::int64_t now, std::int64_t max_age_seconds,
                                                std::string_view operation) {
  if (!who.is_user())
    return api_error{error_id::human_required,
                     "Only a person may " + std::string{operation} + "; an application token cannot.",
                     {{"sub", "must be a u_ user"}}};
  if (!who.auth_time || *who.auth_time < now - max_age_seconds)
    return api_error{error_id::auth_stale,
                     "To " + std::string{operation} + ", sign in again: the last sign-in must be at most "
                       + std::to_string(max_age_seconds) + " s old.",
                     {{"auth_time", who.auth_time ? "older than " + std::to_string(max_age_seconds) + " s" : "absent"}}};
  return std::nullopt;
}

std::string bearer_challenge(const api_error& error, std::int64_t max_age_seconds) {
  switch (error.id) {
    case error_id::token_missing: return "Bearer";
    case error_id::token_invalid:
      return R"(Bearer error="invalid_token", error_description="The access token is malformed or not trusted")";
    case error_id::token_expired:
      return R"(Bearer error="invalid_token", error_description="The access token expired")";
    case error_id::auth_stale:
      return R"(Bearer error="insufficient_user_authentication", error_description="A more recent sign-in is required", max_age=)"
             + std::to_string(max_age_seconds);
    default: return entry(error.id).http_status == 401 ? "Bearer" : "";
  }
}

}  // namespace cl::domain
