// `flytecd get objects`: one row per object a running daemon reconciles, with its state, the
// revision it was last applied from and when (GET /api/v1/status).
#include "daemon/cli/commands/get_objects.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <map>

#include "daemon/cli/command.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/reconcile/diff.hpp"

namespace flytecd::cli {
namespace {

std::vector<std::string> split(const std::string& key) {
  std::vector<std::string> out;
  size_t from = 0;
  while (true) {
    const auto slash = key.find('/', from);
    out.push_back(key.substr(from, slash == std::string::npos ? std::string::npos : slash - from));
    if (slash == std::string::npos) return out;
    from = slash + 1;
  }
}

// The identity fields of a key.
ObjectRow row_of(const std::string& key) {
  ObjectRow r;
  r.key = key;
  const auto f = split(key);
  r.kind = f[0];
  if (r.kind == "project" && f.size() >= 2) {
    r.project = r.name = f[1];
  } else if (r.kind == "override" && f.size() >= 5) {
    r.project = f[1];
    r.domain = f[2];
    r.workflow = f[3];
    r.name = f[4] + (r.workflow.empty() ? "" : " @ " + r.workflow);
  } else if (r.kind == "registration" && f.size() >= 4) {
    r.project = f[1];
    r.domain = f[2];
    r.name = f[3];
  } else {
    r.name = key;
  }
  return r;
}

// An object's state in the words of `get objects` (the pass's "synced" is "in-sync").
std::string object_state(const std::string& s) { return s == "synced" ? "in-sync" : s; }

// A registration's state after the pass: written this pass is in sync now.
std::string registration_state(const nlohmann::json& r) {
  const std::string s = json_string(r, "state");
  if (s == "failed" || s == "conflict") return "failed";
  if (s == "register" || s == "activate") return "pending";
  const auto drift = r.value("drift", nlohmann::json::array());
  const auto activated = r.value("activated", nlohmann::json::array());
  if (drift.is_array() && !drift.empty() && (!activated.is_array() || activated.empty()))
    return "drifted";
  if (s == "registered" || s == "activated" || s == "in-sync") return "in-sync";
  return s;  // removed, orphaned
}

void applied_of(const nlohmann::json& o, ObjectRow& r) {
  r.revision = json_string(o, "revision");
  r.last_change = json_string(o, "lastChange");
}

std::string drift_detail(const nlohmann::json& d) {
  std::string out = json_string(d, "detail");
  for (const auto& c : d.value("changes", nlohmann::json::array()))
    if (c.is_object()) out += "; " + reconcile::change_line(reconcile::change_from_json(c));
  return out;
}

std::string cell(const std::string& s) { return s.empty() ? "-" : s; }

}  // namespace

const std::vector<std::string>& object_states() {
  static const std::vector<std::string> k{"in-sync", "pending",   "drifted", "failed",
                                          "unknown", "unmanaged", "removed", "orphaned"};
  return k;
}

const std::vector<std::string>& object_kinds() {
  static const std::vector<std::string> k{"project", "override", "registration"};
  return k;
}

std::vector<ObjectRow> object_rows(const nlohmann::json& s) {
  std::map<std::string, std::string> drift;
  for (const auto& d : s.value("drift", nlohmann::json::array()))
    if (d.is_object() && !json_string(d, "key").empty()) {
      auto& text = drift[json_string(d, "key")];
      text += (text.empty() ? "" : "; ") + drift_detail(d);
    }
  std::map<std::string, ObjectRow> rows;
  for (const auto& o : s.value("objects", nlohmann::json::array())) {
    if (!o.is_object() || json_string(o, "key").empty()) continue;
    ObjectRow r = row_of(json_string(o, "key"));
    r.state = object_state(json_string(o, "state"));
    r.detail = json_string(o, "error");
    applied_of(o, r);
    if (auto d = drift.find(r.key); d != drift.end() && r.state == "drifted") r.detail = d->second;
    rows[r.key] = std::move(r);
  }
  for (const auto& g : s.value("registrations", nlohmann::json::array())) {
    if (!g.is_object() || json_string(g, "key").empty()) continue;
    ObjectRow r = row_of(json_string(g, "key"));
    r.state = registration_state(g);
    r.detail = json_string(g, "message");
    if (r.state == "drifted" && drift.count(r.key)) r.detail = drift[r.key];
    if (!json_string(g, "version").empty())
      r.detail = "version " + json_string(g, "version") + (r.detail.empty() ? "" : "; " + r.detail);
    applied_of(g, r);
    rows[r.key] = std::move(r);
  }
  std::vector<ObjectRow> out;
  out.reserve(rows.size());
  for (auto& [k, r] : rows) out.push_back(std::move(r));
  return out;
}

bool matches(const ObjectRow& r, const ObjectFilter& f) {
  return (f.project.empty() || r.project == f.project) &&
         (f.domain.empty() || r.domain == f.domain) && (f.kind.empty() || r.kind == f.kind) &&
         (f.state.empty() || r.state == f.state);
}

std::string objects_table(const std::vector<ObjectRow>& rows) {
  const std::vector<std::string> head{"KIND",  "PROJECT",  "DOMAIN",     "NAME",
                                      "STATE", "REVISION", "LAST CHANGE"};
  std::vector<std::vector<std::string>> cells{head};
  for (const auto& r : rows)
    cells.push_back({r.kind, cell(r.project), cell(r.domain), r.name, r.state,
                     cell(r.revision.substr(0, 12)), cell(r.last_change)});
  std::vector<size_t> width(head.size(), 0);
  for (const auto& c : cells)
    for (size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
  std::string out;
  for (const auto& c : cells) {
    std::string line;
    for (size_t i = 0; i < c.size(); ++i)
      line += c[i] + (i + 1 < c.size() ? std::string(width[i] - c[i].size() + 2, ' ') : "");
    out += line + "\n";
  }
  std::map<std::string, size_t> by_state;
  for (const auto& r : rows) {
    ++by_state[r.state];
    if (r.state != "in-sync" && !r.detail.empty()) out += "  " + r.key + ": " + r.detail + "\n";
  }
  std::string counts;
  for (const auto& [st, n] : by_state)
    counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + st;
  out += std::to_string(rows.size()) + " object(s)" + (counts.empty() ? "" : ": " + counts) + "\n";
  return out;
}

nlohmann::ordered_json objects_document(const std::vector<ObjectRow>& rows,
                                        const nlohmann::json& s) {
  nlohmann::ordered_json j;
  j["revision"] = json_string(s, "revision");
  j["target"] = json_string(s, "target");
  j["suspended"] = s.contains("suspended") && s["suspended"].is_object();
  nlohmann::ordered_json projects = nlohmann::ordered_json::array();
  for (const auto& p : s.value("suspendedProjects", nlohmann::json::array()))
    if (p.is_object()) projects.push_back(json_string(p, "project"));
  j["suspendedProjects"] = std::move(projects);
  j["objects"] = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    nlohmann::ordered_json o;
    o["key"] = r.key;
    o["kind"] = r.kind;
    o["project"] = r.project;
    o["domain"] = r.domain;
    o["workflow"] = r.workflow;
    o["name"] = r.name;
    o["state"] = r.state;
    o["revision"] =
        r.revision.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.revision);
    o["lastChange"] =
        r.last_change.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.last_change);
    o["detail"] = r.detail;
    j["objects"].push_back(std::move(o));
  }
  return j;
}

int run_get_objects(const RemoteFlags& flags, const ObjectFilter& filter, const std::string& format,
                    std::ostream& out, std::ostream& err) {
  auto remote = resolve_remote(flags);
  if (!remote) {
    err << "flytecd get objects: " << remote.error().message << "\n";
    return 1;
  }
  auto st = daemon_request(*remote, "GET", "/api/v1/status");
  if (!st) {
    err << "flytecd get objects: " << st.error().message << "\n";
    return 1;
  }
  if (!st->contains("objects")) {
    err << "flytecd get objects: the daemon at " << remote->server
        << " has not finished a reconcile yet (flytecd status)\n";
    return 1;
  }
  std::vector<ObjectRow> rows;
  for (auto& r : object_rows(*st))
    if (matches(r, filter)) rows.push_back(std::move(r));
  if (format == "json")
    out << dump_json(objects_document(rows, *st), 2) << "\n";
  else
    out << objects_table(rows);
  return 0;
}

std::function<std::optional<int>()> add_get_objects_command(CLI::App& get, RemoteFlags& remote,
                                                            const AddRemoteOptions& add_remote) {
  struct Parsed {
    ObjectFilter filter;
    std::string format = "table";
  };
  auto opt = std::make_shared<Parsed>();
  auto* cmd = get.add_subcommand(
      "objects", "One row per object a running daemon reconciles: state, revision and last change");
  add_remote(cmd, false);
  cmd->add_option("-p,--project", opt->filter.project, "Only this project")->type_name("PROJECT");
  cmd->add_option("-d,--domain", opt->filter.domain, "Only this domain");
  cmd->add_option("--kind", opt->filter.kind, "Only this kind")
      ->check(CLI::IsMember(object_kinds()));
  cmd->add_option("--state", opt->filter.state, "Only objects in this state")
      ->check(CLI::IsMember(object_states()));
  cmd->add_option("-o,--output", opt->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->footer(
      "Reads GET /api/v1/status of the daemon (the objects of its last pass, the ledger's\n"
      "revision and time of each one's last write); like `flux get` and `argocd app get`.\n"
      "Exit codes: 0, 1 when the daemon cannot be reached or has not finished a pass yet.\n"
      "Examples:\n"
      "  flytecd get objects --config /etc/flytecd/config.yaml --state drifted\n"
      "  flytecd get objects --server http://127.0.0.1:8080 -p flytesnacks -o json\n");
  return when_parsed(cmd, [opt, &remote]() -> int {
    return run_get_objects(remote, opt->filter, opt->format, std::cout, std::cerr);
  });
}

Runner add_get_objects_row(CLI::App&, CommandContext& ctx) {
  return add_get_objects_command(*ctx.get, ctx.remote, ctx.add_remote_options);
}

}  // namespace flytecd::cli
