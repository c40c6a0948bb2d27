#include "daemon/common/log.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <chrono>
#include <ctime>
#include <mutex>
#include <vector>

#include "daemon/common/text.hpp"

namespace flytecd::log {
namespace {
std::mutex g_mu;
bool g_json = false;
bool g_level_given = false;
bool g_format_given = false;
std::string g_level = "info";

thread_local std::vector<std::pair<std::string, std::string>> t_fields;

void append_json_string(std::string& out, std::string_view raw) {
  const std::string s = text::to_utf8_lossy(raw);
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static const char* k_hex = "0123456789abcdef";
          out += "\\u00";
          out += k_hex[c >> 4];
          out += k_hex[c & 0xf];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

std::string utc_time(spdlog::log_clock::time_point t) {
  const auto secs = std::chrono::time_point_cast<std::chrono::seconds>(t);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - secs).count();
  const std::time_t tt = spdlog::log_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

// spdlog's pattern formatter writes the message as it is; this one writes JSON.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto level = spdlog::level::to_string_view(msg.level);
    std::string line = json_line(utc_time(msg.time), std::string(level.data(), level.size()),
                                 std::string(msg.logger_name.data(), msg.logger_name.size()),
                                 std::string_view(msg.payload.data(), msg.payload.size()));
    line += '\n';
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

void apply_locked() {
  spdlog::set_level(spdlog::level::from_str(g_level));
  if (g_json)
    spdlog::set_formatter(std::make_unique<JsonFormatter>());
  else
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%-5l%$ [%n] %v", spdlog::pattern_time_type::utc);
}
}  // namespace

std::string json_line(const std::string& time, const std::string& level, const std::string& logger,
                      std::string_view message) {
  std::string out = "{\"time\":";
  append_json_string(out, time);
  out += ",\"level\":";
  append_json_string(out, level);
  out += ",\"logger\":";
  append_json_string(out, logger);
  out += ",\"message\":";
  append_json_string(out, message);
  // Inner scopes last; a key given again shadows the outer one (the last occurrence wins).
  for (size_t i = 0; i < t_fields.size(); ++i) {
    bool shadowed = false;
    for (size_t j = i + 1; j < t_fields.size(); ++j)
      shadowed |= t_fields[j].first == t_fields[i].first;
    if (shadowed) continue;
    out += ',';
    append_json_string(out, t_fields[i].first);
    out += ':';
    append_json_string(out, t_fields[i].second);
  }
  out += '}';
  return out;
}

void init(const std::string& level, bool json) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_level = level;
  g_json = json;
  apply_locked();
}

void init_from_command_line(const std::string& level, const std::string& format) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_level_given = !level.empty();
  g_format_given = !format.empty();
  g_level = level.empty() ? "info" : level;
  g_json = format == "json";
  apply_locked();
}

void configure(const std::string& level, const std::string& format) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_level_given && !level.empty()) g_level = level;
  if (!g_format_given && !format.empty()) g_json = format == "json";
  apply_locked();
}

bool json_format() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_json;
}

Fields::Fields(std::initializer_list<std::pair<const char*, std::string>> fields)
    : m_count(fields.size()) {
  for (const auto& [k, v] : fields) t_fields.emplace_back(k, v);
}

Fields::~Fields() { t_fields.resize(t_fields.size() - m_count); }

std::shared_ptr<spdlog::logger> get(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (auto existing = spdlog::get(name)) return existing;
  auto logger = spdlog::stderr_color_mt(name);
  if (g_json) logger->set_formatter(std::make_unique<JsonFormatter>());
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
