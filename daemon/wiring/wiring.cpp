#include "daemon/wiring/wiring.hpp"

#include <unistd.h>

#include <filesystem>

#include "daemon/common/atomic_file.hpp"
#include "daemon/common/log.hpp"
#include "daemon/k8s/client.hpp"
#include "daemon/k8s/kube_api.hpp"
#include "daemon/model/loader.hpp"
#include "daemon/wiring/target_identity.hpp"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyte2/flyte2_sink.hpp"
#include "sources/local/package_source.hpp"
#include "sources/oci/package_source.hpp"

namespace flytecd::wiring {
namespace {

Result<std::unique_ptr<sources::Source>> open_git(const config::Config& cfg) {
  // The state directory is created 0700 by whichever of its users comes first.
  if (auto s = create_private_directory(cfg.state_dir, "state directory"); !s) return s.error();
  std::error_code ec;
  std::filesystem::create_directories(cfg.state_dir + "/git", ec);
  auto git = sources::git::GitSource::open(git_options(cfg));
  if (!git) return git.error();
  return std::unique_ptr<sources::Source>(std::move(*git));
}

Result<std::unique_ptr<sources::Source>> open_directory(const config::Config& cfg) {
  return sources::make_directory_source(cfg.repo, model::Limits{}.max_file_bytes);
}

Result<std::unique_ptr<sources::Source>> open_oci(const config::Config& cfg) {
  return make_error(ErrorCode::invalid_input,
                    "source " + cfg.git.url +
                        ": OCI artifact sources are not built in yet (use a Git URL or `repo`)");
}

Result<OpenedSink> open_flyteadmin(const config::Config& cfg) {
  OpenedSink out{TargetKind::flyteadmin};
  out.description = "flyteadmin " + log::redact_url(cfg.admin.endpoint);
  auto sink = make_admin_sink(cfg.admin, out.description);
  if (!sink) return sink.error();
  out.sink = std::move(*sink);
  return out;
}

// An embedded emulator (FlyteAdmin's, or Flyte 2's with `flyte2`), started in-process on loopback
// and persisted in the state directory: `out` keeps it running, names it, and says where the sink
// reaches it over gRPC (plaintext on loopback).
struct Embedded {
  TargetKind kind;
  const char* db_file;   // in the state directory
  const char* server;    // "FlyteAdmin", "Flyte 2"
  const char* label;     // "flyteadmin", "flyte2"
  const char* endpoint;  // the key that targets a real one
};
Result<sinks::flyteadmin::AdminConfig> start_embedded(const config::Config& cfg, const Embedded& e,
                                                      OpenedSink& out) {
  sinks::emulator::Options opts;
  opts.db_path = cfg.state_dir + "/" + e.db_file;
  opts.domains = cfg.documents.domains;
  opts.flyte2 = e.kind == TargetKind::flyte2_emulator;
  auto emu = sinks::emulator::Emulator::start(opts);
  if (!emu) return emu.error().wrap(std::string("embedded ") + e.server + " emulator");
  std::shared_ptr<sinks::emulator::Emulator> started = std::move(*emu);
  out.kind = e.kind;
  out.keep = started;
  out.description = std::string(e.label) + " EMULATOR (embedded, " + started->address() + ", " +
                    opts.db_path + ") — not a real " + e.server + "; set " + e.endpoint +
                    " to target one";
  log::get("flytecd")->warn("no {} endpoint configured: using the embedded {} emulator at {} ({})",
                            e.server, e.server, started->address(), opts.db_path);
  sinks::flyteadmin::AdminConfig admin;
  admin.endpoint = started->address();
  admin.insecure = true;
  return admin;
}

Result<OpenedSink> open_emulator(const config::Config& cfg) {
  OpenedSink out;
  auto admin = start_embedded(
      cfg, {TargetKind::emulator, "emulator.db", "FlyteAdmin", "flyteadmin", "admin.endpoint"},
      out);
  if (!admin) return admin.error();
  auto sink = make_admin_sink(*admin, out.description);
  if (!sink) return sink.error();
  out.sink = std::move(*sink);
  return out;
}

Result<OpenedSink> open_flyte2(const config::Config& cfg) {
  OpenedSink out{TargetKind::flyte2};
  out.description = "flyte2 " + log::redact_url(cfg.flyte2.admin.endpoint);
  auto sink = sinks::flyte2::Flyte2Sink::connect(cfg.flyte2.admin, out.description);
  if (!sink) return sink.error();
  out.sink = std::move(*sink);
  return out;
}

Result<OpenedSink> open_flyte2_emulator(const config::Config& cfg) {
  OpenedSink out;
  auto admin = start_embedded(
      cfg,
      {TargetKind::flyte2_emulator, "flyte2-emulator.db", "Flyte 2", "flyte2", "flyte2.endpoint"},
      out);
  if (!admin) return admin.error();
  auto sink = sinks::flyte2::Flyte2Sink::connect(*admin, out.description);
  if (!sink) return sink.error();
  out.sink = std::move(*sink);
  return out;
}

Result<OpenedSink> open_configmap(const config::Config& cfg) {
  auto kube = open_kube_client(cfg);
  if (!kube) return kube.error();
  OpenedSink out{TargetKind::configmap};
  out.sink = make_configmap_sink(std::move(*kube));
  out.description = out.sink->describe();
  return out;
}

TargetPart flyteadmin_part(const config::Config& cfg) {
  const std::string endpoint = normalize_endpoint(cfg.admin.endpoint);
  return {"flyteadmin " + endpoint, "flyteadmin-" + endpoint, "flyteadmin " + cfg.admin.endpoint};
}
TargetPart emulator_part(const config::Config&) {
  return {"flyteadmin emulator (embedded)", "embedded-emulator", "emulator"};
}
TargetPart flyte2_part(const config::Config& cfg) {
  const std::string endpoint = normalize_endpoint(cfg.flyte2.admin.endpoint);
  return {"flyte2 " + endpoint, "flyte2-" + endpoint, "flyte2 " + cfg.flyte2.admin.endpoint};
}
TargetPart flyte2_emulator_part(const config::Config&) {
  return {"flyte2 emulator (embedded)", "embedded-flyte2-emulator", "flyte2 emulator"};
}
TargetPart configmap_part(const config::Config& cfg) {
  const auto& cm = cfg.kubernetes.config_map;
  const std::string where = "configmap " + cm.cm_namespace + "/" + cm.name + ":" + cm.key;
  return {where, "configmap", where};
}

}  // namespace

// ---- Document sources -------------------------------------------------------------------------

const std::vector<SourceBackend>& source_backends() {
  static const std::vector<SourceBackend> k_backends = {
      {"oci", "git.url oci://…",
       [](const config::Config& c) { return c.git.url.rfind("oci://", 0) == 0; }, open_oci},
      {"git", "git.url (https, ssh, file, scp-like, a local repository)",
       [](const config::Config& c) { return !c.git.url.empty(); }, open_git},
      {"directory", "repo (a directory)", [](const config::Config&) { return true; },
       open_directory},
  };
  return k_backends;
}

Result<std::unique_ptr<sources::Source>> make_source(const config::Config& cfg) {
  for (const auto& b : source_backends())
    if (b.selects(cfg)) return b.open(cfg);
  return make_error(ErrorCode::invalid_input, "no source configured (git.url or repo)");
}

sources::git::GitOptions git_options(const config::Config& cfg) {
  sources::git::GitOptions o;
  o.url = cfg.git.url;
  o.ref = cfg.git.ref;
  o.subpath = cfg.git.path;
  o.cache_dir = cfg.state_dir + "/git";
  o.auth.username = cfg.git.username;
  o.auth.password_file = cfg.git.password_file;
  o.auth.password_env = cfg.git.password_env;
  o.auth.ssh_private_key_file = cfg.git.ssh_key_file;
  o.auth.ssh_known_hosts_file = cfg.git.ssh_known_hosts_file;
  o.auth.ssh_passphrase_env = cfg.git.ssh_passphrase_env;
  if (!cfg.git.allowed_signers_file.empty()) {
    o.signatures.mode = sources::git::SignaturePolicy::Mode::ssh;
    o.signatures.allowed_signers_file = cfg.git.allowed_signers_file;
  }
  return o;
}

// ---- Package sources --------------------------------------------------------------------------

namespace {
std::shared_ptr<sources::PackageSource> open_fetcher(PackageContext& ctx) {
  if (!ctx.fetcher)
    ctx.fetcher =
        sources::oci::make_package_source(fetch_options(ctx.cfg.packages, ctx.cfg.state_dir));
  return ctx.fetcher;
}
std::shared_ptr<sources::PackageSource> open_repo_path(PackageContext& ctx) {
  return sources::local::make_package_source(ctx.read_repo_file);
}
}  // namespace

const std::vector<PackageBackend>& package_backends() {
  using Kind = sources::PackageRef::Kind;
  static const std::vector<PackageBackend> k_backends = {
      {Kind::oci, "oci://", "an OCI artifact (registry API, digest-verified, cached)",
       open_fetcher},
      {Kind::https, "https://", "an archive over HTTPS (size-limited, cached by digest)",
       open_fetcher},
      {Kind::path, "", "a path in the repository, read at the revision being applied",
       open_repo_path},
  };
  return k_backends;
}

sources::oci::FetchOptions fetch_options(const config::PackagesConfig& cfg,
                                         const std::string& state_dir) {
  sources::oci::FetchOptions o;
  o.cache_dir = cfg.cache_dir.empty() ? std::filesystem::path(state_dir) / "packages"
                                      : std::filesystem::path(cfg.cache_dir);
  o.cache_max_bytes = cfg.cache_max_bytes;
  o.ca_file = cfg.ca_file;
  o.docker_config = cfg.docker_config;
  o.plain_http_registries = cfg.plain_http_registries;
  o.package_timeout = std::chrono::seconds(cfg.fetch_timeout_seconds);
  o.stall_timeout = std::chrono::seconds(cfg.stall_timeout_seconds);
  return o;
}

std::unique_ptr<registration::PackageResolver> make_package_source(
    const config::Config& cfg, registration::RepoFileReader read_repo_file) {
  PackageContext ctx{cfg, std::move(read_repo_file)};
  registration::DefaultPackageResolver::ByKind by_kind;
  for (const auto& b : package_backends()) by_kind[b.kind] = b.open(ctx);
  registration::Verification verification{cfg.packages.verify, cfg.packages.trusted_root_file,
                                          ctx.read_repo_file};
  return std::make_unique<registration::DefaultPackageResolver>(
      std::move(by_kind), cfg.packages.registry, std::move(verification));
}

// ---- Sinks ------------------------------------------------------------------------------------

std::string_view to_string(TargetKind k) {
  switch (k) {
    case TargetKind::flyteadmin:
      return "flyteadmin";
    case TargetKind::emulator:
      return "emulator";
    case TargetKind::configmap:
      return "configmap";
    case TargetKind::flyte2:
      return "flyte2";
    case TargetKind::flyte2_emulator:
      return "flyte2 emulator";
  }
  return "?";
}

const std::vector<SinkBackend>& sink_backends() {
  static const std::vector<SinkBackend> k_backends = {
      {TargetKind::flyteadmin, "projects, overrides, registrations", "admin.endpoint",
       [](const config::Config& c) { return admin_target_kind(c) == TargetKind::flyteadmin; },
       open_flyteadmin, flyteadmin_part},
      {TargetKind::emulator, "projects, overrides, registrations", "no admin.endpoint",
       [](const config::Config& c) { return admin_target_kind(c) == TargetKind::emulator; },
       open_emulator, emulator_part},
      {TargetKind::flyte2, "settings", "flyte2.endpoint",
       [](const config::Config& c) { return admin_target_kind(c) == TargetKind::flyte2; },
       open_flyte2, flyte2_part},
      {TargetKind::flyte2_emulator, "settings", "a flyte2 section without an endpoint",
       [](const config::Config& c) { return admin_target_kind(c) == TargetKind::flyte2_emulator; },
       open_flyte2_emulator, flyte2_emulator_part},
      {TargetKind::configmap, "overrides, platform defaults", "kubernetes.configMap.enabled",
       configmap_mode, open_configmap, configmap_part},
  };
  return k_backends;
}

std::vector<const SinkBackend*> selected_sinks(const config::Config& cfg) {
  std::vector<const SinkBackend*> out;
  for (const auto& b : sink_backends())
    if (b.selects(cfg)) out.push_back(&b);
  return out;
}

TargetKind admin_target_kind(const config::Config& cfg) {
  if (cfg.flyte2.enabled)
    return cfg.flyte2.admin.endpoint.empty() ? TargetKind::flyte2_emulator : TargetKind::flyte2;
  return cfg.admin.endpoint.empty() ? TargetKind::emulator : TargetKind::flyteadmin;
}

bool embedded_target(const config::Config& cfg) {
  const TargetKind k = admin_target_kind(cfg);
  return k == TargetKind::emulator || k == TargetKind::flyte2_emulator;
}

bool configmap_mode(const config::Config& cfg) { return cfg.kubernetes.config_map.enabled; }

Result<OpenedSink> make_sink(TargetKind kind, const config::Config& cfg) {
  for (const auto& b : sink_backends())
    if (b.kind == kind) return b.open(cfg);
  return make_error(ErrorCode::internal, "no sink backend " + std::string(to_string(kind)));
}

Result<std::unique_ptr<sinks::RoutingSink>> route_by_capabilities(
    const std::vector<sinks::Sink*>& sinks) {
  // Each part goes to the last sink holding it: a later row is the more specific one.
  std::vector<sinks::Capabilities> parts(sinks.size());
  sinks::Capabilities claimed;
  for (size_t i = sinks.size(); i-- > 0;) {
    const sinks::Capabilities held = sinks[i]->capabilities();
    parts[i] = {.projects = held.projects && !claimed.projects,
                .overrides = held.overrides && !claimed.overrides,
                .platform_defaults = held.platform_defaults && !claimed.platform_defaults,
                .registrations = held.registrations && !claimed.registrations};
    for (const auto& kind : held.objects)
      if (!claimed.objects.count(kind)) parts[i].objects.insert(kind);
    claimed = claimed | held;
  }
  std::vector<sinks::RoutingSink::Route> routes;
  for (size_t i = 0; i < sinks.size(); ++i) {
    if (!parts[i].any())
      return make_error(ErrorCode::invalid_input,
                        sinks[i]->describe() + " gets nothing to hold: every part it holds (" +
                            to_string(sinks[i]->capabilities()) + ") goes to another sink");
    routes.push_back({sinks[i], parts[i]});
  }
  return sinks::RoutingSink::create(std::move(routes));
}

Result<std::unique_ptr<sinks::flyteadmin::AdminSink>> make_admin_sink(
    const sinks::flyteadmin::AdminConfig& admin, const std::string& label) {
  return sinks::flyteadmin::AdminSink::connect(admin, label);
}

Result<std::shared_ptr<k8s::Client>> open_kube_client(const config::Config& cfg) {
  auto resolved = k8s::resolve_in_cluster(cfg.kubernetes);
  if (!resolved) return resolved.error().wrap("kubernetes");
  auto client = k8s::Client::create(*resolved);
  if (!client) return client.error().wrap("kubernetes");
  return std::shared_ptr<k8s::Client>(std::move(*client));
}

// The sink's settings from the `kubernetes.configMap` configuration.
sinks::configmap::Settings configmap_settings(const k8s::ConfigMapSettings& s) {
  return sinks::configmap::Settings{s.cm_namespace, s.name, s.key, s.restart_deployment};
}

std::string configmap_document(const model::Documents& docs) {
  return sinks::configmap::render_document(
      pass::desired_state(docs, {.overrides = true, .platform_defaults = true}));
}

std::unique_ptr<sinks::configmap::ConfigMapSink> make_configmap_sink(
    std::shared_ptr<k8s::Client> kube) {
  auto settings = configmap_settings(kube->settings().config_map);
  return std::make_unique<sinks::configmap::ConfigMapSink>(k8s::make_kube_api(std::move(kube)),
                                                           std::move(settings));
}

reconcile::State desired_state(const model::Documents& docs, const sinks::Capabilities& held) {
  return pass::desired_state(docs, held);
}

std::unique_ptr<pass::RecordStore> make_file_record_store(const config::Config& cfg) {
  return std::make_unique<pass::FileRecordStore>(pass::record_file(target_dir(cfg).string()));
}

std::string ownership_fingerprint(const config::Config& cfg) {
  std::string target;
  for (const SinkBackend* b : selected_sinks(cfg))
    target += (target.empty() ? "" : "; ") + b->part(cfg).fingerprint;
  const std::string repository = cfg.git.url.empty()
                                     ? "dir:" + cfg.repo
                                     : cfg.git.url + "@" + cfg.git.ref + ":" + cfg.git.path;
  return pass::ownership_fingerprint(target, repository, cfg.documents.domains);
}

std::string host_identity() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "unknown-host";
  return name;
}

Result<pass::EarlierRevision> earlier_revision(const config::Config& cfg, sources::Source& source,
                                               const std::string& revision) {
  auto snap = source.snapshot_at(revision);
  if (!snap) return snap.error();
  auto loaded = model::load_documents(snap->files, model::Limits{}, cfg.documents);
  if (!loaded.ok()) {
    std::string first;
    for (const auto& d : loaded.diagnostics)
      if (d.severity == model::Severity::error) {
        first = model::format(d);
        break;
      }
    return make_error(ErrorCode::invalid_input,
                      "revision " + revision.substr(0, 12) + " does not load: " + first);
  }
  pass::EarlierRevision out;
  out.docs = std::move(loaded.documents);
  const std::string id = snap->revision;
  out.packages = make_package_source(
      cfg, registration::RepoFileReader([&source, id](const std::string& path) {
        return source.read_file(id, path, registration::k_max_repo_package_bytes);
      }));
  return out;
}

pass::Options pass_options(const config::Config& cfg, pass::Mode mode) {
  pass::Options o;
  o.mode = mode;
  o.policy = cfg.policy;
  o.parallelism = cfg.parallelism;
  o.max_package_bytes = cfg.packages.max_package_bytes;
  o.retention = cfg.history;
  return o;
}

}  // namespace flytecd::wiring
