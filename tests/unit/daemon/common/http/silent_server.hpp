#pragma once

// Test-only: a TCP listener on a free loopback port that accepts connections and never answers
// (a registry or API that black-holes requests after the handshake). Connections are held open
// until the server is destroyed.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

namespace test_support {

class SilentServer {
 public:
  SilentServer() {
    m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(m_fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(m_fd, 16) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    m_port = ntohs(a.sin_port);
    m_thread = std::thread([this] {
      std::vector<int> held;
      while (!m_stop) {
        pollfd p{m_fd, POLLIN, 0};
        if (::poll(&p, 1, 50) > 0) {
          const int c = ::accept(m_fd, nullptr, nullptr);
          if (c >= 0) {
            held.push_back(c);
            ++m_accepted;
          }
        }
      }
      for (int c : held) ::close(c);
    });
  }
  ~SilentServer() {
    m_stop = true;
    m_thread.join();
    ::close(m_fd);
  }
  SilentServer(const SilentServer&) = delete;
  SilentServer& operator=(const SilentServer&) = delete;
  std::string url(const std::string& path) const { return "http://" + host() + path; }
  std::string host() const { return "127.0.0.1:" + std::to_string(m_port); }
  int accepted() const { return m_accepted; }

 private:
  int m_fd = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_accepted{0};
  std::thread m_thread;
};

}  // namespace test_support
