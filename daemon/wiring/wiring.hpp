#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/config/config.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/pass/pass.hpp"
#include "daemon/registration/packages.hpp"
#include "sinks/configmap/configmap_sink.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"
#include "sinks/routing_sink.hpp"
#include "sinks/sink.hpp"
#include "sources/git/git_source.hpp"
#include "sources/source.hpp"

namespace flytecd::k8s {
class Client;
}

// The built-in backends, listed in one place: which source, package source and sink a
// configuration gets. Tables, not self-registration: adding a backend is one row here.
namespace flytecd::wiring {

// ---- Document sources -------------------------------------------------------------------------

struct SourceBackend {
  std::string_view kind;        // "oci", "git", "directory"
  std::string_view chosen_for;  // the configuration that selects it (for docs and errors)
  bool (*selects)(const config::Config& cfg);
  Result<std::unique_ptr<sources::Source>> (*open)(const config::Config& cfg);
};
// In order of precedence; the first row that selects a configuration opens its source.
// git.url oci://… -> OCI artifact (not built in yet: an error), any other git.url (https, ssh,
// file, scp-like, a local bare repository) -> Git, else the `repo` directory.
const std::vector<SourceBackend>& source_backends();

// The source a configuration asks for. Errors: the backend's (Git open/auth, oci:// unsupported).
Result<std::unique_ptr<sources::Source>> make_source(const config::Config& cfg);
// The libgit2 source options for cfg.git (mirror under <state>/git).
sources::git::GitOptions git_options(const config::Config& cfg);

// ---- Package sources --------------------------------------------------------------------------

// What the package-source factories share: the configuration, the reader of repository files at
// the revision being applied, and one OCI/HTTPS fetcher (one cache, one token cache) made on
// first use.
struct PackageContext {
  const config::Config& cfg;
  registration::RepoFileReader read_repo_file;
  std::shared_ptr<sources::PackageSource> fetcher{};
};

struct PackageBackend {
  sources::PackageRef::Kind kind;
  std::string_view scheme;  // "oci://", "https://", "" (a path in the repository)
  std::string_view description;
  std::shared_ptr<sources::PackageSource> (*open)(PackageContext& ctx);
};
// The package references registrations may use, one row per kind; make_package_source routes
// each reference to its row's source (registration::DefaultPackageResolver).
const std::vector<PackageBackend>& package_backends();
// The fetcher settings of flytecd's `packages:` config (cache under <stateDir>/packages). Pure.
sources::oci::FetchOptions fetch_options(const config::PackagesConfig& cfg,
                                         const std::string& state_dir);
std::unique_ptr<registration::PackageResolver> make_package_source(
    const config::Config& cfg, registration::RepoFileReader read_repo_file);

// ---- Sinks ------------------------------------------------------------------------------------

enum class TargetKind { flyteadmin, emulator, configmap, flyte2, flyte2_emulator };
std::string_view to_string(TargetKind k);

// A sink a row opened, with what it needs kept running (the embedded emulator): `keep` outlives
// `sink`.
struct OpenedSink {
  TargetKind kind{};
  std::shared_ptr<void> keep{};
  std::unique_ptr<sinks::Sink> sink{};
  std::string description{};  // names the target in output ("flyteadmin dns:///h:81")
};

// Which part of a target a row makes up: its identity (target_identity.hpp: the state directory's
// key, and a readable word of its slug) and its part of the ownership fingerprint.
struct TargetPart {
  std::string id;           // "flyteadmin dns:///h:81", "configmap ns/name:key"
  std::string readable;     // "flyteadmin-dns:///h:81", "configmap"
  std::string fingerprint;  // "flyteadmin h:81" (stable across restarts)
};

// A sink backend. Every row that selects a configuration is opened, in table order, and the
// target routes each part (sinks::Capabilities) to the last selected sink that holds it: rows go
// from the general to the specific, so a ConfigMap takes the overrides from FlyteAdmin.
struct SinkBackend {
  TargetKind kind;
  std::string_view holds;       // for docs: what it holds
  std::string_view chosen_for;  // the configuration that selects it
  bool (*selects)(const config::Config& cfg);
  // Connects (no API call) and starts what the sink needs. Errors: the backend's.
  Result<OpenedSink> (*open)(const config::Config& cfg);
  TargetPart (*part)(const config::Config& cfg);
};
const std::vector<SinkBackend>& sink_backends();
// The rows that select `cfg`, in table order.
std::vector<const SinkBackend*> selected_sinks(const config::Config& cfg);

// Where projects and registrations go: the configured FlyteAdmin endpoint, else the embedded
// emulator (sinks/emulator, started by its row); with a `flyte2:` section, Flyte 2's settings
// service at its endpoint, else the embedded Flyte 2 emulator.
TargetKind admin_target_kind(const config::Config& cfg);
// Whether the target's control plane is an emulator started in this process (flyteadmin or
// Flyte 2 with no endpoint): its database is in the state directory, so even a reader locks it.
bool embedded_target(const config::Config& cfg);
// Whether overrides and platform defaults go to the ConfigMap (kubernetes.configMap.enabled).
bool configmap_mode(const config::Config& cfg);

// The sink of `kind` from its table row (whether or not the row selects `cfg`). Errors: the
// backend's.
Result<OpenedSink> make_sink(TargetKind kind, const config::Config& cfg);
// Each part to the last sink that holds it (see SinkBackend); the sinks are not owned. Errors: a
// sink that gets no part (it is shadowed whole), or a part nobody holds is fine (not planned).
Result<std::unique_ptr<sinks::RoutingSink>> route_by_capabilities(
    const std::vector<sinks::Sink*>& sinks);

// The FlyteAdmin sink, typed (callers use its RPC counters and version check). `admin` has the
// endpoint already resolved (the emulator's address for the embedded one).
Result<std::unique_ptr<sinks::flyteadmin::AdminSink>> make_admin_sink(
    const sinks::flyteadmin::AdminConfig& admin, const std::string& label);
// The Kubernetes API client of the `kubernetes:` configuration (in-cluster defaults resolved).
// Errors: no API server (not in a cluster and none configured), an unreadable CA file.
Result<std::shared_ptr<k8s::Client>> open_kube_client(const config::Config& cfg);
// The ConfigMap sink for the client's (resolved) `kubernetes.configMap` settings.
std::unique_ptr<sinks::configmap::ConfigMapSink> make_configmap_sink(
    std::shared_ptr<k8s::Client> kube);

// The sink's settings from the `kubernetes.configMap` configuration. Pure.
sinks::configmap::Settings configmap_settings(const k8s::ConfigMapSettings& s);
// The ConfigMap document of a revision's overrides and platform defaults: what the ConfigMap
// sink holds after a pass (render_document of desired_state for its capabilities).
// Deterministic. Pure.
std::string configmap_document(const model::Documents& docs);

// The desired state of a revision for a sink holding `held` (pass::desired_state). Pure.
reconcile::State desired_state(const model::Documents& docs, const sinks::Capabilities& held);

// ---- The pass ---------------------------------------------------------------------------------

// The pass options a configuration asks for (policy, parallelism, package bounds, history
// retention) in `mode`; the caller adds what is its own (cancel, callbacks, writer). Pure.
pass::Options pass_options(const config::Config& cfg, pass::Mode mode);

// ---- Ownership --------------------------------------------------------------------------------

// The applied-revision record of cfg's target (<stateDir>/targets/<slug>/applied-revision.json,
// target_identity.hpp): where a VM keeps it (in Kubernetes a ConfigMap holds it,
// daemon/k8s/record_store.hpp).
std::unique_ptr<pass::RecordStore> make_file_record_store(const config::Config& cfg);
// What decides ownership for `cfg` (the record's configFingerprint): the target (FlyteAdmin's
// endpoint, or the embedded emulator; the overrides ConfigMap in ConfigMap mode), the
// repository and the domains. Stable across restarts (no ephemeral port in it).
std::string ownership_fingerprint(const config::Config& cfg);
// This host's name (gethostname; in a pod, the pod name): who wrote the record.
std::string host_identity();
// An earlier revision of `source` for the pass's ownership rebuild (pass::Wiring::revision_at):
// its documents, and its repository-path packages read at that revision. `source` must outlive
// the result. Errors: the source's (no history, unknown revision); invalid_input when the
// revision's documents do not load (the first error is named).
Result<pass::EarlierRevision> earlier_revision(const config::Config& cfg, sources::Source& source,
                                               const std::string& revision);

}  // namespace flytecd::wiring
