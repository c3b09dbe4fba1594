#include "storage/objects/direct_buffer.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace cl::storage {

direct_buffer::direct_buffer(std::size_t size, bool huge_pages) : size_((size + page - 1) / page * page) {
  // Mapped with a page of slack, then trimmed to a 2 MiB boundary: a huge page needs one.
  auto mapped = ::mmap(nullptr, size_ + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc{};
  auto start = reinterpret_cast<std::uintptr_t>(mapped);
  auto aligned = (start + page - 1) / page * page;
  if (aligned > start) ::munmap(mapped, aligned - start);
  if (auto end = start + size_ + page; end > aligned + size_) ::munmap(reinterpret_cast<void*>(aligned + size_), end - aligned - size_);
  data_ = reinterpret_cast<char*>(aligned);
  // Advice only: where huge pages are off ("never"), 4 KiB pages serve the same bytes.
  if (huge_pages) ::madvise(data_, size_, MADV_HUGEPAGE);
}

direct_buffer::~direct_buffer() {
  ::munmap(data_, size_);
}

}  // namespace cl::storage
