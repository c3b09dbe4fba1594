#pragma once
/// What a listener hands requests to. Implementations do no socket I/O.

#include "domain/exchange.hpp"

#include <functional>
#include <memory>
#include <optional>

namespace cl::http {

/// What the header of a request earned when it was admitted (the verified caller, the rate
/// limiter's yes), handed back with the complete request so neither is asked twice. Defined by
/// the handler; opaque to the listener.
struct admission;

/// Answers requests of one listener.
class request_handler {
public:
  using reply_fn = std::function<void(domain::api_reply)>;
  /// `refusal` set: answer it and never read the body. Otherwise read the body and hand the request
  /// to `handle` with `ticket` (which may be null).
  using admit_fn = std::function<void(std::optional<domain::api_reply> refusal, std::shared_ptr<const admission> ticket)>;

  virtual ~request_handler() = default;

  /// The header of a request whose body has not been read (`request.body` is empty): refuses it
  /// (route, authentication, scope, rate limit) or admits it. `done` may be called from any
  /// thread, exactly once. By default every header is admitted.
  virtual void admit(const domain::api_request& request, admit_fn done);

  /// Handles one complete request; `ticket` is what `admit` gave for its header (null when the
  /// request had no body to read). `done` may be called from any thread, exactly once.
  virtual void handle(domain::api_request request, std::shared_ptr<const admission> ticket, reply_fn done) = 0;
};

}  // namespace cl::http
