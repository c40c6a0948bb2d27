// The web page (issue 26) is a pure function of the daemon's state value: it shows the revision,
// counts and rejection errors, filters from the query string, escapes every value that comes from
// Git or FlyteAdmin, and carries no inline script, style or event handler.
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "daemon/run/page.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using namespace flytecd::run;

namespace {

const std::string k_injection = "<img src=x onerror=alert(1)>";
const std::string k_escaped = "&lt;img src=x onerror=alert(1)&gt;";
const std::string k_revision = "0123456789abcdef0123456789abcdef01234567";

DaemonState state() {
  DaemonState s;
  s.source = "git file:///srv/remote.git@main";
  s.target = "FlyteAdmin dns:///127.0.0.1:8089 (emulator)";
  s.target_is_emulator = true;
  s.revision = k_revision;
  s.subject = k_injection;
  s.author = "Ada <ada@example.com>";
  s.committed_at = 1700000000;
  s.rejected = Rejection{"fedcba9876543210fedcba9876543210fedcba98",
                         "2026-12-02T17:00:00Z",
                         {"projects/bad.yaml:3:7: unknown field \"spek\" (expected spec)",
                          "projects/bad.yaml:9:1: " + k_injection}};
  auto r = std::make_shared<pass::Report>();
  r->mode = pass::Mode::execute;
  r->revision = k_revision;
  r->applied.converged = true;
  r->applied.objects = {{"override/flytesnacks/development//TASK_RESOURCE",
                         pass::ObjectState::drifted, "changed outside Git"},
                        {"override/ml-training/production//CLUSTER_RESOURCE",
                         pass::ObjectState::failed, "FlyteAdmin: " + k_injection},
                        {"project/flytesnacks", pass::ObjectState::synced, ""}};
  r->plan.unmanaged = {"override/legacy/development//EXECUTION_QUEUE"};
  reconcile::DriftItem d;
  d.kind = reconcile::ObjectKind::override_attr;
  d.key = "override/flytesnacks/development//TASK_RESOURCE";
  d.detail = "changed outside Git";
  d.changes = {{"taskResourceAttributes.defaults.cpu", "\"4\"", "\"1\"", false,
                "projects/flytesnacks/development.yaml:9"}};
  r->plan.drift.push_back(d);
  registration::RegistrationOutcome reg;
  reg.key = "registration/flytesnacks/development/core";
  reg.name = "core";
  reg.project = "flytesnacks";
  reg.domain = "development";
  reg.version = "v1.4.2";
  reg.package = "oci://registry.example.com/core@sha256:abc";
  reg.digest = "sha256:abc";
  reg.state = flytecd::registration::RegistrationState::failed;
  reg.message = "registry: " + k_injection;
  r->registrations.items.push_back(reg);
  s.report = r;
  s.last_pass = LastPass{"interval", "2026-12-02T17:01:00Z", k_revision, ""};
  s.counts.managed_overrides = 2;
  s.counts.managed_projects = 1;
  s.counts.drifted_overrides = 1;
  s.counts.unmanaged_overrides = 1;
  return s;
}

PageData data() {
  PageData d;
  d.history = nlohmann::json::parse(R"([{"id": 7, "time": "2026-12-02T17:01:00Z",
    "revision": "0123456789abcdef0123456789abcdef01234567", "subject": "a subject",
    "author": "Ada", "trigger": "interval", "outcome": "success", "detail": "",
    "noopPassesAfter": 2, "steps": [{"action": "update",
    "key": "override/flytesnacks/development//WORKFLOW_EXECUTION_CONFIG", "outcome": "ok",
    "message": "", "changes": [{"path": "workflowExecutionConfig.labels.values.team",
    "live": "ml", "git": "<img src=x onerror=alert(1)>",
    "source": "projects/flytesnacks/development.yaml:12"}]}]}])");
  return d;
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("page: a script-injection value from Git or FlyteAdmin renders as escaped text",
          "[page]") {
  const auto html = render_page(state(), data(), {});
  CHECK_FALSE(contains(html, "<img"));
  CHECK(contains(html, k_escaped));  // subject, rejection, object error, registration, history
  // Every tag is ours: no event-handler attribute, no inline style, one external script.
  const std::regex tag("<[a-zA-Z][^>]*>");
  size_t scripts = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator();
       ++it) {
    const std::string t = it->str();
    INFO(t);
    CHECK_FALSE(std::regex_search(t, std::regex("\\son[a-z]+\\s*=", std::regex::icase)));
    CHECK_FALSE(contains(t, "style="));
    if (t.rfind("<script", 0) == 0) {
      ++scripts;
      CHECK(t == "<script src=\"/ui.js\" defer>");
    }
  }
  CHECK(scripts == 1);
  CHECK(html_escape("a&b\"c'd<e>") == "a&amp;b&quot;c&#39;d&lt;e&gt;");
  CHECK(html_escape("bad \xff byte") == "bad \xef\xbf\xbd byte");  // ill-formed UTF-8: U+FFFD
}

TEST_CASE("page: the overview shows the revision, counts, target and every rejection error",
          "[page]") {
  const auto html = render_page(state(), data(), {});
  CHECK(contains(html, k_revision));
  CHECK(contains(html, "Ada &lt;ada@example.com&gt;"));
  CHECK(contains(html, "2023-11-14T22:13:20Z"));  // committed_at
  CHECK(contains(html, "<li class=\"c-managed\"><b>3</b> managed</li>"));
  CHECK(contains(html, "<li class=\"c-inSync\"><b>1</b> in sync</li>"));
  CHECK(contains(html, "<li class=\"c-drifted\"><b>1</b> drifted</li>"));
  CHECK(contains(html, "<li class=\"c-unmanaged\"><b>1</b> unmanaged</li>"));
  CHECK(contains(html, "<li class=\"c-failedRegistrations\"><b>1</b> failed registrations</li>"));
  CHECK(contains(html, "projects/bad.yaml:3:7: unknown field &quot;spek&quot; (expected spec)"));
  CHECK(contains(html, "projects/bad.yaml:9:1: " + k_escaped));
  CHECK(contains(html, "fedcba987654"));  // the rejected revision
  CHECK(contains(html, "badge b-emulator"));
  CHECK(contains(html, "no leader election"));
  // The drifted object's field diff: live, Git and where Git declares it.
  CHECK(contains(html, "taskResourceAttributes.defaults.cpu"));
  CHECK(contains(html,
                 "<td class=\"live\">&quot;4&quot;</td><td class=\"git\">&quot;1&quot;</td>"
                 "<td>projects/flytesnacks/development.yaml:9</td>"));
  // History and registrations.
  CHECK(contains(html, "workflowExecutionConfig.labels.values.team"));
  CHECK(contains(html, "then 2 pass(es) with nothing to do"));
  CHECK(contains(html, "oci://registry.example.com/core@sha256:abc"));
  CHECK(contains(html, "v1.4.2"));
}

TEST_CASE("page: the objects table is filtered from the query string", "[page]") {
  const auto q = page_query({{"project", "flytesnacks"}, {"state", "drifted"}, {"other", "x"}});
  CHECK(q.project == "flytesnacks");
  CHECK(q.state == "drifted");
  CHECK(q.domain.empty());
  const auto html = render_page(state(), data(), q);
  CHECK(contains(html, "title=\"override/flytesnacks/development//TASK_RESOURCE\""));
  CHECK_FALSE(contains(html, "title=\"project/flytesnacks\""));  // synced
  CHECK_FALSE(contains(html, "title=\"override/ml-training/production//CLUSTER_RESOURCE\""));
  CHECK_FALSE(contains(html, "title=\"override/legacy/development//EXECUTION_QUEUE\""));
  CHECK(contains(html, "1 of 4 objects shown"));
  // Asked for drifted objects, their diffs are open.
  CHECK(contains(html,
                 "<details data-key=\"o override/flytesnacks/development//TASK_RESOURCE\" open>"));
  // The form shows the filters in force, so the shared URL reads the same.
  CHECK(contains(html, "<option value=\"flytesnacks\" selected>"));
  CHECK(contains(html, "<option value=\"drifted\" selected>"));
  // A filter with no match still shows as chosen.
  const auto none = render_page(state(), data(), page_query({{"kind", "QUALITY_OF_SERVICE"}}));
  CHECK(contains(none, "<option value=\"QUALITY_OF_SERVICE\" selected>"));
  CHECK(contains(none, "0 of 4 objects shown"));
  const auto all = render_page(state(), data(), {});
  CHECK(contains(all, "4 of 4 objects shown"));
}

TEST_CASE("page: object keys split into kind and scope", "[page]") {
  const auto o = object_name("override/flytesnacks/development/core.wf/PLUGIN_OVERRIDE");
  CHECK(o.kind == "PLUGIN_OVERRIDE");
  CHECK(o.project == "flytesnacks");
  CHECK(o.domain == "development");
  CHECK(o.workflow == "core.wf");
  const auto p = object_name("project/ml");
  CHECK(p.kind == "project");
  CHECK(p.project == "ml");
  CHECK(matches(o, "synced", PageQuery{"flytesnacks", "", "PLUGIN_OVERRIDE", ""}));
  CHECK_FALSE(matches(o, "synced", PageQuery{"", "", "", "drifted"}));
}

TEST_CASE("page: the page and its embedded assets carry the security headers", "[page]") {
  const auto header = [](const http::Response& r, const std::string& name) {
    for (const auto& [k, v] : r.headers)
      if (k == name) return v;
    return std::string();
  };
  for (const char* path : {"/", "/ui.css", "/ui.js"}) {
    INFO(path);
    const auto r = page_response(path, {}, state(), data());
    CHECK(r.status == 200);
    CHECK(header(r, "Content-Security-Policy").rfind("default-src 'self'", 0) == 0);
    CHECK(header(r, "X-Content-Type-Options") == "nosniff");
    CHECK(header(r, "X-Frame-Options") == "DENY");
    CHECK_FALSE(r.body.empty());
  }
  CHECK(page_response("/", {}, state(), data()).content_type == "text/html; charset=utf-8");
  CHECK(page_response("/ui.css", {}, state(), data()).content_type == "text/css; charset=utf-8");
  const auto js = page_response("/ui.js", {}, state(), data());
  CHECK(js.content_type == "text/javascript; charset=utf-8");
  CHECK_FALSE(contains(js.body, "innerHTML"));  // values go in as text only
  CHECK(page_response("/nope", {}, state(), data()).status == 404);
  // Small enough to load anywhere: page, stylesheet and script well under 100 KiB together.
  CHECK(page_response("/", {}, state(), data()).body.size() +
            page_response("/ui.css", {}, state(), data()).body.size() + js.body.size() <
        100 * 1024);
}

}  // namespace FLYTECD_UNITY_ID
