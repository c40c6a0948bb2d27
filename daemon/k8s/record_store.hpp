#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/common/result.hpp"
#include "daemon/k8s/client.hpp"
#include "daemon/pass/applied_record.hpp"

namespace flytecd::k8s {

// The applied-revision record as a ConfigMap's data, one key per field so that
// `kubectl get cm NAME -o yaml` reads as the record: converged, inFlight, configFingerprint,
// version, writer, updatedAt (unix seconds, as a decimal string). Pure.
std::map<std::string, std::string> record_data(const pass::AppliedRecord& r);
// The record from a ConfigMap's data. Missing keys are empty (a newer or older flytecd may
// write fewer); unknown keys are ignored. Errors: invalid_input naming `where` when updatedAt is
// not a whole number.
Result<pass::AppliedRecord> record_from_data(const std::map<std::string, std::string>& data,
                                             const std::string& where);

// The ConfigMap object to create (empty resource_version) or to replace with PUT (the API server
// answers 409 Conflict when resource_version is no longer the stored one). Labelled
// app.kubernetes.io/managed-by: flytecd. Pure.
nlohmann::json record_config_map(const std::string& name, const std::string& ns,
                                 const std::string& resource_version, const pass::AppliedRecord& r);

// The record kept in ConfigMap `ns/name` through flytecd's API client; the token is the
// ConfigMap's metadata.resourceVersion. write(r, "") creates it (POST; AlreadyExists -> conflict),
// write(r, rv) replaces it with PUT carrying resourceVersion rv (409 -> conflict: another writer
// updated it, and the stored record is unchanged). A 404 on PUT is a conflict too (it was
// deleted: the stored record is not the one at `rv`). Other HTTP errors map with
// code_for_status; transport failures are unavailable/timeout. Thread-safe (no state but the
// client). Each call is one request with a 10 s deadline.
std::unique_ptr<pass::RecordStore> make_config_map_record_store(std::shared_ptr<Client> client,
                                                                std::string ns, std::string name);

}  // namespace flytecd::k8s
