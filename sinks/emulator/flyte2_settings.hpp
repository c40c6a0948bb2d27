#pragma once

// Flyte 2's SettingsService, as the server on flyteorg/flyte `main` implements it
// (runs/service/settings_service.go over runs/repository/impl/settings.go), internal to
// sinks/emulator: the logic over the store, and its gRPC face.

#include <cstdint>
#include <memory>
#include <string>

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
  explicit Flyte2Settings(Store& store) : m_store(store) {}
  Status get_for_edit(const settings2::GetSettingsForEditRequest& req,
                      settings2::GetSettingsForEditResponse* out);
  Status create(const settings2::CreateSettingsRequest& req,
                settings2::CreateSettingsResponse* out);
  Status update(const settings2::UpdateSettingsRequest& req,
                settings2::UpdateSettingsResponse* out);

 private:
  Store& m_store;
};

}  // namespace flytecd::sinks::emulator
