// `flytecd plan`: what applying would change: a change under review (--git --base --head), the
// repository against live state (--live), or both.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "daemon/cli/command.hpp"
#include "daemon/cli/package_compile.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/model/loader.hpp"
#include "daemon/pass/scope.hpp"
#include "daemon/pass/views.hpp"
#include "daemon/reconcile/review.hpp"
#include "daemon/wiring/review_load.hpp"
#include "daemon/wiring/target.hpp"
#include "daemon/wiring/wiring.hpp"

namespace flytecd::cli {

int run_plan_live(const TargetOptions& opt, const std::string& format, std::ostream& out,
                  std::ostream& err, const ReviewOptions* head) {
  auto cfg = resolve_config(opt);
  std::string at;  // the configured source at its head, or --head of --git
  if (cfg && head) {
    cfg->git.url = head->git;
    if (!head->path.empty()) cfg->git.path = head->path;
    cfg->git.allowed_signers_file.clear();
    at = head->head;
  }
  if (!cfg) {
    err << "flytecd plan: " << cfg.error().message << "\n";
    return 1;
  }
  auto prepared = prepare(*cfg, at, wiring::Access::read, err);
  if (!prepared) {
    err << "flytecd plan: " << prepared.error().message << "\n";
    return 1;
  }
  wiring::Reconciler& rec = *prepared->rec;
  wiring::Target* target = &rec.target();
  if (auto s = check_scope_project(opt, prepared->rev.docs, *target->ledger); !s) {
    err << "flytecd plan: " << s.error().message << "\n";
    return 1;
  }
  auto options = command_options(*cfg, pass::Mode::plan);
  options.scope = pass::PassScope{opt.project, opt.domain};
  const auto report = rec.pass(prepared->rev, options);
  if (!report.observed) {
    err << "flytecd plan: " << (report.error ? report.error->message : "not observed") << "\n";
    return 1;
  }
  if (format == "json") {
    auto j = pass::plan_json(report);
    j["ownership"] = pass::ownership_json(report.ownership,
                                          "file " + pass::record_file(target->state_dir).string());
    out << dump_json(j, 2) << "\n";
  } else {
    if (worth_saying(report.ownership, report.plan))
      err << "flytecd plan: ownership: " << report.ownership.message << "\n";
    out << pass::plan_text(report, format == "markdown");
  }
  return pass::plan_exit_code(report);
}

int run_plan_review(const TargetOptions& opt, const ReviewOptions& r, std::ostream& out,
                    std::ostream& err) {
  auto cfg = resolve_config(opt);
  if (!cfg) {
    err << "flytecd plan: " << cfg.error().message << "\n";
    return 1;
  }
  config::Config c = *cfg;
  c.git.url = r.git;
  if (!r.path.empty()) c.git.path = r.path;
  c.git.allowed_signers_file.clear();  // a review reads revisions; it applies nothing
  // --head A...B would name a merge base, not the change under review.
  if (r.head.find("..") != std::string::npos) {
    err << "flytecd plan: --head '" << r.head
        << "' is a range; give the one revision under review (A...B is for --base: the merge "
           "base of A and B)\n";
    return 1;
  }
  // Names resolve as `git rev-parse` resolves them in that repository (a URL is fetched
  // first); the configured ref only decides what a URL's HEAD is once followed. Only what the
  // review needs is parsed (wiring::load_change: the files that differ, and those of the projects
  // they touch, with the facts of earlier reviews kept in the state directory).
  auto rec = wiring::Reconciler::open(c);
  if (!rec) {
    err << "flytecd plan: " << rec.error().message << "\n";
    return 1;
  }
  auto change = wiring::load_change(**rec, r.base, r.head,
                                    std::filesystem::path(c.state_dir) / "review-index.json");
  if (!change) {
    err << "flytecd plan: " << change.error().message << "\n";
    return 1;
  }
  auto* base = &change->base;
  auto* head = &change->head;
  const std::string& base_commit = base->revision;
  const std::string& head_commit = head->revision;
  // The head's packages kept in the repository must compile as FlyteAdmin compiles them.
  for (auto& d : compile_repository_packages(
           [&](const std::string& path) {
             return (*rec)->source().read_file(head_commit, path,
                                               sources::k_max_repo_package_bytes);
           },
           head->docs.registrations))
    head->diagnostics.push_back(std::move(d));
  const reconcile::ReviewRevision base_rev{r.base, base_commit}, head_rev{r.head, head_commit};
  if (!head->ok()) {
    // The change itself is invalid: that is the review's answer.
    const std::string at = "head " + r.head + " = " + head_commit.substr(0, 12);
    out << (r.format == "markdown"
                ? "### flytecd plan\n\n:x: **The head revision is invalid** (" + at +
                      "); nothing would be applied.\n\n```\n"
                : "head revision is invalid (" + at + "); nothing would be applied:\n");
    for (const auto& d : head->diagnostics)
      if (d.severity == model::Severity::error) out << model::format(d) << "\n";
    if (r.format == "markdown") out << "```\n";
    return 1;
  }
  if (!base->ok())
    err << "flytecd plan: warning: the base revision is itself invalid; comparing anyway\n";
  // --project/--domain: the review of those scopes only (blast radius included).
  const pass::PassScope scope{opt.project, opt.domain};
  if (!scope.empty())
    err << "flytecd plan: limited to " << scope.describe()
        << " (changes elsewhere in the revision are not shown)\n";
  auto review =
      reconcile::review(pass::narrowed(scope, base->docs), pass::narrowed(scope, head->docs));
  if (r.format == "json")
    out << dump_json(reconcile::render_review_json(review, base_rev, head_rev), 2) << "\n";
  else if (r.format == "markdown")
    out << reconcile::render_review_markdown(review, base_rev, head_rev);
  else
    out << reconcile::render_review_text(review, base_rev, head_rev);
  return review.empty() ? 0 : 2;
}

namespace {

struct PlanState {
  TargetOptions target;
  ReviewOptions review;
  bool live = false;
  std::string format = "text";
};

int run_plan(PlanState& st) {
  auto& r = st.review;
  if (!r.git.empty() || !r.base.empty() || !r.head.empty()) {
    if (r.git.empty() || r.base.empty() || r.head.empty()) {
      std::cerr << "flytecd plan: --git, --base and --head go together\n";
      return 1;
    }
    r.format = st.format;
    int rc = run_plan_review(st.target, r, std::cout, std::cerr);
    if (!st.live || rc == 1) return rc;
    int live_rc = run_plan_live(st.target, st.format, std::cout, std::cerr, &r);
    return live_rc == 1 ? 1 : std::max(rc, live_rc);
  }
  if (!st.live) {
    std::cerr << "flytecd plan: say what to compare: --git DIR --base REV --head REV (a change), "
                 "and/or --live (the repository against live state)\n";
    return 1;
  }
  return run_plan_live(st.target, st.format, std::cout, std::cerr);
}

}  // namespace

Runner add_plan_command(CLI::App& app, CommandContext&) {
  auto st = std::make_shared<PlanState>();
  auto* cmd = app.add_subcommand("plan", "What applying the repository would change");
  add_target_options(cmd, st->target);
  add_scope_options(cmd, st->target.project, st->target.domain);
  cmd->add_flag("--live", st->live, "Compare the repository with live state (and the ledger)");
  auto& r = st->review;
  cmd->add_option("--git", r.git, "Git repository (URL or local path) holding --base and --head");
  cmd->add_option("--base", r.base, "Base revision (branch, tag, commit)");
  cmd->add_option("--head", r.head, "Head revision (the change under review)");
  cmd->add_option("--path", r.path, "Sub-path of the documents inside the repository");
  cmd->add_option("-o,--output", st->format, "text, markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  cmd->footer(
      "Exit codes: 0 no changes, 2 changes, 1 error.\n"
      "Examples:\n"
      "  flytecd plan --git . --base origin/main --head HEAD -o markdown   # a pull request, no "
      "cluster needed\n"
      "  flytecd plan --live --repo repo-layout-example/\n"
      "  flytecd plan --live -o markdown --admin-endpoint dns:///flyte.example.com:443\n");
  return when_parsed(cmd, [st]() -> int { return run_plan(*st); });
}

}  // namespace flytecd::cli
