#pragma once

// The emulator's endpoint for signed upload URLs (internal to sinks/emulator), served by the
// shared http::Listener: Content-Length bodies up to k_max_upload_bytes (a PUT without one gets
// 411, chunked bodies 411, larger ones 413 before any byte is read), `Expect: 100-continue`
// honoured, one event thread for every connection. It only has to be a faithful-enough object
// store endpoint.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "daemon/common/http/listener.hpp"
#include "daemon/common/result.hpp"
#include "sinks/emulator/admin.hpp"

namespace flytecd::sinks::emulator {

// The largest upload body accepted (held in memory while it is stored).
constexpr size_t k_max_upload_bytes = size_t{512} * 1024 * 1024;

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
  int port() const { return m_listener->port(); }
  // The host part to put into URLs (wildcard binds become 127.0.0.1).
  const std::string& public_host() const { return m_public_host; }

 private:
  UploadServer(std::unique_ptr<http::Listener> listener, std::string public_host)
      : m_listener(std::move(listener)), m_public_host(std::move(public_host)) {}
  std::unique_ptr<http::Listener> m_listener;
  std::string m_public_host;
};

}  // namespace flytecd::sinks::emulator
