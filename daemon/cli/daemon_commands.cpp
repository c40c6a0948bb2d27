#include "daemon/cli/daemon_commands.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

#include "daemon/common/json_dump.hpp"
#include "daemon/reconcile/diff.hpp"

namespace flytecd::cli {
namespace {

constexpr size_t k_drift_lines = 5;

std::string str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

// "alice@host via flytecd" for the suspension's "by" (the daemon adds the remote address).
// The user: $USER, else the OS account of the process (getpwuid), else "uid <n>".
std::string who() {
  const char* user = std::getenv("USER");
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string w;
  if (user && *user) {
    w = user;
  } else if (const struct passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_name && *pw->pw_name) {
    w = pw->pw_name;
  } else {
    w = "uid " + std::to_string(::getuid());
  }
  if (host[0]) w += std::string("@") + host;
  return w + " via flytecd cli";
}

}  // namespace

std::string status_summary(const nlohmann::json& s) {
  std::string out;
  const auto line = [&](const std::string& k, const std::string& v) {
    out += k + std::string(k.size() < 12 ? 12 - k.size() : 1, ' ') + v + "\n";
  };
  if (auto sp = s.find("suspended"); sp != s.end() && sp->is_object()) {
    std::string v = "SUSPENDED since " + str(*sp, "since") + " by " + str(*sp, "by");
    if (!str(*sp, "reason").empty()) v += ": " + str(*sp, "reason");
    line("suspended:", v + " (planning only, nothing is written)");
  } else {
    line("suspended:", "no");
  }
  if (auto sp = s.find("suspendedProjects"); sp != s.end() && sp->is_array() && !sp->empty()) {
    for (const auto& p : *sp) {
      if (!p.is_object()) continue;
      std::string v = str(p, "project") + " since " + str(p, "since") + " by " + str(p, "by");
      if (!str(p, "reason").empty()) v += ": " + str(p, "reason");
      line("suspended project:", v + " (planned only, nothing of it is written)");
    }
  }
  std::string rev = str(s, "revision");
  if (!str(s, "subject").empty()) rev += " (" + str(s, "subject") + ")";
  line("revision:", rev.empty() ? "none loaded yet" : rev);
  if (!str(s, "source").empty()) line("source:", str(s, "source"));
  if (!str(s, "target").empty()) line("target:", str(s, "target"));
  if (auto ls = s.find("lastSync"); ls != s.end() && ls->is_object()) {
    std::string v = str(*ls, "outcome") + " at " + str(*ls, "time") + " (" + str(*ls, "reason");
    if (str(*ls, "mode") == "plan") v += ", planned only";
    line("last sync:", v + ")");
    if (!str(*ls, "summary").empty()) line("summary:", str(*ls, "summary"));
    if (!str(*ls, "error").empty()) line("error:", str(*ls, "error"));
  } else {
    line("last sync:", "none finished yet");
  }
  if (!str(s, "lastError").empty()) line("last error:", str(s, "lastError"));
  if (!str(s, "sourceError").empty()) line("source:", "ERROR " + str(s, "sourceError"));
  const auto drift = s.value("drift", nlohmann::json::array());
  line("drift:", drift.is_array() ? std::to_string(drift.size()) + " object(s)" : "?");
  if (drift.is_array()) {
    for (size_t i = 0; i < drift.size() && i < k_drift_lines; ++i) {
      std::string d = "  " + str(drift[i], "key") + ": " + str(drift[i], "detail");
      for (const auto& c : drift[i].value("changes", nlohmann::json::array())) {
        if (!c.is_object()) continue;
        d += "; " + reconcile::change_line(reconcile::change_from_json(c));
      }
      out += d + "\n";
    }
    if (drift.size() > k_drift_lines)
      out += "  … and " + std::to_string(drift.size() - k_drift_lines) + " more (-o json)\n";
  }
  const auto l = s.value("leader", nlohmann::json());
  if (l.is_object() && l.value("enabled", false)) {
    std::string v = l.value("isLeader", false) ? "this replica (" + str(l, "identity") + ")"
                                               : "another replica: " + str(l, "leader");
    if (!str(l, "error").empty()) v += "; error: " + str(l, "error");
    line("leader:", v);
  } else {
    line("leader:", "no leader election (this replica reconciles)");
  }
  return out;
}

int status_exit_code(const nlohmann::json& s) {
  auto ls = s.find("lastSync");
  if (ls == s.end() || !ls->is_object()) return 1;
  if (str(*ls, "outcome") != "success") return 1;
  if (!str(s, "sourceError").empty()) return 1;
  return 0;
}

int run_remote_status(const RemoteFlags& flags, const std::string& format, std::ostream& out,
                      std::ostream& err) {
  auto remote = resolve_remote(flags);
  if (!remote) {
    err << "flytecd status: " << remote.error().message << "\n";
    return 1;
  }
  auto st = daemon_request(*remote, "GET", "/api/v1/status");
  if (!st) {
    err << "flytecd status: " << st.error().message << "\n";
    return 1;
  }
  if (format == "json")
    out << dump_json(*st, 2) << "\n";
  else
    out << status_summary(*st);
  return status_exit_code(*st);
}

namespace {

// `suspend --project P` / `resume --project P`: that project only.
int remote_project_suspend(const RemoteOptions& remote, bool suspend, const std::string& project,
                           const std::string& reason, std::ostream& out, std::ostream& err) {
  const char* cmd = suspend ? "flytecd suspend" : "flytecd resume";
  nlohmann::json body{{"project", project}};
  if (suspend) {
    body["reason"] = reason;
    body["by"] = who();
  }
  auto r = daemon_request(remote, "POST", suspend ? "/api/v1/suspend" : "/api/v1/resume", body);
  if (!r) {
    err << cmd << " --project " << project << ": " << r.error().message << "\n";
    return 1;
  }
  // A daemon that does not know project suspension reads the body's reason alone and suspends
  // (or resumes) everything: say so rather than report what did not happen.
  if (str(*r, "project") != project) {
    err << cmd << " --project " << project << ": the daemon at " << remote.server
        << " does not support suspending one project (an older flytecd) and "
        << (suspend ? "suspended every project; run `flytecd resume` to undo it"
                    : "resumed every project")
        << "\n";
    return 1;
  }
  if (suspend) {
    const auto s = r->value("suspended", nlohmann::json());
    out << "project " << project << " suspended since "
        << (s.is_object() ? str(s, "since") : std::string("?"))
        << ": it is planned and its drift reported, nothing of it is written until `flytecd "
           "resume --project "
        << project << "`; other projects still apply\n";
  } else {
    out << "project " << project
        << " resumed: a reconcile starts now (flytecd status shows the result)\n";
  }
  return 0;
}

}  // namespace

int run_remote_suspend(const RemoteFlags& flags, bool suspend, const std::string& reason,
                       std::ostream& out, std::ostream& err, const std::string& project) {
  const char* cmd = suspend ? "flytecd suspend" : "flytecd resume";
  auto remote = resolve_remote(flags);
  if (!remote) {
    err << cmd << ": " << remote.error().message << "\n";
    return 1;
  }
  if (!project.empty()) return remote_project_suspend(*remote, suspend, project, reason, out, err);
  nlohmann::json body = nullptr;
  if (suspend) body = {{"reason", reason}, {"by", who()}};
  auto r = daemon_request(*remote, "POST", suspend ? "/api/v1/suspend" : "/api/v1/resume", body);
  if (!r) {
    err << cmd << ": " << r.error().message << "\n";
    return 1;
  }
  if (suspend) {
    const auto s = r->value("suspended", nlohmann::json());
    out << "suspended since " << (s.is_object() ? str(s, "since") : std::string("?"))
        << ": sources are still polled and drift reported; nothing is written until `flytecd "
           "resume`\n";
  } else {
    out << "resumed: a reconcile starts now (flytecd status shows the result)\n";
  }
  return 0;
}

}  // namespace flytecd::cli
