#include "app/data_dir_lock.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace cl::app {

data_dir_lock::data_dir_lock(const std::string& data_dir, bool create) {
  auto path = data_dir + "/lock";
  // flock needs no write access: a lock file that is only read is opened read-only (its bytes and
  // times stay as they are).
  fd_ = ::open(path.c_str(), create ? O_RDWR | O_CREAT | O_CLOEXEC : O_RDONLY | O_CLOEXEC, 0600);
  if (fd_ < 0 && !create && errno == ENOENT) return;
  if (fd_ < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    auto why = errno;
    ::close(fd_);
    fd_ = -1;
    if (why == EWOULDBLOCK)
      throw std::runtime_error("the data dir " + data_dir + " is in use by another contentlake process (" + path +
                               " is locked); stop it first, or give this one a data dir of its own");
    throw std::runtime_error("cannot lock " + path + ": " + std::strerror(why));
  }
}

data_dir_lock::~data_dir_lock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the lock
}

}  // namespace cl::app
