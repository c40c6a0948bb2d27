#pragma once

// The fuzz targets' UTF-8 property (issue 27): every text a parser hands on (a diagnostic, an
// error message, a name it read) can end up in JSON — `-o json`, /status, the JSON log — so it
// must already be valid UTF-8, and the JSON flytecd builds from it must parse back to the same
// value. The check dumps with nlohmann's strict handler (which throws type_error 316 on an
// ill-formed sequence), not with dump_json's U+FFFD repair, so a parser that lets raw bytes
// through is a crash here, not a silently altered message there.

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "daemon/common/text.hpp"

namespace flytecd::fuzz {

// Aborts (libFuzzer keeps the input) when `s`, a text named `what`, is not valid UTF-8.
inline void expect_utf8(std::string_view what, std::string_view s) {
  if (flytecd::text::valid_utf8(s)) return;
  std::fprintf(stderr, "utf8 property: %.*s is not valid UTF-8 (%zu bytes)\n",
               static_cast<int>(what.size()), what.data(), s.size());
  std::abort();
}

// Aborts unless `j` dumps strictly and the dump parses back to `j`.
template <class Json>
void expect_json_roundtrip(std::string_view what, const Json& j) {
  std::string text;
  try {
    text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "utf8 property: the JSON of %.*s does not dump: %s\n",
                 static_cast<int>(what.size()), what.data(), e.what());
    std::abort();
  }
  const Json back = Json::parse(text, nullptr, false);
  if (back.is_discarded() || back != j) {
    std::fprintf(stderr, "utf8 property: the JSON of %.*s does not parse back\n",
                 static_cast<int>(what.size()), what.data());
    std::abort();
  }
}

// The common case: an error message, as the CLI and /status put it in JSON.
inline void expect_json_message(std::string_view what, const std::string& message) {
  expect_utf8(what, message);
  expect_json_roundtrip(what, nlohmann::json{{"error", message}});
}

}  // namespace flytecd::fuzz
