#include "sinks/emulator/upload_server.hpp"
#include "daemon/common/text.hpp"

#include <arpa/inet.h>

#include <cctype>
#include <chrono>

namespace flytecd::sinks::emulator {
namespace {

using namespace std::chrono_literals;

constexpr size_t k_max_header_bytes = size_t{16} * 1024;
constexpr size_t k_max_connections = 256;

http::Response to_response(UploadReply reply) {
  http::Response r;
  r.status = reply.status;
  r.body = std::move(reply.body);
  r.content_type = "application/octet-stream";
  for (auto& [k, v] : reply.headers) {
    if (text::ascii_lower(k) == "content-type") {
      r.content_type = v;
    } else {
      r.headers.emplace_back(k, v);
    }
  }
  return r;
}

}  // namespace

Result<std::unique_ptr<UploadServer>> UploadServer::start(const std::string& host, int port,
                                                          Handler handler) {
  std::string bind_host = host;
  if (bind_host == "localhost" || bind_host == "::1") bind_host = "127.0.0.1";  // IPv4-only server
  if (bind_host.empty() || bind_host == "::" || bind_host == "[::]") bind_host = "0.0.0.0";
  in_addr probe{};
  if (inet_pton(AF_INET, bind_host.c_str(), &probe) != 1) {
    return make_error(ErrorCode::invalid_input,
                      "emulator: upload server: cannot bind \"" + host +
                          "\" (expected an IPv4 literal, localhost or 0.0.0.0)");
  }
  http::ListenerOptions options;
  options.listen = bind_host + ":" + std::to_string(port);
  options.max_body_bytes = k_max_upload_bytes;
  options.max_header_bytes = k_max_header_bytes;
  options.max_connections = k_max_connections;
  // Uploads are large: the body deadline is total, so it must cover 512 MiB on a slow link.
  options.header_timeout = 30s;
  options.body_timeout = 10min;
  options.idle_timeout = 30s;
  options.write_timeout = 5min;  // GET of a stored upload

  http::RequestHandler h;
  // Reject before the body is read: object stores want a length for a PUT.
  h.on_head = [](const http::Request& req) -> std::optional<http::Response> {
    if (req.method == "PUT" && !req.content_length && req.header("transfer-encoding").empty()) {
      return http::text_response(411, "Length Required\n");
    }
    return std::nullopt;
  };
  h.on_request = [handler = std::move(handler)](http::Request& req) {
    UploadRequest u;
    u.method = std::move(req.method);
    u.path = std::move(req.path);
    u.headers = std::move(req.headers);
    u.body = std::move(req.body);
    return to_response(handler(u));
  };
  auto listener = http::Listener::start(std::move(options), std::move(h));
  if (!listener) return listener.error().wrap("emulator: upload server");
  const std::string public_host = bind_host == "0.0.0.0" ? "127.0.0.1" : bind_host;
  return std::unique_ptr<UploadServer>(new UploadServer(std::move(*listener), public_host));
}

UploadServer::~UploadServer() { stop(); }

void UploadServer::stop() { m_listener->stop(); }

}  // namespace flytecd::sinks::emulator
