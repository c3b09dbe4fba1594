#pragma once
/// What a listener hands complete requests to. Implementations do no socket I/O.

#include "domain/exchange.hpp"

#include <functional>

namespace cl::http {

/// Answers requests of one listener.
class request_handler {
public:
  virtual ~request_handler() = default;

  /// Handles one request; `done` may be called from any thread, exactly once.
  virtual void handle(domain::api_request request, std::function<void(domain::api_reply)> done) = 0;
};

}  // namespace cl::http
