#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "daemon/common/result.hpp"

namespace flytecd {

// An exclusive advisory lock (flock) on a file, held for the object's lifetime; the holder's pid
// is written into the file so a waiter can name it. The kernel drops the lock when the process
// dies (SIGKILL included), so a crash never leaves a stale lock. Not copyable.
class FileLock {
 public:
  // Takes the lock on `path` (created 0600 if missing), waiting up to `wait`. Errors:
  // conflict (held by another process after `wait`; the message names its pid and `what`),
  // internal (the file cannot be opened).
  static Result<std::unique_ptr<FileLock>> acquire(const std::string& path,
                                                   std::chrono::milliseconds wait,
                                                   const std::string& what);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  explicit FileLock(int fd) : m_fd(fd) {}
  int m_fd;
};

}  // namespace flytecd
