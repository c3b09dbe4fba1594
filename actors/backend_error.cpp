#include "actors/backend_error.hpp"

#include <caf/atom.hpp>
#include <caf/sec.hpp>
#include <spdlog/spdlog.h>

#include "storage/record_store.hpp"

namespace cl::actors {

std::string_view backend_error_name(backend_error e) {
  switch (e) {
    case backend_error::storage_failure: return "storage_failure";
    case backend_error::timeout: return "timeout";
    case backend_error::gone: return "gone";
    case backend_error::refused: return "refused";
    case backend_error::other: return "other";
    case backend_error::storage_full: return "storage_full";
    case backend_error::unstorable: return "unstorable";
  }
  return "other";
}

backend_error classify(const caf::error& e) {
  if (e.category() == caf::atom("backend") && e.code() >= 1 && e.code() <= 7) return static_cast<backend_error>(e.code());
  if (e == caf::sec::request_timeout) return backend_error::timeout;
  if (e == caf::sec::request_receiver_down) return backend_error::gone;
  return backend_error::other;
}

caf::error storage_error(const char* who, const std::exception& e) {
  if (dynamic_cast<const storage::value_unstorable*>(&e)) {
    spdlog::warn("{}: refused a value the store cannot hold: {}", who, e.what());
    return caf::make_error(backend_error::unstorable, "value not storable");
  }
  spdlog::error("{}: read failed: {}", who, e.what());
  return caf::make_error(backend_error::storage_failure, "storage read failed");
}

}  // namespace cl::actors
