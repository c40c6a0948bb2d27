#pragma once

// Flyte 2's SettingsService, as the server on flyteorg/flyte `main` implements it
// (runs/service/settings_service.go over runs/repository/impl/settings.go), internal to
// sinks/emulator: the logic over the store, and its gRPC face.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "flyteidl2/settings/settings_service.pb.h"
#include "sinks/emulator/store.hpp"

namespace flytecd::sinks::emulator {

namespace settings2 = flyteidl2::settings;

// "v1:{org}:{domain}:{project}", an empty org read as "flyte" (models.EncodeSettingsKey).
std::string settings_storage_key(const settings2::SettingsKey& key);

// The service's logic. Errors as the server returns them: invalid_input (InvalidArgument),
// not_found, already_exists, conflict (a stale version: FailedPrecondition), internal.
class Flyte2Settings {
 public:
  // `schema_lacks`: JSON paths of Settings fields the emulated server's schema does not have (a
  // server older than the IDL): a write drops them, as protojson.Marshal drops unknown fields.
  explicit Flyte2Settings(Store& store, std::vector<std::string> schema_lacks = {})
      : m_store(store), m_schema_lacks(std::move(schema_lacks)) {}
  Status get_for_edit(const settings2::GetSettingsForEditRequest& req,
                      settings2::GetSettingsForEditResponse* out);
  Status create(const settings2::CreateSettingsRequest& req,
                settings2::CreateSettingsResponse* out);
  Status update(const settings2::UpdateSettingsRequest& req,
                settings2::UpdateSettingsResponse* out);

 private:
  // protojson.Marshal of what a write sends, as this server's schema keeps it.
  Result<std::string> stored_form(const settings2::Settings& settings) const;
  Store& m_store;
  std::vector<std::string> m_schema_lacks;
};

}  // namespace flytecd::sinks::emulator
