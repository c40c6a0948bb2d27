#include "daemon/k8s/client.hpp"

#include <curl/curl.h>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

namespace flytecd::k8s {
namespace {

size_t on_body(char* data, size_t size, size_t n, void* out) {
  auto* s = static_cast<std::string*>(out);
  // Kubernetes objects flytecd reads are small; refuse runaway bodies.
  if (s->size() + size * n > (8u << 20)) return 0;
  s->append(data, size * n);
  return size * n;
}

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
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (settings.api_server.rfind("https://", 0) != 0)
    return make_error(ErrorCode::invalid_input,
                      "kubernetes: apiServer must be an https:// URL, got " + settings.api_server);
  if (!std::ifstream(settings.ca_file))
    return make_error(ErrorCode::invalid_input,
                      "kubernetes: cannot read CA file " + settings.ca_file);
  return std::unique_ptr<Client>(new Client(settings));
}

Result<Response> Client::request(std::string_view method, const std::string& path,
                                 const std::string& body, const std::string& content_type,
                                 int timeout_ms) const {
  auto token = read_token(m_settings.token_file);
  if (!token) return token.error();
  CURL* c = curl_easy_init();
  if (!c) return make_error(ErrorCode::internal, "kubernetes: curl_easy_init failed");
  Response resp;
  std::string url = m_settings.api_server + path;
  std::string auth = "Authorization: Bearer " + *token;
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, auth.c_str());
  headers = curl_slist_append(headers, "Accept: application/json");
  if (!content_type.empty())
    headers = curl_slist_append(headers, ("Content-Type: " + content_type).c_str());
  const std::string verb(method);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "flytecd/" FLYTECD_VERSION);
  curl_easy_setopt(c, CURLOPT_CAINFO, m_settings.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, verb.c_str());
  if (verb != "GET") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &resp.body);
  CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) {
    // The URL is the API server's (no credentials in it); the token is only in a header.
    return make_error(
        rc == CURLE_OPERATION_TIMEDOUT ? ErrorCode::timeout : ErrorCode::unavailable,
        "kubernetes: " + verb + " " + m_settings.api_server + path + ": " + curl_easy_strerror(rc));
  }
  return resp;
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
