#include "daemon/common/http/wire.hpp"
#include "daemon/common/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace flytecd::http {
namespace {

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

// A bare CR or LF (or a NUL) inside a line is refused: something in front of us might take it for
// a line break and see other headers than we do.
constexpr std::string_view k_bare_breaks{"\r\n\0", 3};

std::string strip_crlf(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '\r' && c != '\n') out += c;
  }
  return out;
}

// Does a comma-separated Connection header name `token`?
bool has_token(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (text::ascii_lower(trim_ows(list.substr(0, comma))) == token) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

std::string_view Request::header(std::string_view name) const {
  const auto it = headers.find(std::string(name));
  return it == headers.end() ? std::string_view() : std::string_view(it->second);
}

Response text_response(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::string_view reason_phrase(int status) {
  static constexpr std::pair<int, std::string_view> k_reasons[] = {
      {100, "Continue"},
      {200, "OK"},
      {202, "Accepted"},
      {204, "No Content"},
      {400, "Bad Request"},
      {401, "Unauthorized"},
      {403, "Forbidden"},
      {404, "Not Found"},
      {405, "Method Not Allowed"},
      {408, "Request Timeout"},
      {411, "Length Required"},
      {413, "Payload Too Large"},
      {429, "Too Many Requests"},
      {431, "Request Header Fields Too Large"},
      {500, "Internal Server Error"},
      {502, "Bad Gateway"},
      {503, "Service Unavailable"},
  };
  for (const auto& [code, text] : k_reasons) {
    if (code == status) return text;
  }
  return "Unknown";
}

bool parse_request_head(std::string_view head, Request& req) {
  size_t eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  if (line.find_first_of(k_bare_breaks) != std::string_view::npos) return false;
  const auto sp1 = line.find(' ');
  const auto sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return false;
  const auto version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return false;
  req.method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (req.method.empty() || target.empty() || target.front() != '/') return false;
  if (const auto q = target.find('?'); q != std::string_view::npos) {
    req.query = std::string(target.substr(q + 1));
    target = target.substr(0, q);
  }
  req.path = std::string(target);
  while (eol != std::string_view::npos) {
    const size_t start = eol + 2;
    eol = head.find("\r\n", start);
    const std::string_view h =
        head.substr(start, eol == std::string_view::npos ? eol : eol - start);
    if (h.empty()) continue;
    const auto colon = h.find(':');
    if (colon == std::string_view::npos) return false;
    // A field name is a token (RFC 9110 5.1): a blank before the colon, an empty name or an
    // obs-fold line (leading blank) is refused, as a proxy in front could read it differently.
    if (!is_token(h.substr(0, colon))) return false;
    const std::string name = text::ascii_lower(h.substr(0, colon));
    const std::string_view value = trim_ows(h.substr(colon + 1));
    if (value.find_first_of(k_bare_breaks) != std::string_view::npos) return false;
    auto [it, inserted] = req.headers.emplace(name, std::string(value));
    if (!inserted) it->second += ", " + std::string(value);
  }
  if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
    // Repeated (now "a, b") or malformed lengths are rejected: no guessing about framing.
    const auto& v = it->second;
    size_t length = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), length);
    if (v.empty() || ec != std::errc() || ptr != v.data() + v.size()) return false;
    req.content_length = length;
  }
  // HTTP/1.0 clients get one request per connection; we do not implement its keep-alive.
  req.keep_alive = version == "HTTP/1.1" && !has_token(req.header("connection"), "close");
  return true;
}

std::string render_response_head(const Response& r, bool keep_alive) {
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " ";
  head += reason_phrase(r.status);
  head += "\r\nContent-Type: " + strip_crlf(r.content_type);
  head += "\r\nContent-Length: " + std::to_string(r.body.size());
  head += keep_alive ? "\r\nConnection: keep-alive" : "\r\nConnection: close";
  head += "\r\nCache-Control: no-store\r\n";
  for (const auto& [k, v] : r.headers) head += strip_crlf(k) + ": " + strip_crlf(v) + "\r\n";
  head += "\r\n";
  return head;
}

Result<std::pair<std::string, int>> parse_listen_address(std::string_view listen) {
  const auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::invalid_input, "http: listen address \"" + std::string(listen) +
                                                    "\": " + why +
                                                    " (expected host:port, :port or [v6]:port)");
  };
  std::string host;
  std::string_view port;
  if (listen.starts_with('[')) {
    const auto close = listen.find("]:");
    if (close == std::string_view::npos) return bad("unterminated IPv6 literal");
    host = std::string(listen.substr(1, close - 1));
    port = listen.substr(close + 2);
  } else {
    const auto colon = listen.rfind(':');
    if (colon == std::string_view::npos) return bad("no port");
    host = std::string(listen.substr(0, colon));
    if (host.find(':') != std::string::npos) return bad("IPv6 literals need brackets");
    port = listen.substr(colon + 1);
  }
  if (host.empty()) host = "0.0.0.0";
  if (host == "localhost") host = "127.0.0.1";  // do not depend on resolver order
  int p = -1;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || p < 0 || p > 65535) {
    return bad("invalid port");
  }
  return std::make_pair(host, p);
}

}  // namespace flytecd::http
