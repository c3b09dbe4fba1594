#pragma once
/// Memory for writes that bypass the page cache (object_files::incoming::write): aligned to
/// whole 2 MiB pages and advised to the kernel as huge pages. A direct write is split into one
/// request segment per physically contiguous piece of its memory; from 4 KiB pages a 2 MiB write
/// is 512 pieces, more than a device takes in one request (virtio-blk here: 254), so it went to
/// the disk as several smaller requests. Backed by huge pages, it is one or two.

#include <cstddef>

namespace cl::storage {

class direct_buffer {
public:
  /// At least `size` bytes (rounded up to whole 2 MiB pages); throws std::bad_alloc. Without
  /// `huge_pages`, 4 KiB pages (for a small body: a huge page is zeroed whole at its first touch,
  /// ~0.1 ms for 2 MiB, where a few small pages are enough).
  explicit direct_buffer(std::size_t size, bool huge_pages = true);
  ~direct_buffer();
  direct_buffer(const direct_buffer&) = delete;
  direct_buffer& operator=(const direct_buffer&) = delete;

  char* data() const { return data_; }
  std::size_t size() const { return size_; }

  static constexpr std::size_t page = std::size_t{2} << 20;

private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cl::storage
