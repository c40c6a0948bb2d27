#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon/model/documents.hpp"

namespace flytecd::reconcile {

// The pull-request view: what merging `head` into `base` changes, computed from the two
// revisions' documents alone (no cluster). Pure.
struct ReviewChange {
  std::string kind;    // "override", "project", "registration"
  char action = '~';   // '+', '~', '-'
  std::string object;  // "flytesnacks/development TASK_RESOURCE", "project ml", "registration core"
  nlohmann::json old_effective;  // effective value at that scope before (null when none)
  nlohmann::json new_effective;  // … and after
  std::string old_source,
      new_source;  // where the effective value comes from ("project", "platform-global", …)
  size_t inheriting_workflows =
      0;  // workflow-level scopes in the repository that inherit the new value
  std::vector<std::string> inheriting_examples;  // up to 5 of them
  std::string detail;                            // registrations: version change etc.
};

struct Review {
  std::vector<ReviewChange> changes;
  size_t overrides_added = 0, overrides_changed = 0, overrides_removed = 0;
  size_t projects_added = 0, projects_changed = 0, projects_removed = 0;
  size_t registrations_added = 0, registrations_changed = 0, registrations_removed = 0;
  size_t deactivations = 0;  // registrations removed: their launch plans are deactivated
  bool empty() const { return changes.empty(); }
};

Review review(const model::Documents& base, const model::Documents& head);

// "overrides: +3 ~1 -0 · projects: +1 · registrations: +1 · deactivations: 0"
std::string review_summary(const Review& r);
std::string render_review_text(const Review& r, const std::string& base_rev,
                               const std::string& head_rev);
// PR comment: summary line, per-scope old/new effective values, inheriting workflow counts,
// collapsible details; at most `max_chars` with a truncation note.
std::string render_review_markdown(const Review& r, const std::string& base_rev,
                                   const std::string& head_rev, size_t max_chars = 65000);
nlohmann::ordered_json render_review_json(const Review& r, const std::string& base_rev,
                                          const std::string& head_rev);

}  // namespace flytecd::reconcile
