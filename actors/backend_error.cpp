#include "actors/backend_error.hpp"

#include <caf/atom.hpp>
#include <caf/sec.hpp>

namespace cl::actors {

std::string_view backend_error_name(backend_error e) {
  switch (e) {
    case backend_error::storage_failure: return "storage_failure";
    case backend_error::timeout: return "timeout";
    case backend_error::gone: return "gone";
    case backend_error::refused: return "refused";
    case backend_error::other: return "other";
    case backend_error::storage_full: return "storage_full";
  }
  return "other";
}

backend_error classify(const caf::error& e) {
  if (e.category() == caf::atom("backend") && e.code() >= 1 && e.code() <= 6) return static_cast<backend_error>(e.code());
  if (e == caf::sec::request_timeout) return backend_error::timeout;
  if (e == caf::sec::request_receiver_down) return backend_error::gone;
  return backend_error::other;
}

}  // namespace cl::actors
