// The memory backend as a component (storage/backend.hpp): the same typed stores as LMDB's on
// ordered maps, gone when the process ends; one node. For trying the service and for tests: it
// shows that a backend is a folder and one registration line.

#include "storage/backend.hpp"
#include "storage/kv/memory_store.hpp"

namespace cl::storage {

namespace {

class memory_backend_impl final : public backend {
public:
  using backend::backend;

  std::shared_ptr<record_store> open_records() override { return open_memory_store(); }

  std::shared_ptr<record_store> open_records_to_read() override {
    throw std::runtime_error("storage.backend=memory holds no records another process can read");
  }

  std::string described() const override { return "this process's memory"; }
};

}  // namespace

backend_entry memory_backend() {
  backend_entry e;
  e.name = "memory";
  e.summary = "in this process's memory, gone when it stops; one node";
  e.traits.in_data_dir = false;
  e.make = &make_backend<memory_backend_impl>;
  e.at = [](config::settings base, const std::string&) {
    base.storage.backend = "memory";
    return base;
  };
  return e;
}

}  // namespace cl::storage
