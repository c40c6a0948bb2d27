#include "daemon/config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

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

// What a key holds, for conversion errors ("bad conversion" alone names nothing).
std::string expected_for(const std::string& key) {
  if (key == "packages.cacheMaxBytes") return "a number of bytes, 0 or more";
  if (key == "parallelism") return "a whole number, 1 or more";
  if (key == "interval" || key == "lockWait") return "a duration like 30s, 5m or 1h";
  if (key == "policy.maxPruneShare") return "a number between 0 and 1";
  if (key == "domains" || key == "packages.plainHttpRegistries") return "a list of strings";
  if (key.rfind("policy.", 0) == 0 || key == "http.ui") return "true or false";
  return "a string";
}

}  // namespace

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
  auto where = [&](const YAML::Node& n, const std::string& key) {
    return "config " + path + ":" + std::to_string(n.Mark().line + 1) + ": " + key;
  };
  std::string at_key;  // the key being read, so a conversion error can name it
  try {
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      const YAML::Node& v = kv.second;
      at_key = key;
      if (key == "repo")
        cfg.repo = expand_home(v.as<std::string>());
      else if (key == "stateDir")
        cfg.state_dir = expand_home(v.as<std::string>());
      else if (key == "parallelism")
        cfg.parallelism = std::max(1, v.as<int>());
      else if (key == "lockWait") {
        auto d = parse_duration(v.as<std::string>(), k_lock_wait_range);
        if (!d)
          return make_error(ErrorCode::invalid_input, where(v, key) + ": " + d.error().message);
        cfg.lock_wait_seconds = static_cast<double>(d->count()) / 1000.0;
      } else if (key == "flytectlConfig") {
        if (auto s = merge_flytectl(v.as<std::string>(), cfg); !s) return s;
      } else if (key == "domains") {
        cfg.documents.domains = v.as<std::vector<std::string>>();
      } else if (key == "admin") {
        if (!v.IsMap())
          return make_error(ErrorCode::invalid_input, where(v, key) + ": expected a mapping");
        for (const auto& a : v) {
          std::vector<std::string> values;
          if (a.second.IsSequence())
            values = a.second.as<std::vector<std::string>>();
          else if (a.second.IsScalar())
            values.push_back(a.second.Scalar());
          if (auto s = sinks::flyteadmin::apply_admin_key(cfg.admin, a.first.Scalar(), values); !s)
            return make_error(ErrorCode::invalid_input,
                              where(a.first, "admin") + ": " + s.error().message);
        }
      } else if (key == "interval") {
        auto d = parse_duration(v.as<std::string>(), k_interval_range);
        if (!d)
          return make_error(ErrorCode::invalid_input, where(v, key) + ": " + d.error().message);
        cfg.interval_seconds = static_cast<double>(d->count()) / 1000.0;
      } else if (key == "git") {
        if (!v.IsMap())
          return make_error(ErrorCode::invalid_input, where(v, key) + ": expected a mapping");
        for (const auto& g : v) {
          const std::string k = g.first.Scalar();
          at_key = key + "." + k;
          const std::string val = g.second.as<std::string>();
          auto& c = cfg.git;
          if (k == "url")
            c.url = val;
          else if (k == "ref")
            c.ref = val;
          else if (k == "path")
            c.path = val;
          else if (k == "username")
            c.username = val;
          else if (k == "passwordFile")
            c.password_file = expand_home(val);
          else if (k == "passwordEnv")
            c.password_env = val;
          else if (k == "sshKeyFile")
            c.ssh_key_file = expand_home(val);
          else if (k == "sshKnownHostsFile")
            c.ssh_known_hosts_file = expand_home(val);
          else if (k == "sshPassphraseEnv")
            c.ssh_passphrase_env = val;
          else if (k == "allowedSignersFile")
            c.allowed_signers_file = expand_home(val);
          else
            return make_error(
                ErrorCode::invalid_input,
                where(g.first, "git." + k) +
                    ": unknown key (expected url, ref, path, username, passwordFile, passwordEnv, "
                    "sshKeyFile, sshKnownHostsFile, sshPassphraseEnv, allowedSignersFile)");
        }
      } else if (key == "http") {
        if (!v.IsMap())
          return make_error(ErrorCode::invalid_input, where(v, key) + ": expected a mapping");
        for (const auto& h : v) {
          const std::string k = h.first.Scalar();
          at_key = key + "." + k;
          auto& c = cfg.http;
          if (k == "ui") {
            c.ui = h.second.as<bool>();
            continue;
          }
          const std::string val = h.second.as<std::string>();
          if (k == "listen")
            c.listen = val;
          else if (k == "githubSecretFile")
            c.github_secret_file = expand_home(val);
          else if (k == "gitlabTokenFile")
            c.gitlab_token_file = expand_home(val);
          else if (k == "genericSecretFile")
            c.generic_secret_file = expand_home(val);
          else if (k == "syncTokenFile")
            c.sync_token_file = expand_home(val);
          else
            return make_error(
                ErrorCode::invalid_input,
                where(h.first, "http." + k) +
                    ": unknown key (expected listen, ui, githubSecretFile, gitlabTokenFile, "
                    "genericSecretFile, syncTokenFile)");
        }
      } else if (key == "notifications") {
        if (!v.IsSequence())
          return make_error(ErrorCode::invalid_input, where(v, key) + ": expected a list");
        for (const auto& n : v) {
          NotificationConfig nc;
          for (const auto& f : n) {
            const std::string k = f.first.Scalar();
            at_key = key + "." + k;
            const std::string val = f.second.as<std::string>();
            if (k == "type")
              nc.type = val;
            else if (k == "urlFile")
              nc.url_file = expand_home(val);
            else if (k == "urlEnv")
              nc.url_env = val;
            else if (k == "hmacSecretFile")
              nc.hmac_secret_file = expand_home(val);
            else
              return make_error(
                  ErrorCode::invalid_input,
                  where(f.first, "notifications." + k) +
                      ": unknown key (expected type, urlFile, urlEnv, hmacSecretFile)");
          }
          if (nc.type != "generic" && nc.type != "slack")
            return make_error(ErrorCode::invalid_input,
                              where(n, key) + ": type must be generic or slack");
          if (nc.url_file.empty() && nc.url_env.empty())
            return make_error(ErrorCode::invalid_input,
                              where(n, key) + ": urlFile or urlEnv is required");
          cfg.notifications.push_back(nc);
        }
      } else if (key == "history") {
        if (!v.IsMap())
          return make_error(ErrorCode::invalid_input, where(v, key) + ": expected a mapping");
        for (const auto& h : v) {
          const std::string k = h.first.Scalar();
          at_key = key + "." + k;
          if (k == "maxEntries") {
            cfg.history.max_entries = h.second.as<int64_t>();
            if (cfg.history.max_entries < 1)
              return make_error(ErrorCode::invalid_input,
                                where(h.second, at_key) + ": expected 1 or more entries");
          } else if (k == "maxAgeDays") {
            const int64_t days = h.second.as<int64_t>();
            if (days < 1)
              return make_error(ErrorCode::invalid_input,
                                where(h.second, at_key) + ": expected 1 or more days");
            cfg.history.max_age_seconds = days * 24 * 3600;
          } else {
            return make_error(
                ErrorCode::invalid_input,
                where(h.first, at_key) + ": unknown key (expected maxEntries, maxAgeDays)");
          }
        }
      } else if (key == "log") {
        if (!v.IsMap())
          return make_error(ErrorCode::invalid_input, where(v, key) + ": expected a mapping");
        for (const auto& l : v) {
          const std::string k = l.first.Scalar();
          at_key = key + "." + k;
          const std::string value = l.second.as<std::string>();
          const bool known = k == "level"
                                 ? (value == "trace" || value == "debug" || value == "info" ||
                                    value == "warn" || value == "error" || value == "off")
                             : k == "format" ? (value == "text" || value == "json")
                                             : false;
          if (k != "level" && k != "format")
            return make_error(ErrorCode::invalid_input,
                              where(l.first, at_key) + ": unknown key (expected level, format)");
          if (!known)
            return make_error(
                ErrorCode::invalid_input,
                where(l.second, at_key) + ": '" + scan::printable(value) + "' is not one of " +
                    (k == "level" ? "trace, debug, info, warn, error, off" : "text, json"));
          (k == "level" ? cfg.log.level : cfg.log.format) = value;
        }
      } else if (key == "packages") {
        if (!v.IsMap())
          return make_error(ErrorCode::invalid_input, where(v, key) + ": expected a mapping");
        auto& c = cfg.packages;
        for (const auto& p : v) {
          const std::string k = p.first.Scalar();
          at_key = key + "." + k;
          if (k == "registry")
            c.registry = p.second.as<std::string>();
          else if (k == "cacheDir")
            c.cache_dir = expand_home(p.second.as<std::string>());
          else if (k == "cacheMaxBytes")
            c.cache_max_bytes = p.second.as<uint64_t>();
          else if (k == "maxPackageBytes" || k == "memoryBudgetBytes") {
            const uint64_t n = p.second.as<uint64_t>();
            if (n == 0)
              return make_error(ErrorCode::invalid_input,
                                where(p.second, "packages." + k) +
                                    ": must be a positive number of bytes (e.g. 268435456)");
            (k == "maxPackageBytes" ? c.max_package_bytes : c.memory_budget_bytes) = n;
          } else if (k == "caFile")
            c.ca_file = expand_home(p.second.as<std::string>());
          else if (k == "dockerConfig")
            c.docker_config = expand_home(p.second.as<std::string>());
          else if (k == "plainHttpRegistries")
            c.plain_http_registries = p.second.as<std::vector<std::string>>();
          else if (k == "fetchTimeout" || k == "stallTimeout") {
            // The one duration parser; whole seconds (the transfer bounds are per second).
            auto d = parse_duration(p.second.as<std::string>(), k_transfer_range);
            if (!d)
              return make_error(ErrorCode::invalid_input,
                                where(p.second, "packages." + k) + ": " + d.error().message);
            (k == "fetchTimeout" ? c.fetch_timeout_seconds : c.stall_timeout_seconds) =
                static_cast<int>((d->count() + 999) / 1000);
          } else
            return make_error(ErrorCode::invalid_input,
                              where(p.first, "packages." + k) +
                                  ": unknown key (expected registry, cacheDir, cacheMaxBytes, "
                                  "maxPackageBytes, memoryBudgetBytes, caFile, dockerConfig, "
                                  "plainHttpRegistries, fetchTimeout, stallTimeout)");
        }
      } else if (key == "kubernetes") {
        const std::string at = "config " + path + ":" + std::to_string(v.Mark().line + 1);
        if (auto s = k8s::parse_settings(v, at, cfg.kubernetes); !s) return s;
        cfg.documents.configmap_mode = cfg.kubernetes.config_map.enabled;
      } else if (key == "policy") {
        if (!v.IsMap())
          return make_error(ErrorCode::invalid_input, where(v, key) + ": expected a mapping");
        for (const auto& p : v) {
          const std::string k = p.first.Scalar();
          at_key = key + "." + k;
          if (k == "selfHeal")
            cfg.policy.self_heal = p.second.as<bool>();
          else if (k == "prune")
            cfg.policy.prune = p.second.as<bool>();
          else if (k == "maxPruneShare")
            cfg.policy.max_prune_share = p.second.as<double>();
          else if (k == "allowMassPrune")
            cfg.policy.allow_mass_prune = p.second.as<bool>();
          else if (k == "allowEmpty")
            cfg.policy.allow_empty = p.second.as<bool>();
          else if (k == "requireDigestPins")
            cfg.documents.require_digest_pins = p.second.as<bool>();
          else
            return make_error(ErrorCode::invalid_input,
                              where(p.first, "policy." + k) +
                                  ": unknown key (expected selfHeal, prune, maxPruneShare, "
                                  "allowMassPrune, allowEmpty, requireDigestPins)");
        }
      } else {
        return make_error(
            ErrorCode::invalid_input,
            where(kv.first, key) +
                ": unknown key (expected repo, stateDir, flytectlConfig, admin, "
                "policy, domains, parallelism, lockWait, git, interval, http, notifications, "
                "packages, history, kubernetes)");
      }
    }
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::invalid_input,
                      "config " + path + ":" + std::to_string(e.mark.line + 1) + ": " + at_key +
                          ": " + e.msg + " (expected " + expected_for(at_key) + ")");
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
  auto env = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
  };
  if (const char* v = env("FLYTECD_FLYTECTL_CONFIG"))
    if (auto s = merge_flytectl(v, cfg); !s) return s;
  if (const char* v = env("FLYTECD_REPO")) cfg.repo = v;
  if (const char* v = env("FLYTECD_GIT_URL")) cfg.git.url = v;
  if (const char* v = env("FLYTECD_GIT_REF")) cfg.git.ref = v;
  if (const char* v = env("FLYTECD_HTTP_LISTEN")) cfg.http.listen = v;
  if (const char* v = env("FLYTECD_STATE_DIR")) cfg.state_dir = v;
  if (const char* v = env("FLYTECD_ADMIN_ENDPOINT")) cfg.admin.endpoint = v;
  if (const char* v = env("FLYTECD_ADMIN_INSECURE")) {
    auto b = to_bool("FLYTECD_ADMIN_INSECURE", v);
    if (!b) return b.error();
    cfg.admin.insecure = *b;
  }
  if (const char* v = env("FLYTECD_SELF_HEAL")) {
    auto b = to_bool("FLYTECD_SELF_HEAL", v);
    if (!b) return b.error();
    cfg.policy.self_heal = *b;
  }
  if (const char* v = env("FLYTECD_PRUNE")) {
    auto b = to_bool("FLYTECD_PRUNE", v);
    if (!b) return b.error();
    cfg.policy.prune = *b;
  }
  return ok_status();
}

}  // namespace flytecd::config
