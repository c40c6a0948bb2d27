// The emulator's upload endpoint on the shared listener: large PUT bodies arrive whole, the
// upload limits hold, GET serves stored bytes.
#include "sinks/emulator/upload_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>

#include "daemon/common/http/client.hpp"
#include "tests/support/raw_tcp.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace emu = flytecd::sinks::emulator;
namespace http = flytecd::http;

namespace {

// Sends `request` whole and returns everything the server answers (5 s at most).
std::string raw_exchange(int port, const std::string& request) {
  return flytecd_test::raw_exchange(port, request, std::chrono::seconds(5), true);
}

}  // namespace

TEST_CASE("emulator upload server: a large PUT arrives whole through the shared listener",
          "[emulator]") {
  std::mutex mu;
  emu::UploadRequest seen;
  auto server = emu::UploadServer::start("localhost", 0, [&](const emu::UploadRequest& r) {
    std::lock_guard<std::mutex> lock(mu);
    seen = r;
    emu::UploadReply reply;
    reply.status = r.method == "PUT" ? 200 : 404;
    reply.headers["ETag"] = "\"x\"";
    return reply;
  });
  REQUIRE(server);
  CHECK((*server)->public_host() == "127.0.0.1");

  std::string data(24u << 20, '\0');  // larger than the daemon's 1 MiB default
  for (size_t i = 0; i < data.size(); i += 4096) data[i] = static_cast<char>(i / 4096);
  http::Client client(http::ClientOptions{});
  http::ClientRequest req;
  req.method = "PUT";
  req.url = "http://127.0.0.1:" + std::to_string((*server)->port()) + "/upload/p/d/f.tgz?sig=1";
  req.headers = {"Content-MD5: abc", "Content-Type: application/octet-stream"};
  size_t pos = 0;
  req.on_restart = [&] { pos = 0; };
  req.read_body = [&](char* buf, size_t n) -> flytecd::Result<size_t> {
    const size_t take = std::min(n, data.size() - pos);
    std::memcpy(buf, data.data() + pos, take);
    pos += take;
    return take;
  };
  req.body_size = data.size();
  auto r = client.execute(req);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->header("etag") == "\"x\"");
  std::lock_guard<std::mutex> lock(mu);
  CHECK(seen.method == "PUT");
  CHECK(seen.path == "/upload/p/d/f.tgz");
  CHECK(seen.headers["content-md5"] == "abc");
  CHECK(seen.body.size() == data.size());
  CHECK(seen.body == data);
}

TEST_CASE("emulator upload server: a PUT without a length is 411, an oversized one 413 unread",
          "[emulator]") {
  std::atomic<int> calls{0};
  auto server = emu::UploadServer::start("127.0.0.1", 0, [&](const emu::UploadRequest&) {
    ++calls;
    return emu::UploadReply{};
  });
  REQUIRE(server);
  const int port = (*server)->port();
  CHECK_THAT(raw_exchange(port, "PUT /upload/x HTTP/1.1\r\nHost: a\r\n\r\n"),
             Catch::StartsWith("HTTP/1.1 411 "));
  CHECK_THAT(raw_exchange(port,
                          "PUT /upload/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "0\r\n\r\n"),
             Catch::StartsWith("HTTP/1.1 411 "));
  CHECK_THAT(raw_exchange(port, "PUT /upload/x HTTP/1.1\r\nHost: a\r\nContent-Length: " +
                                    std::to_string(emu::k_max_upload_bytes + 1) + "\r\n\r\n"),
             Catch::StartsWith("HTTP/1.1 413 "));
  CHECK(calls == 0);
  CHECK_FALSE(emu::UploadServer::start(
      "example.invalid", 0, [](const emu::UploadRequest&) { return emu::UploadReply{}; }));
}

}  // namespace FLYTECD_UNITY_ID
