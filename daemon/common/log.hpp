#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace flytecd::log {

// The one logging facade. Backends get a named logger ("git:origin", "flyteadmin:dns:///…")
// so every line says which instance wrote it. Secrets must never be passed in.
void init(const std::string& level, bool json);
std::shared_ptr<spdlog::logger> get(const std::string& name);

// Removes userinfo and query strings from URLs ("https://user:tok@h/p?sig=x" -> "https://h/p").
std::string redact_url(const std::string& url);

}  // namespace flytecd::log
