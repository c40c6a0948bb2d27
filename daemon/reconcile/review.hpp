#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon/model/documents.hpp"
#include "daemon/reconcile/diff.hpp"

namespace flytecd::reconcile {

// The pull-request view: what merging `head` into `base` changes, computed from the two
// revisions' documents alone (no cluster). Pure.
// One scope a change reaches: a project-domain, a workflow scope of the repository, or (with
// other_workflows) every workflow of that project-domain without a row of its own.
struct Reach {
  std::string project;
  std::string domain;
  std::string workflow;
  bool other_workflows = false;
};
// "p/development", "p/development/wf.a", "every other workflow of p in development".
std::string to_string(const Reach& r);

struct ReviewChange {
  std::string kind;    // "override", "project", "registration"
  char action = '~';   // '+', '~', '-'
  std::string object;  // "flytesnacks/development TASK_RESOURCE", "project ml", "registration core"
  // The object's id as plan --live and apply name it ("override/p/d//TASK_RESOURCE",
  // "project/p", "registration/p/d/name").
  std::string key;
  nlohmann::json old_effective;  // effective value at that scope before (null when none)
  nlohmann::json new_effective;  // … and after
  std::string old_source,
      new_source;  // where the effective value comes from ("project", "platform-global", …)
  size_t inheriting_workflows =
      0;  // workflow-level scopes in the repository that inherit the new value
  std::vector<std::string> inheriting_examples;  // up to 5 of them
  std::string detail;                            // registrations: version change etc.
  // A project removed from Git: the overrides removed with it ("p/d TASK_RESOURCE"), listed
  // here instead of one effective-value table each (an archived project runs nothing, so no
  // value of it reaches anything).
  std::vector<std::string> retired_overrides;
  // Overrides: the effective value field by field (paths inside the attribute, e.g.
  // "maxParallelism"); `source` says where the after value comes from.
  std::vector<FieldChange> fields;
  // The blast radius: every scope whose effective value changes, named ("p/development",
  // "p/development/wf.a"), then "every other workflow of p in development" for each domain
  // reached (workflows without a row of their own inherit it).
  std::vector<std::string> reaches;  // as text (to_string of each of `reach`)
  std::vector<Reach> reach;
  std::string project;  // the Flyte project the change belongs to (for the rollup)
  // Overrides: their own scope when its effective value changes; registrations: project/domain.
  std::string scope;
};

// One row of the per-project rollup at the top of the PR comment.
struct ProjectRollup {
  std::string project;
  size_t overrides_created = 0, overrides_changed = 0, overrides_deleted = 0;
  bool project_added = false, project_archived = false, project_changed = false;
  size_t registrations_changed = 0;  // registrations added, changed or removed
  size_t objects_changed = 0;        // objects of document kinds (settings) added, changed, removed
  // Scopes whose effective value changes ("p/development", "p/development/wf.a"), and the
  // project-domains of changed registrations; sorted, no duplicates.
  std::vector<std::string> scopes;
};

struct Review {
  std::vector<ReviewChange> changes;
  std::vector<ProjectRollup> rollup;  // one row per project touched, by project id
  size_t overrides_added = 0, overrides_changed = 0, overrides_removed = 0;
  size_t projects_added = 0, projects_changed = 0, projects_removed = 0;
  size_t registrations_added = 0, registrations_changed = 0, registrations_removed = 0;
  size_t deactivations = 0;  // registrations removed: their launch plans are deactivated
  // Objects of document kinds (Flyte 2 settings), by kind: created, changed, removed.
  struct Counts {
    size_t added = 0, changed = 0, removed = 0;
  };
  std::map<std::string, Counts> objects;
  bool empty() const { return changes.empty(); }
};

// `domains`: FlyteAdmin's configured domains (a project-level value reaches each of them).
Review review(const model::Documents& base, const model::Documents& head,
              const std::vector<std::string>& domains = {"development", "staging", "production"});

// "overrides: +3 ~1 -0 · projects: +1 · registrations: +1 · deactivations: 0"
std::string review_summary(const Review& r);
// A revision of the review as the user named it ("origin/main", "HEAD") and the commit it
// resolved to ("" when not known), so a reviewer sees what was compared.
struct ReviewRevision {
  std::string name;
  std::string commit;
  ReviewRevision(const char* n) : name(n) {}         // NOLINT(google-explicit-constructor)
  ReviewRevision(std::string n, std::string c = {})  // NOLINT(google-explicit-constructor)
      : name(std::move(n)), commit(std::move(c)) {}
};
// "base origin/main = 1a2b3c4d5e6f" / "head HEAD = 5d6e7f8a9b0c" lines first.
std::string render_review_text(const Review& r, const ReviewRevision& base,
                               const ReviewRevision& head);
// PR comment: summary line, a per-project rollup table (overrides +~-, the project record,
// registrations, scopes reached), then per changed scope a field table (field, before, after, where
// the after value comes from) and the scopes it reaches; only long items are collapsed in
// <details>. Text from documents is escaped for GFM (pipes, backticks, '<', newlines). At most
// `max_chars` with a truncation note.
std::string render_review_markdown(const Review& r, const ReviewRevision& base,
                                   const ReviewRevision& head, size_t max_chars = 65000);
// "base" and "head" are {"name", "commit"}.
nlohmann::ordered_json render_review_json(const Review& r, const ReviewRevision& base,
                                          const ReviewRevision& head);

}  // namespace flytecd::reconcile
