#include "daemon/run/page.hpp"

#include <set>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/text.hpp"
#include "daemon/pass/views.hpp"

namespace flytecd::run {

// Generated at build time from daemon/run/ui/ui.css and ui.js (daemon/run/ui/embed.cmake).
namespace ui {
extern const std::string_view k_css;
extern const std::string_view k_js;
}  // namespace ui

namespace {

// Past this many rows a table says how many it left out (filters narrow it): the page stays
// small for a deployment with thousands of overrides.
constexpr size_t k_max_rows = 500;

using Json = nlohmann::json;

const Json& member(const Json& j, const char* key) {
  static const Json k_null;
  if (!j.is_object()) return k_null;
  auto it = j.find(key);
  return it == j.end() ? k_null : *it;
}

// A member as text: strings as they are, numbers and booleans as JSON, null or absent as "".
std::string text(const Json& j, const char* key) {
  const Json& v = member(j, key);
  if (v.is_null()) return {};
  return v.is_string() ? v.get<std::string>() : dump_json(v);
}

// One side of a field change: the value's JSON ("64" in quotes for a string), "(unset)" for
// null; a value cut by the bound is its text already.
std::string side(const Json& change, const char* key) {
  const Json& v = member(change, key);
  if (v.is_null()) return "(unset)";
  if (v.is_string() && member(change, "elided") == true) return v.get<std::string>();
  return dump_json(v);
}

std::string e(std::string_view s) { return html_escape(s); }

std::string tag(const char* name, std::string_view cls, std::string_view body_html) {
  std::string out = "<" + std::string(name);
  if (!cls.empty()) out += " class=\"" + e(cls) + "\"";
  return out + ">" + std::string(body_html) + "</" + name + ">";
}

std::string badge(std::string_view word) {
  return "<span class=\"badge b-" + e(word) + "\">" + e(word) + "</span>";
}

std::string fact(std::string_view label, std::string_view value_html) {
  return "<dt>" + e(label) + "</dt><dd>" + std::string(value_html) + "</dd>";
}

// A commit id short (12), a directory revision ("dir:…") whole; the full id in the title.
std::string short_revision(const std::string& rev) {
  const bool commit =
      rev.size() == 40 && rev.find_first_not_of("0123456789abcdef") == std::string::npos;
  return "<code title=\"" + e(rev) + "\">" + e(commit ? rev.substr(0, 12) : rev) + "</code>";
}

// The field diff of a change list: field, live, Git, and where Git declares the value.
std::string changes_table(const Json& changes, const char* live_label) {
  if (!changes.is_array() || changes.empty()) return {};
  std::string out = "<table class=\"diff\"><thead><tr><th>field</th><th>" + e(live_label) +
                    "</th><th>Git</th><th>Git value at</th></tr></thead><tbody>";
  for (const auto& c : changes)
    out += "<tr><td><code>" + e(text(c, "path")) + "</code></td><td class=\"live\">" +
           e(side(c, "live")) + "</td><td class=\"git\">" + e(side(c, "git")) + "</td><td>" +
           e(text(c, "source")) + "</td></tr>";
  return out + "</tbody></table>";
}

std::string leader_text(const Json& leader) {
  if (member(leader, "enabled") != true) return "no leader election: this replica reconciles";
  std::string out = member(leader, "isLeader") == true
                        ? "this replica (" + text(leader, "identity") + ") leads"
                        : "follower; the leader is " + text(leader, "leader");
  if (auto lease = text(leader, "lease"); !lease.empty()) out += ", lease " + lease;
  if (auto err = text(leader, "error"); !err.empty()) out += "; error: " + err;
  return out;
}

std::string last_pass_html(const Json& last) {
  if (!last.is_object()) return e("no pass has finished yet");
  const std::string outcome = text(last, "outcome");
  std::string out = badge(outcome.empty() ? "unknown" : outcome);
  if (text(last, "mode") == "plan") out += " " + e("planned only (suspended)");
  out += " " + e(text(last, "time") + " · trigger " + text(last, "reason") + " · revision ") +
         short_revision(text(last, "revision"));
  if (auto summary = text(last, "summary"); !summary.empty())
    out += "<br>" + tag("span", "muted", e(summary));
  if (auto err = text(last, "error"); !err.empty()) out += tag("p", "error", e(err));
  return out;
}

std::string overview_facts(const Json& st, const Json& leader) {
  std::string rev;
  if (auto id = text(st, "revision"); !id.empty()) {
    rev = "<code class=\"rev\">" + e(id) + "</code> " +
          tag("span", "subject", e(text(st, "subject")));
    rev += "<br>" + tag("span", "muted",
                        e("by " + text(st, "author") + " · committed " + text(st, "committedAt")));
  } else {
    rev = e("no revision loaded yet");
  }
  const std::string source_error = text(st, "sourceError");
  std::string source =
      e(text(st, "source")) + " " + badge(source_error.empty() ? "healthy" : "failing");
  if (!source_error.empty()) source += tag("p", "error", e(source_error));
  std::string target = e(text(st, "target"));
  if (member(st, "targetIsEmulator") == true) target += " " + badge("emulator");
  const Json& susp = member(st, "suspended");
  std::string suspended = badge("no");
  if (susp.is_object())
    suspended = badge("suspended") + " " +
                e("since " + text(susp, "since") + " by " + text(susp, "by") +
                  (text(susp, "reason").empty() ? "" : ": " + text(susp, "reason")));
  std::string out = "<dl class=\"facts\">" + fact("Revision", rev) + fact("Source", source) +
                    fact("Target", target) + fact("Leader", e(leader_text(leader))) +
                    fact("Suspended", suspended) +
                    fact("Last pass", last_pass_html(member(st, "lastSync")));
  if (auto err = text(st, "lastError"); !err.empty())
    out += fact("Last error", tag("span", "error", e(err)));
  if (auto err = text(st, "lastReloadError"); !err.empty())
    out += fact("Configuration", tag("span", "error", e("reload failed: " + err)));
  const Json& own = member(st, "ownership");
  if (own.is_object() && text(own, "state") != "ledger")
    out += fact("Ownership", e(text(own, "state") + ": " + text(own, "message")));
  return out + "</dl>";
}

std::string counts_html(const Json& st) {
  const Json& c = member(st, "counts");
  std::string out = "<ul class=\"counts\">";
  for (auto [key, label] : {std::pair{"managed", "managed"}, std::pair{"inSync", "in sync"},
                            std::pair{"drifted", "drifted"}, std::pair{"unmanaged", "unmanaged"},
                            std::pair{"failedRegistrations", "failed registrations"}}) {
    const std::string n = text(c, key);
    out += "<li class=\"c-" + std::string(key) + "\"><b>" + e(n.empty() ? "0" : n) + "</b> " +
           e(label) + "</li>";
  }
  return out + "</ul>";
}

std::string rejected_html(const Json& st) {
  const Json& r = member(st, "rejectedRevision");
  if (!r.is_object()) return {};
  std::string out =
      "<div class=\"alert\"><p>" + e("Revision ") + short_revision(text(r, "revision")) +
      e(" was rejected whole at " + text(r, "time") + "; the revision in force stays. Errors:") +
      "</p><ul class=\"errors\">";
  for (const auto& err : member(r, "errors"))
    out += "<li><code>" + e(err.is_string() ? err.get<std::string>() : dump_json(err)) +
           "</code></li>";
  return out + "</ul></div>";
}

// The objects of the last pass (status "objects") with the drift of each, and drifted objects
// the pass did not list (a pass that only planned lists none).
struct Row {
  std::string key, state, detail;
  const Json* drift = nullptr;
};

std::vector<Row> object_rows(const Json& st) {
  std::map<std::string, const Json*> drift;
  for (const auto& d : member(st, "drift"))
    if (text(d, "key").rfind("registration", 0) != 0) drift.emplace(text(d, "key"), &d);
  std::vector<Row> rows;
  std::set<std::string> listed;
  for (const auto& o : member(st, "objects")) {
    Row r{text(o, "key"), text(o, "state"), text(o, "error"), nullptr};
    if (auto it = drift.find(r.key); it != drift.end()) {
      r.drift = it->second;
      if (r.detail.empty()) r.detail = text(*it->second, "detail");
    }
    listed.insert(r.key);
    rows.push_back(std::move(r));
  }
  for (const auto& [key, d] : drift)
    if (!listed.count(key)) rows.push_back(Row{key, "drifted", text(*d, "detail"), d});
  return rows;
}

std::string select_html(const char* name, const char* label, const std::set<std::string>& values,
                        const std::string& chosen) {
  std::string out =
      "<label>" + e(label) + " <select name=\"" + name + "\"><option value=\"\">all</option>";
  std::set<std::string> all = values;
  if (!chosen.empty()) all.insert(chosen);  // a shared URL's filter shows even with no match
  for (const auto& v : all)
    out += "<option value=\"" + e(v) + "\"" + (v == chosen ? " selected" : "") + ">" + e(v) +
           "</option>";
  return out + "</select></label>";
}

std::string objects_html(const Json& st, const PageQuery& q) {
  const auto rows = object_rows(st);
  std::set<std::string> projects, domains, kinds, states;
  for (const auto& r : rows) {
    const auto n = object_name(r.key);
    if (!n.project.empty()) projects.insert(n.project);
    if (!n.domain.empty()) domains.insert(n.domain);
    kinds.insert(n.kind);
    states.insert(r.state);
  }
  std::string out = "<form id=\"filters\" method=\"get\" action=\"/\">" +
                    select_html("project", "Project", projects, q.project) +
                    select_html("domain", "Domain", domains, q.domain) +
                    select_html("kind", "Kind", kinds, q.kind) +
                    select_html("state", "State", states, q.state) +
                    "<button type=\"submit\">Filter</button> <a href=\"/\">clear</a></form>";
  out +=
      "<table class=\"objects\"><thead><tr><th>State</th><th>Kind</th><th>Project</th>"
      "<th>Domain</th><th>Workflow</th><th>Detail</th></tr></thead><tbody id=\"objects-body\">";
  size_t shown = 0, matched = 0;
  for (const auto& r : rows) {
    const auto n = object_name(r.key);
    if (!matches(n, r.state, q)) continue;
    if (++matched > k_max_rows) continue;
    ++shown;
    std::string detail = e(r.detail);
    if (r.drift && member(*r.drift, "changes").is_array() && !member(*r.drift, "changes").empty())
      // Asked for drifted objects, their diffs are what the reader came for: open.
      detail = "<details data-key=\"" + e("o " + r.key) + "\"" +
               (q.state == "drifted" ? " open" : "") + "><summary>" + e(r.detail) + "</summary>" +
               changes_table(member(*r.drift, "changes"), "live") + "</details>";
    out += "<tr class=\"s-" + e(r.state) + "\" title=\"" + e(r.key) + "\"><td>" + badge(r.state) +
           "</td><td>" + e(n.kind) + "</td><td>" + e(n.project) + "</td><td>" + e(n.domain) +
           "</td><td>" + e(n.workflow) + "</td><td>" + detail + "</td></tr>";
  }
  out += "</tbody></table><p id=\"objects-count\" class=\"muted\">" +
         e(std::to_string(shown) + " of " + std::to_string(rows.size()) + " objects shown" +
           (matched > shown
                ? " (" + std::to_string(matched - shown) + " more match: narrow the filters)"
                : "")) +
         "</p>";
  return out;
}

std::string history_html(const PageData& data) {
  if (!data.history_error.empty()) return tag("p", "error", e(data.history_error));
  if (!data.history.is_array() || data.history.empty())
    return tag("p", "muted", e("no history yet"));
  std::string out;
  for (const auto& h : data.history) {
    const Json& steps = member(h, "steps");
    const size_t n = steps.is_array() ? steps.size() : 0;
    out += "<details class=\"pass\" data-key=\"" + e("h " + text(h, "id")) + "\"><summary>" +
           badge(text(h, "outcome")) + " " + e(text(h, "time")) + " " +
           short_revision(text(h, "revision")) + " " +
           tag("span", "subject", e(text(h, "subject"))) + " " +
           tag("span", "muted",
               e("by " + text(h, "author") + " (" + text(h, "trigger") + ") · " +
                 std::to_string(n) + (n == 1 ? " step" : " steps"))) +
           "</summary>";
    if (auto d = text(h, "detail"); !d.empty()) out += tag("p", "", e(d));
    out += "<ul class=\"steps\">";
    for (const auto& s : steps)
      out += "<li>" + badge(text(s, "outcome")) + " " + e(text(s, "action")) + " <code>" +
             e(text(s, "key")) + "</code> " + e(text(s, "message")) +
             changes_table(member(s, "changes"), "before") + "</li>";
    out += "</ul>";
    if (auto noops = text(h, "noopPassesAfter"); !noops.empty() && noops != "0")
      out += tag("p", "muted", e("then " + noops + " pass(es) with nothing to do"));
    out += "</details>";
  }
  return out;
}

std::string registrations_html(const Json& st) {
  const Json& regs = member(st, "registrations");
  if (!regs.is_array() || regs.empty()) return tag("p", "muted", e("no registrations"));
  std::string out =
      "<table class=\"registrations\"><thead><tr><th>Registration</th><th>Version</th>"
      "<th>Package</th><th>Digest</th><th>Activation</th><th>State</th><th>Last error</th>"
      "</tr></thead><tbody>";
  for (const auto& r : regs) {
    std::string error = e(text(r, "message"));
    for (const auto& d : member(r, "drift"))
      error +=
          tag("div", "error",
              e("changed outside Git: " + (d.is_string() ? d.get<std::string>() : dump_json(d))));
    out += "<tr title=\"" + e(text(r, "key")) + "\"><td>" +
           e(text(r, "project") + "/" + text(r, "domain") + "/" + text(r, "name")) + "<br>" +
           tag("span", "muted", e(text(r, "source"))) + "</td><td>" + e(text(r, "version")) +
           "</td><td><code>" + e(text(r, "package")) + "</code></td><td><code class=\"digest\">" +
           e(text(r, "digest")) + "</code></td><td>" + e(text(r, "activate")) + "</td><td>" +
           badge(text(r, "state")) + "</td><td>" + error + "</td></tr>";
  }
  return out + "</tbody></table>";
}

}  // namespace

PageQuery page_query(const std::map<std::string, std::string>& params) {
  PageQuery q;
  for (auto [name, out] : {std::pair{"project", &q.project}, std::pair{"domain", &q.domain},
                           std::pair{"kind", &q.kind}, std::pair{"state", &q.state}})
    if (auto it = params.find(name); it != params.end()) *out = text::cut_utf8(it->second, 200);
  return q;
}

ObjectName object_name(std::string_view key) {
  std::vector<std::string> parts;
  while (true) {
    const auto slash = key.find('/');
    parts.emplace_back(key.substr(0, slash));
    if (slash == std::string_view::npos) break;
    key.remove_prefix(slash + 1);
  }
  if (parts.size() == 2 && parts[0] == "project") return {"project", parts[1], "", ""};
  if (parts.size() == 5 && parts[0] == "override") return {parts[4], parts[1], parts[2], parts[3]};
  return {parts[0], "", "", ""};
}

bool matches(const ObjectName& n, std::string_view state, const PageQuery& q) {
  return (q.project.empty() || q.project == n.project) &&
         (q.domain.empty() || q.domain == n.domain) && (q.kind.empty() || q.kind == n.kind) &&
         (q.state.empty() || q.state == state);
}

std::string html_escape(std::string_view s) {
  const std::string in = text::to_utf8_lossy(s);
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_page(const DaemonState& state, const PageData& data, const PageQuery& query) {
  const Json st = status_json(state, data.leader);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>flytecd</title><link rel=\"stylesheet\" href=\"/ui.css\">"
      "<script src=\"/ui.js\" defer></script></head><body>"
      "<header><h1>flytecd</h1><nav><a href=\"#overview\">Overview</a> "
      "<a href=\"#objects\">Objects</a> <a href=\"#history\">History</a> "
      "<a href=\"#registrations\">Registrations</a></nav><span id=\"refresh\" class=\"muted\">" +
      e(std::string("flytecd ") + FLYTECD_VERSION + " · read-only · rendered by the daemon") +
      "</span></header><main>";
  out += "<section id=\"overview\"><h2>Overview</h2><div id=\"overview-body\">" +
         overview_facts(st, data.leader) + counts_html(st) + rejected_html(st) + "</div></section>";
  out += "<section id=\"objects\"><h2>Objects</h2><div id=\"objects-view\">" +
         objects_html(st, query) + "</div></section>";
  out += "<section id=\"history\"><h2>History</h2><div id=\"history-body\">" + history_html(data) +
         "</div></section>";
  out += "<section id=\"registrations\"><h2>Registrations</h2><div id=\"registrations-body\">" +
         registrations_html(st) + "</div></section>";
  return out + "</main></body></html>\n";
}

std::vector<std::pair<std::string, std::string>> page_headers() {
  return {{"Content-Security-Policy",
           "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "DENY"},
          {"Referrer-Policy", "no-referrer"},
          {"Cache-Control", "no-store"}};
}

http::Response page_response(std::string_view path,
                             const std::map<std::string, std::string>& params,
                             const DaemonState& state, const PageData& data) {
  http::Response r;
  r.headers = page_headers();
  if (path == "/") {
    r.content_type = "text/html; charset=utf-8";
    r.body = render_page(state, data, page_query(params));
  } else if (path == "/ui.css") {
    r.content_type = "text/css; charset=utf-8";
    r.body = ui::k_css;
  } else if (path == "/ui.js") {
    r.content_type = "text/javascript; charset=utf-8";
    r.body = ui::k_js;
  } else {
    r.status = 404;
    r.body = "not found\n";
  }
  return r;
}

PageData page_data(nlohmann::json leader,
                   const Result<std::vector<ledger::HistoryEntry>>& history) {
  PageData data;
  data.leader = std::move(leader);
  if (history)
    data.history = nlohmann::json::parse(dump_json(pass::history_json(*history)));
  else
    data.history_error = "history: " + history.error().message;
  return data;
}

}  // namespace flytecd::run
