#pragma once
/// Why a concern actor did not give a plan its answer, as one error enum CAF knows: an operator
/// tells a storage failure from a timeout, an actor that is gone (restarting) or a refusal in the
/// log and in `contentlake_backend_errors_total{concern,kind}`. Clients see 503
/// BACKEND_UNAVAILABLE, except for a full store: 507 STORAGE_FULL (waiting does not help), and a
/// value the store cannot hold: 400 INVALID_ARGUMENT (retrying does not help).

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>

#include <cstdint>
#include <exception>
#include <string_view>

namespace cl::actors {

enum class backend_error : std::uint8_t {
  storage_failure = 1,  ///< the store threw (disk, LMDB): logged where it happened
  timeout = 2,          ///< no answer before the request's deadline
  gone = 3,             ///< the actor is down (being restarted by the supervisor)
  refused = 4,          ///< the actor refused the request (e.g. a policy or key set it cannot use)
  other = 5,            ///< anything else CAF reported
  storage_full = 6,     ///< the store has no room (LMDB's map is full): nothing of the write was stored
  unstorable = 7,       ///< the store cannot hold a value of the request as given (400 INVALID_ARGUMENT)
};

/// Every kind, in order (the labels of `contentlake_backend_errors_total{kind}`).
inline constexpr backend_error backend_error_kinds[] = {
  backend_error::storage_failure, backend_error::timeout, backend_error::gone,      backend_error::refused,
  backend_error::other,           backend_error::storage_full, backend_error::unstorable};

/// Every concern a plan asks through `ask` (its `concern`): `contentlake_backend_errors_total`
/// shows each with each kind from the start, at 0. tests/actors/layering_test.cpp checks that
/// every `ask` names one of these.
inline constexpr std::string_view backend_concerns[] = {"access",          "blob broker",     "change feed", "change log",
                                                        "contracts",       "mcp",             "record reader",
                                                        "rights resolver", "search sessions", "webhooks",
                                                        "writer"};

/// Stable label of a kind (`storage_failure`, `timeout`, `gone`, `refused`, `other`).
std::string_view backend_error_name(backend_error e);

/// Which kind an error from a concern actor is.
backend_error classify(const caf::error& e);

/// The error a concern actor answers for a store's exception `e` (a storage failure, or a value
/// the store cannot hold), after logging it with `who`.
caf::error storage_error(const char* who, const std::exception& e);

}  // namespace cl::actors

CAF_ERROR_CODE_ENUM(cl::actors::backend_error, "backend")
