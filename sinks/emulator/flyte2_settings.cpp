#include "sinks/emulator/flyte2_settings.hpp"

#include <google/protobuf/util/json_util.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "daemon/common/proto_paths.hpp"
#include "sinks/emulator/admin_common.hpp"

namespace flytecd::sinks::emulator {
namespace {

using detail::invalid;
using detail::now_ms;

// The checks every write and read makes by hand (the buf.validate annotations are not enforced
// by the server's generated code).
Status check_key_shape(const settings2::SettingsKey& key) {
  if (!key.project().empty() && key.domain().empty())
    return invalid("a project-scope key requires a domain");
  return ok_status();
}

// protojson.Marshal of the settings (what the server stores in the data column).
Result<std::string> to_protojson(const settings2::Settings& settings) {
  std::string out;
  auto st = google::protobuf::util::MessageToJsonString(settings, &out);
  if (!st.ok()) return make_error(ErrorCode::invalid_input, std::string(st.message()));
  return out;
}

}  // namespace

std::string settings_storage_key(const settings2::SettingsKey& key) {
  return "v1:" + (key.org().empty() ? std::string("flyte") : key.org()) + ":" + key.domain() + ":" +
         key.project();
}

Result<std::string> Flyte2Settings::stored_form(const settings2::Settings& settings) const {
  if (m_schema_lacks.empty()) return to_protojson(settings);
  settings2::Settings kept = settings;
  for (const auto& path : m_schema_lacks) proto_paths::clear(kept, path);
  return to_protojson(kept);
}

Status Flyte2Settings::get_for_edit(const settings2::GetSettingsForEditRequest& req,
                                    settings2::GetSettingsForEditResponse* out) {
  if (!req.has_key()) return invalid("key is required");
  const auto& key = req.key();
  if (auto s = check_key_shape(key); !s) return s;
  // One partial key per scope level the key covers, broadest first.
  std::vector<settings2::SettingsKey> levels;
  levels.emplace_back().set_org(key.org());
  if (!key.domain().empty()) {
    auto& k = levels.emplace_back();
    k.set_org(key.org());
    k.set_domain(key.domain());
  }
  if (!key.project().empty()) levels.push_back(key);
  std::vector<std::string> storage;
  for (const auto& k : levels) storage.push_back(settings_storage_key(k));
  auto tx = m_store.begin(false);
  if (!tx) return tx.error();
  auto rows = tx->settings_by_keys(storage);
  if (!rows) return make_error(ErrorCode::internal, rows.error().message);
  if (auto s = tx->commit(); !s) return s;
  std::map<std::string, const SettingsRow*> by_key;
  for (const auto& r : *rows) by_key[r.key] = &r;
  *out->mutable_requestedkey() = key;
  google::protobuf::util::JsonParseOptions discard_unknown;
  discard_unknown.ignore_unknown_fields = true;
  for (size_t i = 0; i < levels.size(); ++i) {
    auto* record = out->add_levels();
    *record->mutable_key() = levels[i];
    record->mutable_settings();  // an absent level: empty settings, version 0
    auto it = by_key.find(storage[i]);
    if (it == by_key.end()) continue;
    auto st = google::protobuf::util::JsonStringToMessage(
        it->second->data, record->mutable_settings(), discard_unknown);
    if (!st.ok()) return make_error(ErrorCode::internal, std::string(st.message()));
    record->set_version(it->second->version);
  }
  return ok_status();
}

Status Flyte2Settings::create(const settings2::CreateSettingsRequest& req,
                              settings2::CreateSettingsResponse* out) {
  if (!req.has_key() || !req.has_settings()) return invalid("key and settings are required");
  if (auto s = check_key_shape(req.key()); !s) return s;
  auto data = stored_form(req.settings());
  if (!data) return data.error();
  const int64_t now = now_ms();
  SettingsRow row{settings_storage_key(req.key()), *data, 1, now, now};
  auto tx = m_store.begin(true);
  if (!tx) return tx.error();
  if (auto s = tx->insert_settings(row); !s) {
    if (s.error().code == ErrorCode::already_exists)
      return make_error(ErrorCode::already_exists, "settings already exists: " + row.key);
    return make_error(ErrorCode::internal,
                      "failed to create settings " + row.key + ": " + s.error().message);
  }
  if (auto s = tx->commit(); !s) return s;
  auto* record = out->mutable_settingsrecord();
  *record->mutable_key() = req.key();
  *record->mutable_settings() = req.settings();
  record->set_version(1);
  return ok_status();
}

Status Flyte2Settings::update(const settings2::UpdateSettingsRequest& req,
                              settings2::UpdateSettingsResponse* out) {
  if (!req.has_key() || !req.has_settings()) return invalid("key and settings are required");
  if (auto s = check_key_shape(req.key()); !s) return s;
  if (req.version() == 0)
    return invalid("a version is required; use CreateSettings for a new record");
  auto data = stored_form(req.settings());
  if (!data) return data.error();
  const std::string key = settings_storage_key(req.key());
  auto tx = m_store.begin(true);
  if (!tx) return tx.error();
  auto changed = tx->update_settings(key, *data, req.version(), now_ms());
  if (!changed)
    return make_error(ErrorCode::internal,
                      "failed to update settings " + key + ": " + changed.error().message);
  if (*changed == 0) {
    // A stale version, or no row: told apart so the client knows to retry or to create.
    auto rows = tx->settings_by_keys({key});
    if (!rows) return make_error(ErrorCode::internal, rows.error().message);
    if (rows->empty()) return make_error(ErrorCode::not_found, "settings not found: " + key);
    return make_error(ErrorCode::conflict, "settings version conflict: " + key);
  }
  if (auto s = tx->commit(); !s) return s;
  auto* record = out->mutable_settingsrecord();
  *record->mutable_key() = req.key();
  *record->mutable_settings() = req.settings();
  record->set_version(req.version() + 1);
  return ok_status();
}

}  // namespace flytecd::sinks::emulator
