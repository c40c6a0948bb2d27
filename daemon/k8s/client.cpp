#include "daemon/k8s/client.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace flytecd::k8s {
namespace {

// Kubernetes objects flytecd reads are small; refuse runaway bodies.
constexpr uint64_t k_max_body = 8u << 20;

Result<std::string> read_token(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return make_error(ErrorCode::unauthenticated, "kubernetes: cannot read token file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  if (t.empty())
    return make_error(ErrorCode::unauthenticated, "kubernetes: token file " + path + " is empty");
  return t;
}

}  // namespace

Result<std::unique_ptr<Client>> Client::create(const Settings& settings) {
  if (settings.api_server.rfind("https://", 0) != 0)
    return make_error(ErrorCode::invalid_input,
                      "kubernetes: apiServer must be an https:// URL, got " + settings.api_server);
  if (!std::ifstream(settings.ca_file))
    return make_error(ErrorCode::invalid_input,
                      "kubernetes: cannot read CA file " + settings.ca_file);
  return std::unique_ptr<Client>(new Client(settings));
}

Client::Client(Settings s) : m_settings(std::move(s)) {
  // HTTPS only, verified against the cluster CA; no redirects and no retries (callers such as
  // the lease loop decide when to try again).
  http::ClientOptions options;
  options.ca_file = m_settings.ca_file;
  options.protocols = "https";
  options.max_attempts = 1;
  options.max_redirects = 0;
  m_http = std::make_unique<http::Client>(std::move(options));
}

Client::~Client() = default;

Result<Response> Client::request(std::string_view method, const std::string& path,
                                 const std::string& body, const std::string& content_type,
                                 int timeout_ms) const {
  auto token = read_token(m_settings.token_file);
  if (!token) return token.error();
  const std::string verb(method);
  http::ClientRequest req;
  req.method = verb;
  req.url = m_settings.api_server + path;
  req.headers = {"Authorization: Bearer " + *token, "Accept: application/json"};
  if (!content_type.empty()) req.headers.push_back("Content-Type: " + content_type);
  if (verb != "GET") req.body = body;
  req.max_body = k_max_body;
  req.timeout = std::chrono::milliseconds(timeout_ms);
  auto r = m_http->execute(req);
  if (!r) {
    // The URL is the API server's (no credentials in it); the token is only in a header.
    return r.error().wrap("kubernetes: " + verb + " " + m_settings.api_server + path);
  }
  return Response{r->status, std::move(r->body)};
}

std::string status_message(const Response& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string())
    return "HTTP " + std::to_string(r.status) + ": " + j["message"].get<std::string>();
  return "HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 200);
}

ErrorCode code_for_status(long status) {
  if (status == 409) return ErrorCode::conflict;
  if (status == 404) return ErrorCode::not_found;
  if (status == 401) return ErrorCode::unauthenticated;
  if (status == 403) return ErrorCode::permission_denied;
  if (status == 408 || status == 504) return ErrorCode::timeout;
  if (status == 429) return ErrorCode::resource_exhausted;
  if (status >= 500) return ErrorCode::unavailable;
  return ErrorCode::invalid_input;
}

}  // namespace flytecd::k8s
