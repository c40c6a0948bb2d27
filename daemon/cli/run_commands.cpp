#include <filesystem>

#include "daemon/cli/commands.hpp"
#include "daemon/cli/compile_command.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/model/loader.hpp"
#include "daemon/pass/scope.hpp"
#include "daemon/reconcile/review.hpp"
#include "daemon/run/daemon.hpp"
#include "daemon/wiring/wiring.hpp"

namespace flytecd::cli {

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
  // first); the configured ref only decides what a URL's HEAD is once followed. The head is
  // loaded after the base by the same reconciler: files whose blob is unchanged are not parsed
  // again.
  auto rec = wiring::Reconciler::open(c);
  if (!rec) {
    err << "flytecd plan: " << rec.error().message << "\n";
    return 1;
  }
  auto load = [&](const std::string& rev, const char* which) -> Result<wiring::LoadedRevision> {
    auto loaded = (*rec)->load(rev);
    if (!loaded) return loaded.error().wrap(std::string(which) + " revision '" + rev + "'");
    return loaded;
  };
  auto base = load(r.base, "base");
  if (!base) {
    err << "flytecd plan: " << base.error().message << "\n";
    return 1;
  }
  auto head = load(r.head, "head");
  if (!head) {
    err << "flytecd plan: " << head.error().message << "\n";
    return 1;
  }
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

int run_daemon(const TargetOptions& opt) {
  run::Daemon daemon([opt] { return resolve_config(opt); });
  return daemon.run();
}

}  // namespace flytecd::cli
