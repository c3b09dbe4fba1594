#include "actors/directory.hpp"

#include <atomic>

namespace cl::actors {

std::size_t next_mailbox_slot() {
  static std::atomic<std::size_t> next{0};
  return next++;
}

}  // namespace cl::actors
