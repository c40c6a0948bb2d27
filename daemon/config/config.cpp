#include "daemon/config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>

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

Status merge_flytectl(const std::string& path, Config& cfg) {
  auto admin = sinks::flyteadmin::load_flytectl_config(expand_home(path));
  if (!admin) return admin.error();
  cfg.admin = *admin;
  return ok_status();
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
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::invalid_input,
                      "config " + path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (root.IsNull()) return ok_status();
  if (!root.IsMap())
    return make_error(ErrorCode::invalid_input, "config " + path + ": expected a mapping");
  auto where = [&](const YAML::Node& n, const std::string& key) {
    return "config " + path + ":" + std::to_string(n.Mark().line + 1) + ": " + key;
  };
  try {
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      const YAML::Node& v = kv.second;
      if (key == "repo")
        cfg.repo = expand_home(v.as<std::string>());
      else if (key == "stateDir")
        cfg.state_dir = expand_home(v.as<std::string>());
      else if (key == "parallelism")
        cfg.parallelism = std::max(1, v.as<int>());
      else if (key == "flytectlConfig") {
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
      } else if (key == "policy") {
        if (!v.IsMap())
          return make_error(ErrorCode::invalid_input, where(v, key) + ": expected a mapping");
        for (const auto& p : v) {
          const std::string k = p.first.Scalar();
          if (k == "selfHeal")
            cfg.policy.self_heal = p.second.as<bool>();
          else if (k == "prune")
            cfg.policy.prune = p.second.as<bool>();
          else if (k == "maxPruneShare")
            cfg.policy.max_prune_share = p.second.as<double>();
          else if (k == "allowMassPrune")
            cfg.policy.allow_mass_prune = p.second.as<bool>();
          else if (k == "requireDigestPins")
            cfg.documents.require_digest_pins = p.second.as<bool>();
          else
            return make_error(ErrorCode::invalid_input,
                              where(p.first, "policy." + k) +
                                  ": unknown key (expected selfHeal, prune, maxPruneShare, "
                                  "allowMassPrune, requireDigestPins)");
        }
      } else {
        return make_error(ErrorCode::invalid_input,
                          where(kv.first, key) +
                              ": unknown key (expected repo, stateDir, flytectlConfig, admin, "
                              "policy, domains, parallelism)");
      }
    }
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::invalid_input,
                      "config " + path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
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
