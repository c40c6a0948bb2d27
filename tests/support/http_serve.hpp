#pragma once

// An httplib server of a test, served on its own thread: started, and waited for until it
// accepts (boundedly), so that stop() can end it and the thread be joined.

#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace flytecd_test {

// Serves `server` (already bound) on `thread`; returns once it accepts. A server that never runs
// can be neither stopped nor joined: the test process gives up loudly.
template <typename Server>
void start_serving(Server& server, std::thread& thread) {
  thread = std::thread([&server] { server.listen_after_bind(); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server.is_running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (!server.is_running()) std::abort();
}

// Binds `server` to a free port of `host` and serves it as start_serving does; the port, or -1
// when it cannot bind (nothing is started then).
template <typename Server>
int serve_on_free_port(Server& server, std::thread& thread, const std::string& host = "127.0.0.1") {
  const int port = server.bind_to_any_port(host);
  if (port > 0) start_serving(server, thread);
  return port;
}

}  // namespace flytecd_test
