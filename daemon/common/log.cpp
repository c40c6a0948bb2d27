#include "daemon/common/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>

namespace flytecd::log {
namespace {
std::mutex g_mu;
bool g_json = false;
}  // namespace

void init(const std::string& level, bool json) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_json = json;
  spdlog::set_level(spdlog::level::from_str(level));
  if (json) {
    spdlog::set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","logger":"%n","msg":"%v"})",
                        spdlog::pattern_time_type::utc);
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%-5l%$ [%n] %v", spdlog::pattern_time_type::utc);
  }
}

std::shared_ptr<spdlog::logger> get(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (auto existing = spdlog::get(name)) return existing;
  auto logger = spdlog::stderr_color_mt(name);
  return logger;
}

std::string redact_url(const std::string& url) {
  std::string out = url;
  auto scheme = out.find("://");
  if (scheme != std::string::npos) {
    auto host_start = scheme + 3;
    auto path = out.find('/', host_start);
    auto at = out.rfind('@', path == std::string::npos ? out.size() : path);
    if (at != std::string::npos && at >= host_start) out.erase(host_start, at + 1 - host_start);
  }
  auto q = out.find('?');
  if (q != std::string::npos) out.erase(q);
  return out;
}

}  // namespace flytecd::log
