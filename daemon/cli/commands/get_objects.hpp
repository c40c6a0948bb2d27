#pragma once

// `flytecd get objects`: one row per object a running daemon reconciles — projects, overrides,
// registrations and the unmanaged rows it found — with its state, the revision it was last
// applied from and when, read from the daemon's status (GET /api/v1/status), like `flux get` and
// `argocd app get`.

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/cli/remote.hpp"

namespace flytecd::cli {

struct ObjectRow {
  std::string key;   // "override/p/d//TASK_RESOURCE", "project/p", "registration/p/d/name"
  std::string kind;  // project | override | registration
  std::string project, domain, workflow;
  std::string name;      // the project id, the attribute type, the registration's name
  std::string state;     // in-sync | pending | drifted | failed | unknown | unmanaged | removed |
                         // orphaned
  std::string revision;  // the revision flytecd last applied it from ("" unknown or unmanaged)
  std::string last_change;  // RFC 3339 of that write ("" when not known)
  std::string detail;       // why not in sync: the drift's fields, the error, the planned step
};

// The state words --state accepts.
const std::vector<std::string>& object_states();
const std::vector<std::string>& object_kinds();

// The rows of a status document, in key order. Pure.
std::vector<ObjectRow> object_rows(const nlohmann::json& status);

struct ObjectFilter {
  std::string project, domain, kind, state;  // "" = any
};
bool matches(const ObjectRow& row, const ObjectFilter& filter);

// A table (KIND, PROJECT, DOMAIN, NAME, STATE, REVISION, LAST CHANGE) with the details of the
// rows not in sync under it, and a count line. Pure.
std::string objects_table(const std::vector<ObjectRow>& rows);
// {"revision", "target", "suspended", "objects": [...]} ($defs/getObjects). Pure.
nlohmann::ordered_json objects_document(const std::vector<ObjectRow>& rows,
                                        const nlohmann::json& status);

// `flytecd get objects [--project P] [--domain D] [--kind K] [--state S] [-o table|json]`: 0, 1
// when the daemon cannot be reached or has not finished a pass yet.
int run_get_objects(const RemoteFlags& flags, const ObjectFilter& filter, const std::string& format,
                    std::ostream& out, std::ostream& err);

// Registers `objects` under `get`; the result runs it when it was the command given (nullopt
// when another command was). `remote` is filled by `add_remote` at parse time.
std::function<std::optional<int>()> add_get_objects_command(CLI::App& get, RemoteFlags& remote,
                                                            const AddRemoteOptions& add_remote);

}  // namespace flytecd::cli
