#pragma once

// HTTP/1.1 message values and the pure parts of the wire format: parsing a request head,
// rendering a response head, listen addresses. No I/O; http::Listener does the sockets.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/common/result.hpp"

namespace flytecd::http {

struct Request {
  std::string method;
  std::string path;                            // request target without the query string
  std::string query;                           // after '?', undecoded
  std::map<std::string, std::string> headers;  // lower-case names; repeats joined with ", "
  std::optional<size_t> content_length;
  std::string body;         // empty in RequestHandler::on_head
  std::string remote;       // peer "ip:port"
  bool keep_alive = false;  // HTTP/1.1 without "Connection: close"

  // The header's value, or "" when absent. `name` must be lower-case.
  std::string_view header(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

// A text/plain response with `body` as is.
Response text_response(int status, std::string body);
// The standard reason phrase ("Payload Too Large"), or "Unknown".
std::string_view reason_phrase(int status);

// Parses the request line and headers (`head` ends before the blank line) into `req`.
// False for anything malformed (the caller answers 400): a bad request line, an unknown
// version, a header name that is not a token (empty, blank before the colon, obs-fold), a bare
// CR/LF/NUL inside a line, a repeated or non-numeric Content-Length.
bool parse_request_head(std::string_view head, Request& req);

// The status line and headers of `r` (CR/LF stripped from values), ending in the blank line.
// `keep_alive` picks "Connection: keep-alive" or "Connection: close".
std::string render_response_head(const Response& r, bool keep_alive);

// Splits a listen address into host and port. Errors: invalid_input.
Result<std::pair<std::string, int>> parse_listen_address(std::string_view listen);

}  // namespace flytecd::http
