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
  auto opts = wiring::git_options(c);
  opts.ref = r.head;
  std::error_code ec;
  std::filesystem::create_directories(opts.cache_dir, ec);
  auto git = sources::git::GitSource::open(opts);
  if (!git) {
    err << "flytecd plan: " << git.error().message << "\n";
    return 1;
  }
  model::Limits limits;
  std::string head_commit;
  auto load = [&](const std::string& rev, const char* which) -> Result<model::LoadResult> {
    auto snap = (*git)->snapshot(rev);
    if (!snap) return snap.error().wrap(std::string(which) + " revision '" + rev + "'");
    if (rev == r.head) head_commit = snap->revision;
    auto loaded = model::load_documents(snap->files, limits, c.documents);
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
  // The head's packages kept in the repository must compile as FlyteAdmin compiles them.
  for (auto& d : compile_repository_packages(
           [&](const std::string& path) {
             return (*git)->read_file(head_commit, path, sources::k_max_repo_package_bytes);
           },
           head->documents.registrations))
    head->diagnostics.push_back(std::move(d));
  if (!head->ok()) {
    // The change itself is invalid: that is the review's answer.
    out << (r.format == "markdown" ? "### flytecd plan\n\n:x: **The head revision is invalid**; "
                                     "nothing would be applied.\n\n```\n"
                                   : "head revision is invalid; nothing would be applied:\n");
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
  auto review = reconcile::review(pass::narrowed(scope, base->documents),
                                  pass::narrowed(scope, head->documents));
  if (r.format == "json")
    out << dump_json(reconcile::render_review_json(review, r.base, r.head), 2) << "\n";
  else if (r.format == "markdown")
    out << reconcile::render_review_markdown(review, r.base, r.head);
  else
    out << reconcile::render_review_text(review, r.base, r.head);
  return review.empty() ? 0 : 2;
}

int run_daemon(const TargetOptions& opt) {
  run::Daemon daemon([opt] { return resolve_config(opt); });
  return daemon.run();
}

}  // namespace flytecd::cli
