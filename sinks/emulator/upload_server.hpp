#pragma once

// A deliberately small HTTP/1.1 server for the emulator's signed upload URLs (internal to
// sinks/emulator): one request per connection, Content-Length bodies only (bounded),
// `Expect: 100-continue` honoured, one thread per connection (bounded), loopback-friendly.
// Debian's cpp-httplib is a compiled library that flytecd_core does not link, so the emulator
// carries this instead; it only has to be a faithful-enough object store endpoint.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon/common/result.hpp"
#include "sinks/emulator/admin.hpp"

namespace flytecd::sinks::emulator {

class UploadServer {
 public:
  using Handler = std::function<UploadReply(const UploadRequest&)>;

  // Binds host:port (IPv4 literal, "localhost", or "0.0.0.0"; port 0 = free port) and serves.
  // Errors: invalid_input (host), unavailable (bind/listen).
  static Result<std::unique_ptr<UploadServer>> start(const std::string& host, int port,
                                                     Handler handler);
  ~UploadServer();
  UploadServer(const UploadServer&) = delete;
  UploadServer& operator=(const UploadServer&) = delete;

  // Stops accepting, aborts open connections and joins all threads. Idempotent.
  void stop();
  int port() const { return m_port; }
  // The host part to put into URLs (wildcard binds become 127.0.0.1).
  const std::string& public_host() const { return m_public_host; }

 private:
  UploadServer(int fd, int port, std::string public_host, Handler handler);
  void accept_loop();
  void serve(int fd);

  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  int m_listen_fd;
  int m_port;
  std::string m_public_host;
  Handler m_handler;
  int m_wake[2] = {-1, -1};
  std::atomic<bool> m_stopping{false};
  std::thread m_acceptor;
  std::mutex m_mu;
  std::vector<Worker> m_workers;
  std::set<int> m_open_fds;
};

}  // namespace flytecd::sinks::emulator
