#include "daemon/config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <span>

#include "daemon/common/duration.hpp"
#include "daemon/common/scan.hpp"

namespace flytecd::config {
namespace {

std::string expand_home(const std::string& p) {
  if (p.rfind("~/", 0) == 0)
    if (const char* home = std::getenv("HOME")) return std::string(home) + p.substr(1);
  return p;
}

Result<bool> to_bool(const std::string& where, const std::string& v) {
  if (v == "true" || v == "1" || v == "yes") return true;
  if (v == "false" || v == "0" || v == "no") return false;
  return make_error(ErrorCode::invalid_input, where + ": '" + v + "' is not true or false");
}

// The range of each duration key (daemon/common/duration): a poll interval under a second is a
// busy loop against Git and FlyteAdmin; a lock wait is bounded so a stuck writer is named.
constexpr DurationRange k_interval_range{std::chrono::seconds(1), std::chrono::hours(24)};
constexpr DurationRange k_lock_wait_range{std::chrono::seconds(0), std::chrono::hours(1)};
// packages.fetchTimeout / stallTimeout: a transfer bound of at least a second, at most a day.
constexpr DurationRange k_transfer_range{std::chrono::seconds(1), std::chrono::hours(24)};

Status merge_flytectl(const std::string& path, Config& cfg) {
  auto admin = sinks::flyteadmin::load_flytectl_config(expand_home(path));
  if (!admin) return admin.error();
  cfg.admin = *admin;
  return ok_status();
}

// --- the option schema --------------------------------------------------------------------
//
// Every plain key of the configuration file is a row: its section and name, what it holds
// (which decides the conversion and the "expected …" of an error), where it goes, and its
// environment variable. load_file and apply_env read through the rows; the unknown-key errors
// list them. Sections with their own parser (admin, kubernetes, notifications) are rows of
// kind `section`.

enum class Kind {
  text,
  path,
  flag,
  whole,
  positive,
  bytes,
  positive_bytes,
  share,
  duration,
  list,
  choice,
  section
};

struct Value {
  std::string text;  // text, path (~ expanded), choice
  bool flag = false;
  int64_t whole = 0;   // whole, positive
  uint64_t bytes = 0;  // bytes, positive_bytes
  double share = 0;    // share
  std::chrono::milliseconds duration{0};
  std::vector<std::string> list;
};

using Setter = void (*)(Config&, const Value&);
using SectionParser = Status (*)(const YAML::Node&, const std::string& at, Config&);

struct Row {
  std::string_view section;  // "" = top level
  std::string_view name;
  Kind kind;
  Setter set = nullptr;
  const char* env = nullptr;      // FLYTECD_… (read by apply_env), or none
  DurationRange range{};          // duration keys
  const char* choices = nullptr;  // choice keys: "a, b, c"
  SectionParser parse = nullptr;  // section rows
};

std::string expected_text(const Row& row) {
  switch (row.kind) {
    case Kind::text:
      return "a string";
    case Kind::path:
      return "a path";
    case Kind::flag:
      return "true or false";
    case Kind::whole:
    case Kind::positive:
      return "a whole number, 1 or more";
    case Kind::bytes:
      return "a number of bytes, 0 or more";
    case Kind::positive_bytes:
      return "a positive number of bytes (e.g. 268435456)";
    case Kind::share:
      return "a number between 0 and 1";
    case Kind::duration:
      return "a duration like 30s, 5m or 1h";
    case Kind::list:
      return "a list of strings";
    case Kind::choice:
      return std::string("one of ") + row.choices;
    case Kind::section:
      return "a mapping";
  }
  return "a string";
}

// packages.verify: [{prefix, provider, key | keyFile | matchOIDCIdentity}] (a key here is a
// file on this machine: keyFile; a repository path only makes sense in a registration).
Status parse_package_verify(const YAML::Node& v, const std::string& at, Config& cfg) {
  const std::string file = at.substr(0, at.rfind(':'));  // "config PATH"
  if (!v.IsSequence())
    return make_error(ErrorCode::invalid_input,
                      at + ": packages.verify: expected a list of {prefix, provider, keyFile or "
                           "matchOIDCIdentity}");
  for (size_t i = 0; i < v.size(); ++i) {
    sources::VerifySpec spec;
    const std::string field = "packages.verify[" + std::to_string(i) + "]";
    if (auto p = sources::parse_verify_spec(v[i], field, true, spec))
      return make_error(ErrorCode::invalid_input, file + ":" + std::to_string(p->line) + ": " +
                                                      p->field + ": " + p->what + "; expected " +
                                                      p->expected);
    if (!spec.key.empty())
      return make_error(ErrorCode::invalid_input,
                        file + ":" + std::to_string(v[i].Mark().line + 1) + ": " + field +
                            ".key: a repository path in the configuration; expected keyFile "
                            "(a file on this machine)");
    spec.key_file = expand_home(spec.key_file);
    spec.where = "config " + field;
    cfg.packages.verify.push_back(std::move(spec));
  }
  return ok_status();
}

// A section of flytectl's `admin:` keys (admin, flyte2) into `out`, errors at the key's line.
// `strict`: a key apply_admin_key does not read is an error (flytectl's admin: ignores them).
Status parse_admin_keys(const YAML::Node& v, const std::string& at, const std::string& section,
                        sinks::flyteadmin::AdminConfig& out, bool strict) {
  if (!v.IsMap())
    return make_error(ErrorCode::invalid_input, at + ": " + section + ": expected a mapping");
  const std::string file = at.substr(0, at.rfind(':'));  // "config PATH"
  for (const auto& a : v) {
    std::vector<std::string> values;
    if (a.second.IsSequence())
      values = a.second.as<std::vector<std::string>>();
    else if (a.second.IsScalar())
      values.push_back(a.second.Scalar());
    const auto& known = sinks::flyteadmin::admin_keys();
    if (strict && std::find(known.begin(), known.end(), a.first.Scalar()) == known.end()) {
      std::string names;
      for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
      return make_error(ErrorCode::invalid_input,
                        file + ":" + std::to_string(a.first.Mark().line + 1) + ": " + section +
                            "." + scan::printable(a.first.Scalar()) + ": unknown key (expected " +
                            names + ")");
    }
    if (auto s = sinks::flyteadmin::apply_admin_key(out, a.first.Scalar(), values); !s)
      return make_error(ErrorCode::invalid_input, file + ":" +
                                                      std::to_string(a.first.Mark().line + 1) +
                                                      ": " + section + ": " + s.error().message);
  }
  return ok_status();
}

Status parse_admin(const YAML::Node& v, const std::string& at, Config& cfg) {
  return parse_admin_keys(v, at, "admin", cfg.admin, false);
}

// flyte2: the target is Flyte 2; `flyte2:` or `flyte2: {}` alone is the embedded emulator.
Status parse_flyte2(const YAML::Node& v, const std::string& at, Config& cfg) {
  cfg.flyte2.enabled = true;
  if (v.IsNull()) return ok_status();
  return parse_admin_keys(v, at, "flyte2", cfg.flyte2.admin, true);
}

Status parse_kubernetes(const YAML::Node& v, const std::string& at, Config& cfg) {
  if (auto s = k8s::parse_settings(v, at, cfg.kubernetes); !s) return s;
  cfg.documents.configmap_mode = cfg.kubernetes.config_map.enabled;
  return ok_status();
}

Status parse_notifications(const YAML::Node& v, const std::string& at, Config& cfg);

// The rows, in the order errors list them.
constexpr Row k_rows[] = {
    {"", "repo", Kind::path, [](Config& c, const Value& v) { c.repo = v.text; }, "FLYTECD_REPO"},
    {"", "stateDir", Kind::path, [](Config& c, const Value& v) { c.state_dir = v.text; },
     "FLYTECD_STATE_DIR"},
    {"", "flytectlConfig", Kind::path, nullptr, "FLYTECD_FLYTECTL_CONFIG"},  // merged: see set
    {"", "admin", Kind::section, nullptr, nullptr, {}, nullptr, parse_admin},
    {"", "flyte2", Kind::section, nullptr, nullptr, {}, nullptr, parse_flyte2},
    {"", "policy", Kind::section},
    {"", "domains", Kind::list, [](Config& c, const Value& v) { c.documents.domains = v.list; }},
    {"", "parallelism", Kind::whole,
     [](Config& c, const Value& v) {
       c.parallelism = static_cast<int>(std::max<int64_t>(1, v.whole));
     }},
    {"", "lockWait", Kind::duration,
     [](Config& c, const Value& v) {
       c.lock_wait_seconds = static_cast<double>(v.duration.count()) / 1000.0;
     },
     nullptr, k_lock_wait_range},
    {"", "git", Kind::section},
    {"", "interval", Kind::duration,
     [](Config& c, const Value& v) {
       c.interval_seconds = static_cast<double>(v.duration.count()) / 1000.0;
     },
     nullptr, k_interval_range},
    {"", "driftScanInterval", Kind::duration,
     [](Config& c, const Value& v) {
       c.drift_scan_seconds = static_cast<double>(v.duration.count()) / 1000.0;
     },
     nullptr, k_interval_range},
    {"", "http", Kind::section},
    {"", "notifications", Kind::section, nullptr, nullptr, {}, nullptr, parse_notifications},
    {"", "packages", Kind::section},
    {"", "history", Kind::section},
    {"", "kubernetes", Kind::section, nullptr, nullptr, {}, nullptr, parse_kubernetes},
    {"", "log", Kind::section},
    // admin: parsed by sinks/flyteadmin (apply_admin_key); these two rows are its variables.
    {"admin", "endpoint", Kind::text, [](Config& c, const Value& v) { c.admin.endpoint = v.text; },
     "FLYTECD_ADMIN_ENDPOINT"},
    {"admin", "insecure", Kind::flag, [](Config& c, const Value& v) { c.admin.insecure = v.flag; },
     "FLYTECD_ADMIN_INSECURE"},
    // flyte2: the same keys as admin (apply_admin_key); the endpoint's variable selects Flyte 2.
    {"flyte2", "endpoint", Kind::text,
     [](Config& c, const Value& v) {
       c.flyte2.enabled = true;
       c.flyte2.admin.endpoint = v.text;
     },
     "FLYTECD_FLYTE2_ENDPOINT"},
    {"flyte2", "insecure", Kind::flag,
     [](Config& c, const Value& v) { c.flyte2.admin.insecure = v.flag; },
     "FLYTECD_FLYTE2_INSECURE"},
    {"git", "url", Kind::text, [](Config& c, const Value& v) { c.git.url = v.text; },
     "FLYTECD_GIT_URL"},
    {"git", "ref", Kind::text, [](Config& c, const Value& v) { c.git.ref = v.text; },
     "FLYTECD_GIT_REF"},
    {"git", "path", Kind::text, [](Config& c, const Value& v) { c.git.path = v.text; }},
    {"git", "username", Kind::text, [](Config& c, const Value& v) { c.git.username = v.text; }},
    {"git", "passwordFile", Kind::path,
     [](Config& c, const Value& v) { c.git.password_file = v.text; }},
    {"git", "passwordEnv", Kind::text,
     [](Config& c, const Value& v) { c.git.password_env = v.text; }},
    {"git", "sshKeyFile", Kind::path,
     [](Config& c, const Value& v) { c.git.ssh_key_file = v.text; }},
    {"git", "sshKnownHostsFile", Kind::path,
     [](Config& c, const Value& v) { c.git.ssh_known_hosts_file = v.text; }},
    {"git", "sshPassphraseEnv", Kind::text,
     [](Config& c, const Value& v) { c.git.ssh_passphrase_env = v.text; }},
    {"git", "allowedSignersFile", Kind::path,
     [](Config& c, const Value& v) { c.git.allowed_signers_file = v.text; }},
    {"http", "listen", Kind::text, [](Config& c, const Value& v) { c.http.listen = v.text; },
     "FLYTECD_HTTP_LISTEN"},
    {"http", "ui", Kind::flag, [](Config& c, const Value& v) { c.http.ui = v.flag; }},
    {"http", "githubSecretFile", Kind::path,
     [](Config& c, const Value& v) { c.http.github_secret_file = v.text; }},
    {"http", "gitlabTokenFile", Kind::path,
     [](Config& c, const Value& v) { c.http.gitlab_token_file = v.text; }},
    {"http", "genericSecretFile", Kind::path,
     [](Config& c, const Value& v) { c.http.generic_secret_file = v.text; }},
    {"http", "syncTokenFile", Kind::path,
     [](Config& c, const Value& v) { c.http.sync_token_file = v.text; }},
    {"history", "maxEntries", Kind::positive,
     [](Config& c, const Value& v) { c.history.max_entries = v.whole; }},
    {"history", "maxAgeDays", Kind::positive,
     [](Config& c, const Value& v) { c.history.max_age_seconds = v.whole * 24 * 3600; }},
    {"log",
     "level",
     Kind::choice,
     [](Config& c, const Value& v) { c.log.level = v.text; },
     nullptr,
     {},
     "trace, debug, info, warn, error, off"},
    {"log",
     "format",
     Kind::choice,
     [](Config& c, const Value& v) { c.log.format = v.text; },
     nullptr,
     {},
     "text, json"},
    {"packages", "registry", Kind::text,
     [](Config& c, const Value& v) { c.packages.registry = v.text; }},
    {"packages", "cacheDir", Kind::path,
     [](Config& c, const Value& v) { c.packages.cache_dir = v.text; }},
    {"packages", "cacheMaxBytes", Kind::bytes,
     [](Config& c, const Value& v) { c.packages.cache_max_bytes = v.bytes; }},
    {"packages", "maxPackageBytes", Kind::positive_bytes,
     [](Config& c, const Value& v) { c.packages.max_package_bytes = v.bytes; }},
    {"packages", "memoryBudgetBytes", Kind::positive_bytes,
     [](Config& c, const Value& v) { c.packages.memory_budget_bytes = v.bytes; }},
    {"packages", "caFile", Kind::path,
     [](Config& c, const Value& v) { c.packages.ca_file = v.text; }},
    {"packages", "dockerConfig", Kind::path,
     [](Config& c, const Value& v) { c.packages.docker_config = v.text; }},
    {"packages", "verify", Kind::section, nullptr, nullptr, {}, nullptr, parse_package_verify},
    {"packages", "trustedRoot", Kind::path,
     [](Config& c, const Value& v) { c.packages.trusted_root_file = v.text; }},
    {"packages", "plainHttpRegistries", Kind::list,
     [](Config& c, const Value& v) { c.packages.plain_http_registries = v.list; }},
    // Whole seconds, rounded up (the transfer bounds are per second).
    {"packages", "fetchTimeout", Kind::duration,
     [](Config& c, const Value& v) {
       c.packages.fetch_timeout_seconds = static_cast<int>((v.duration.count() + 999) / 1000);
     },
     nullptr, k_transfer_range},
    {"packages", "stallTimeout", Kind::duration,
     [](Config& c, const Value& v) {
       c.packages.stall_timeout_seconds = static_cast<int>((v.duration.count() + 999) / 1000);
     },
     nullptr, k_transfer_range},
    {"policy", "selfHeal", Kind::flag,
     [](Config& c, const Value& v) { c.policy.self_heal = v.flag; }, "FLYTECD_SELF_HEAL"},
    {"policy", "prune", Kind::flag, [](Config& c, const Value& v) { c.policy.prune = v.flag; },
     "FLYTECD_PRUNE"},
    {"policy", "maxPruneShare", Kind::share,
     [](Config& c, const Value& v) { c.policy.max_prune_share = v.share; }},
    {"policy", "allowMassPrune", Kind::flag,
     [](Config& c, const Value& v) { c.policy.allow_mass_prune = v.flag; }},
    {"policy", "allowEmpty", Kind::flag,
     [](Config& c, const Value& v) { c.policy.allow_empty = v.flag; }},
    {"policy", "requireDigestPins", Kind::flag,
     [](Config& c, const Value& v) { c.documents.require_digest_pins = v.flag; }},
    {"notifications", "type", Kind::choice, nullptr, nullptr, {}, "generic, slack"},
    {"notifications", "urlFile", Kind::path},
    {"notifications", "urlEnv", Kind::text},
    {"notifications", "hmacSecretFile", Kind::path},
};

constexpr std::span<const Row> rows() { return k_rows; }

const Row* find_row(std::string_view section, std::string_view name) {
  for (const auto& r : rows())
    if (r.section == section && r.name == name) return &r;
  return nullptr;
}

std::string names_in(std::string_view section) {
  std::string out;
  for (const auto& r : rows())
    if (r.section == section) out += (out.empty() ? "" : ", ") + std::string(r.name);
  return out;
}

// The key in errors: "git.url", "interval".
std::string full_name(const Row& r) {
  return r.section.empty() ? std::string(r.name)
                           : std::string(r.section) + "." + std::string(r.name);
}

// Converts the YAML value of a plain row (throws YAML::Exception on a conversion the caller
// reports with expected_text). Errors: a value in the type but out of the row's range.
Result<Value> convert(const Row& row, const YAML::Node& node) {
  Value v;
  switch (row.kind) {
    case Kind::text:
      v.text = node.as<std::string>();
      break;
    case Kind::path:
      v.text = expand_home(node.as<std::string>());
      break;
    case Kind::flag:
      v.flag = node.as<bool>();
      break;
    case Kind::whole:
      v.whole = node.as<int>();
      break;
    case Kind::positive:
      v.whole = node.as<int64_t>();
      if (v.whole < 1)
        return make_error(
            ErrorCode::invalid_input,
            std::string("expected 1 or more") + (row.name == "maxAgeDays" ? " days" : " entries"));
      break;
    case Kind::bytes:
      v.bytes = node.as<uint64_t>();
      break;
    case Kind::positive_bytes:
      v.bytes = node.as<uint64_t>();
      if (v.bytes == 0)
        return make_error(ErrorCode::invalid_input,
                          "must be a positive number of bytes (e.g. 268435456)");
      break;
    case Kind::share:
      v.share = node.as<double>();
      break;
    case Kind::duration: {
      auto d = parse_duration(node.as<std::string>(), row.range);
      if (!d) return d.error();
      v.duration = *d;
      break;
    }
    case Kind::list:
      v.list = node.as<std::vector<std::string>>();
      break;
    case Kind::choice: {
      v.text = node.as<std::string>();
      bool known = false;
      std::string_view rest = row.choices;
      while (!rest.empty() && !known) {
        const size_t comma = rest.find(", ");
        known = rest.substr(0, comma) == v.text;
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 2);
      }
      if (!known)
        return make_error(ErrorCode::invalid_input,
                          "'" + scan::printable(v.text) + "' is not one of " + row.choices);
      break;
    }
    case Kind::section:
      break;
  }
  return v;
}

// Reads a file's mapping of plain keys (the top level or a section).
struct Reader {
  const std::string& path;
  Config& cfg;
  std::string at_key;  // the key being read, so a conversion error can name it
  const Row* at_row = nullptr;

  std::string where(const YAML::Node& n, const std::string& key) const {
    return "config " + path + ":" + std::to_string(n.Mark().line + 1) + ": " + key;
  }
  Status unknown(const YAML::Node& key_node, std::string_view section, const std::string& key) {
    return make_error(ErrorCode::invalid_input,
                      where(key_node, key) + ": unknown key (expected " + names_in(section) + ")");
  }
  // One row's value: converted, range-checked, set (section rows: their parser).
  Status read(const Row& row, const YAML::Node& v);
  // A section of plain rows: a mapping whose keys are the section's rows.
  Status read_section(std::string_view section, const YAML::Node& v);
};

Status Reader::read_section(std::string_view section, const YAML::Node& v) {
  if (!v.IsMap())
    return make_error(ErrorCode::invalid_input,
                      where(v, std::string(section)) + ": expected a mapping");
  for (const auto& kv : v) {
    const std::string k = kv.first.Scalar();
    const Row* row = find_row(section, k);
    if (!row) return unknown(kv.first, section, std::string(section) + "." + k);
    if (auto s = read(*row, kv.second); !s) return s;
  }
  return ok_status();
}

Status Reader::read(const Row& row, const YAML::Node& v) {
  at_key = full_name(row);
  at_row = &row;
  if (row.kind == Kind::section) {
    if (row.parse)
      return row.parse(v, "config " + path + ":" + std::to_string(v.Mark().line + 1), cfg);
    return read_section(row.name, v);
  }
  auto value = convert(row, v);
  if (!value)
    return make_error(ErrorCode::invalid_input, where(v, at_key) + ": " + value.error().message);
  if (row.name == "flytectlConfig" && row.section.empty()) return merge_flytectl(value->text, cfg);
  if (row.set) row.set(cfg, *value);
  return ok_status();
}

Status parse_notifications(const YAML::Node& v, const std::string& at, Config& cfg) {
  if (!v.IsSequence())
    return make_error(ErrorCode::invalid_input, at + ": notifications: expected a list");
  for (const auto& n : v) {
    NotificationConfig nc;
    for (const auto& f : n) {
      const std::string k = f.first.Scalar();
      const Row* row = find_row("notifications", k);
      const std::string line = std::to_string(f.first.Mark().line + 1);
      const std::string file = at.substr(0, at.rfind(':'));
      if (!row)
        return make_error(ErrorCode::invalid_input, file + ":" + line + ": notifications." + k +
                                                        ": unknown key (expected " +
                                                        names_in("notifications") + ")");
      const std::string val = f.second.as<std::string>();
      if (k == "type")
        nc.type = val;
      else if (k == "urlFile")
        nc.url_file = expand_home(val);
      else if (k == "urlEnv")
        nc.url_env = val;
      else
        nc.hmac_secret_file = expand_home(val);
    }
    const std::string here =
        at.substr(0, at.rfind(':')) + ":" + std::to_string(n.Mark().line + 1) + ": notifications";
    if (nc.type != "generic" && nc.type != "slack")
      return make_error(ErrorCode::invalid_input, here + ": type must be generic or slack");
    if (nc.url_file.empty() && nc.url_env.empty())
      return make_error(ErrorCode::invalid_input, here + ": urlFile or urlEnv is required");
    cfg.notifications.push_back(nc);
  }
  return ok_status();
}

}  // namespace

std::vector<KeyInfo> keys() {
  std::vector<KeyInfo> out;
  for (const auto& r : rows())
    if (r.kind != Kind::section)
      out.push_back({full_name(r), r.env ? r.env : "", expected_text(r)});
  return out;
}

Config defaults() {
  Config cfg;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg)
    cfg.state_dir = std::string(xdg) + "/flytecd";
  else if (const char* home = std::getenv("HOME"); home && *home)
    cfg.state_dir = std::string(home) + "/.local/state/flytecd";
  else
    cfg.state_dir = "/var/lib/flytecd";
  return cfg;
}

Status load_file(const std::string& path, Config& cfg) {
  // A ConfigMap mounted where a file was expected is a directory: YAML::LoadFile would throw an
  // I/O exception that is not a YAML::Exception.
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    return make_error(ErrorCode::invalid_input,
                      "config " + path + ": is a directory (expected a YAML file)");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::invalid_input,
                      "config " + path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return make_error(ErrorCode::invalid_input, "config " + path + ": cannot be read: " + e.what());
  }
  if (root.IsNull()) return ok_status();
  if (!root.IsMap())
    return make_error(ErrorCode::invalid_input, "config " + path + ": expected a mapping");
  Reader reader{path, cfg, {}, nullptr};
  try {
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      reader.at_key = key;
      const Row* row = find_row("", key);
      if (!row) return reader.unknown(kv.first, "", key);
      if (auto s = reader.read(*row, kv.second); !s) return s;
    }
  } catch (const YAML::Exception& e) {
    const std::string expected = reader.at_row ? expected_text(*reader.at_row) : "a string";
    return make_error(ErrorCode::invalid_input,
                      "config " + path + ":" + std::to_string(e.mark.line + 1) + ": " +
                          reader.at_key + ": " + e.msg + " (expected " + expected + ")");
  }
  if (auto s = check_ranges(cfg); !s)
    return make_error(ErrorCode::invalid_input, "config " + path + ": " + s.error().message);
  return ok_status();
}

Status check_ranges(const Config& cfg) {
  const double share = cfg.policy.max_prune_share;
  if (!(share >= 0 && share <= 1))
    return make_error(ErrorCode::invalid_input,
                      "policy.maxPruneShare: " + std::to_string(share) +
                          " is out of range; expected a share between 0 and 1 (0.5 = half of the "
                          "managed objects)");
  if (!(cfg.lock_wait_seconds >= 0))
    return make_error(ErrorCode::invalid_input,
                      "lockWait: expected a duration of zero or more seconds");
  return ok_status();
}

Status apply_env(Config& cfg) {
  for (const auto& row : rows()) {
    if (!row.env) continue;
    const char* v = std::getenv(row.env);
    if (!v || !*v) continue;
    if (row.name == "flytectlConfig") {
      if (auto s = merge_flytectl(v, cfg); !s) return s;
      continue;
    }
    Value value;
    if (row.kind == Kind::flag) {
      auto b = to_bool(row.env, v);
      if (!b) return b.error();
      value.flag = *b;
    } else {
      value.text = v;
    }
    row.set(cfg, value);
  }
  return ok_status();
}

}  // namespace flytecd::config
