#pragma once

#include <spdlog/spdlog.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace flytecd::log {

// The one logging facade. Backends get a named logger ("git:origin", "flyteadmin:dns:///…")
// so every line says which instance wrote it. Secrets must never be passed in.
//
// Two formats. text: `2026-12-02T10:00:00.000Z info  [daemon] message`. json (--log-format json,
// log.format: json): one JSON object per line, {"time","level","logger","message", and the
// structured fields of the thread that logged (see Fields)}; every string is escaped and
// ill-formed UTF-8 becomes U+FFFD, so a message holding a quote, a newline or a registry's bytes
// is still one parseable line.
void init(const std::string& level, bool json);
std::shared_ptr<spdlog::logger> get(const std::string& name);

// What the command line gave (empty: not given). A configuration file's log.level / log.format
// applies only where the command line was silent (configure()); the command line wins.
void init_from_command_line(const std::string& level, const std::string& format);
void configure(const std::string& level, const std::string& format);
bool json_format();

// Structured fields (revision, object, step) that every line this thread logs carries in the
// JSON format, for as long as the Fields object lives. Nested scopes add to the outer ones; a
// key given again shadows the outer value.
class Fields {
 public:
  Fields(std::initializer_list<std::pair<const char*, std::string>> fields);
  ~Fields();
  Fields(const Fields&) = delete;
  Fields& operator=(const Fields&) = delete;

 private:
  size_t m_count;
};

// The JSON text of one log line (what the json format writes, without the newline). Exposed for
// tests.
std::string json_line(const std::string& time, const std::string& level, const std::string& logger,
                      std::string_view message);

// Removes userinfo and query strings from URLs ("https://user:tok@h/p?sig=x" -> "https://h/p").
std::string redact_url(const std::string& url);

}  // namespace flytecd::log
