// The fast-source PUT streams its body from a reader (never a whole tar in memory): a real
// cpp-httplib server on a free loopback port receives it.
#include "daemon/registration/upload.hpp"
#include "tests/support/http_serve.hpp"

#include <httplib.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::registration;

namespace {

class PutServer {
 public:
  PutServer() {
    m_server.Put("/up", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(m_mu);
      ++m_puts;
      m_body = req.body;
      m_md5 = req.get_header_value("Content-MD5");
      m_md5_count = req.get_header_value_count("Content-MD5");
      res.status = 200;
    });
    m_port = flytecd_test::serve_on_free_port(m_server, m_thread);
    REQUIRE(m_port > 0);
  }
  ~PutServer() {
    m_server.stop();
    m_thread.join();
  }
  PutServer(const PutServer&) = delete;
  PutServer& operator=(const PutServer&) = delete;

  flytecd::sinks::UploadLocation where() const {
    return {"http://127.0.0.1:" + std::to_string(m_port) + "/up", "s3://bucket/fast.tar", {}};
  }
  int puts() {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_puts;
  }
  std::string body() {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_body;
  }
  std::pair<std::string, size_t> md5() {
    std::lock_guard<std::mutex> lock(m_mu);
    return {m_md5, m_md5_count};
  }

 private:
  httplib::Server m_server;
  int m_port = 0;
  std::thread m_thread;
  std::mutex m_mu;
  int m_puts = 0;
  std::string m_body, m_md5;
  size_t m_md5_count = 0;
};

// Yields `data` at most `chunk` bytes per call, then fails after `fail_after` bytes if set.
ChunkReader reader_over(const std::string& data, size_t chunk, size_t fail_after = SIZE_MAX) {
  auto pos = std::make_shared<size_t>(0);
  return [&data, chunk, fail_after, pos](char* buf, size_t n) -> flytecd::Result<size_t> {
    if (*pos >= fail_after)
      return flytecd::make_error(flytecd::ErrorCode::invalid_input, "fast: corrupt gzip stream");
    size_t take = std::min({n, chunk, data.size() - *pos});
    std::memcpy(buf, data.data() + *pos, take);
    *pos += take;
    return take;
  };
}

}  // namespace

TEST_CASE("upload: the fast source is streamed chunk by chunk with its length and MD5",
          "[registration]") {
  PutServer server;
  std::string data(300000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  std::array<unsigned char, 16> md5{};
  int opened = 0;
  auto s = put_upload(
      server.where(), data.size(),
      [&] {
        ++opened;
        return reader_over(data, 1000);
      },
      md5);
  INFO((s ? std::string() : s.error().message));
  REQUIRE(s.ok());
  CHECK(opened == 1);
  CHECK(server.puts() == 1);
  CHECK(server.body() == data);
}

TEST_CASE("upload: a reader error or a short body aborts the PUT, named, and is not retried",
          "[registration]") {
  PutServer server;
  const std::string data(100000, 'x');
  std::array<unsigned char, 16> md5{};
  int opened = 0;
  auto s = put_upload(
      server.where(), data.size(),
      [&] {
        ++opened;
        return reader_over(data, 4096, 50000);
      },
      md5);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message, Catch::Contains("corrupt gzip stream"));
  CHECK_THAT(s.error().message, Catch::Contains("s3://bucket/fast.tar"));
  CHECK(opened == 1);
  CHECK(server.puts() == 0);  // the server never saw a complete body

  // The reader ends before the promised length.
  const std::string half(50000, 'y');
  s = put_upload(
      server.where(), 100000, [&] { return reader_over(half, 4096); }, md5);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message, Catch::Contains("ended after 50000 of 100000 bytes"));
  CHECK(server.puts() == 0);
}

TEST_CASE("upload: a Content-MD5 the upload location asks for is sent once, not twice",
          "[registration]") {
  PutServer server;
  const std::string data(1000, 'z');
  std::array<unsigned char, 16> md5{};
  md5[0] = 1;
  auto where = server.where();
  where.headers["Content-MD5"] = base64(std::string(reinterpret_cast<const char*>(md5.data()), 16));
  auto s = put_upload(
      where, data.size(), [&] { return reader_over(data, 4096); }, md5);
  REQUIRE(s.ok());
  CHECK(server.md5() == std::pair<std::string, size_t>{where.headers["Content-MD5"], 1});
  CHECK(server.body() == data);
}

}  // namespace FLYTECD_UNITY_ID
