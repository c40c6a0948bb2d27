#include "daemon/common/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace flytecd {

namespace {
std::string read_holder(int fd) {
  char buf[32] = {};
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.find_first_not_of("0123456789") == std::string::npos ? pid : std::string();
}
}  // namespace

Result<std::unique_ptr<FileLock>> FileLock::acquire(const std::string& path,
                                                    std::chrono::milliseconds wait,
                                                    const std::string& what) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return make_error(ErrorCode::internal, "lock " + path + ": " + std::strerror(errno));
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      std::string why = std::strerror(errno);
      ::close(fd);
      return make_error(ErrorCode::internal, "lock " + path + ": " + why);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string holder = read_holder(fd);
      ::close(fd);
      return make_error(
          ErrorCode::conflict,
          what + " is in use by another flytecd process" +
              (holder.empty() ? std::string() : " (pid " + holder + ")") + " holding " + path +
              "; waited " + std::to_string(wait.count() / 1000) +
              " s. Expected one writer per state directory: stop the other process, or give "
              "this one another --state-dir");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The lock is held either way; only the pid shown to a waiter is missing.
  }
  return std::unique_ptr<FileLock>(new FileLock(fd));
}

FileLock::~FileLock() { ::close(m_fd); }

}  // namespace flytecd
