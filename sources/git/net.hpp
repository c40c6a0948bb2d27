#pragma once

#include <chrono>
#include <memory>

namespace flytecd::sources::git::net {

// libgit2 1.5 has no network timeouts (GIT_OPT_SET_SERVER_CONNECT_TIMEOUT and
// GIT_OPT_SET_SERVER_TIMEOUT arrived in 1.7), so flytecd replaces libgit2's plain TCP stream
// (used by git://, http://, https:// under TLS, and ssh:// under libssh2) with one that
//   - connects with a timeout (non-blocking connect + poll), and
//   - registers its socket with the Deadline active on the calling thread, whose watchdog shuts
//     the socket down when the deadline passes, so any blocked read/write (ours, mbedTLS's or
//     libssh2's) returns at once and libgit2 fails the operation.
// DNS resolution (getaddrinfo) is bounded by the system resolver's own timeouts only.

// Installs the stream into libgit2 once per process. Call after git_libgit2_init().
// Returns false (with the libgit2 error set) if libgit2 refused it.
bool install_stream();

struct OperationState;

// Bounds every network operation started on this thread while it is alive. Not copyable; nest
// only by replacing (the inner one wins). Thread-safe with respect to its watchdog.
class Deadline {
 public:
  explicit Deadline(std::chrono::milliseconds timeout);
  ~Deadline();
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

  // True once the watchdog fired (the operation failed because it ran out of time).
  bool expired() const;

 private:
  std::shared_ptr<OperationState> m_state;
};

}  // namespace flytecd::sources::git::net
