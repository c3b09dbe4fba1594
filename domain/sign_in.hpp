#pragma once
/// How the service asks a caller to authenticate: the recent sign-in rule of spec 5.4 for
/// sensitive human-only operations, and the `WWW-Authenticate` challenge of every 401.

#include "domain/errors.hpp"
#include "domain/principal.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cl::domain {

/// Spec 5.4: `who` may perform a sensitive human-only operation (docs/api.md "Recent sign-in")
/// at Unix second `now` when it is a `u_` person whose last interactive sign-in (`auth_time`)
/// lies at most `max_age_seconds` back. Otherwise the refusal: 403 HUMAN_REQUIRED for an `a_`
/// application, 401 AUTH_STALE for a person whose sign-in is older or not stated. `operation`
/// names what was asked, for the message.
std::optional<api_error> recent_sign_in_refusal(const principal& who, std::int64_t now, std::int64_t max_age_seconds,
                                                std::string_view operation);

/// The `WWW-Authenticate` value of a 401 carrying `error` (RFC 6750 section 3, RFC 9470):
/// `Bearer` when no token was sent; `Bearer error="invalid_token", ...` for a refused token;
/// `Bearer error="insufficient_user_authentication", ..., max_age=N` for AUTH_STALE. Empty
/// for errors that are not 401.
std::string bearer_challenge(const api_error& error, std::int64_t max_age_seconds);

}  // namespace cl::domain
