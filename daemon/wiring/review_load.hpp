#pragma once

#include <filesystem>
#include <set>
#include <string>

#include "daemon/common/result.hpp"
#include "daemon/wiring/reconciler.hpp"

namespace flytecd::wiring {

// The two revisions of a change under review (`plan --git`), loaded as far as the review needs
// them. With the facts of earlier runs (`index_file`, kept in the state directory; by path and
// content id) only the files that differ are parsed first; then, in both revisions, the files of
// the projects they touch and every file holding platform defaults, generic objects or a
// registration reading a repository package. Both revisions then hold every document of the
// touched projects and nothing of the others (pass::narrowed), so their review is the one
// of the whole revisions. Otherwise (no facts yet, or model::select_review_files says why) both
// are loaded whole. Either way the facts of every file loaded are written back.
struct ReviewLoad {
  LoadedRevision base, head;
  bool partial = false;
  std::string whole_because;       // when not partial
  std::set<std::string> projects;  // when partial: the projects the change touches
  size_t files_parsed = 0;         // across every load of both revisions
};
Result<ReviewLoad> load_change(Reconciler& rec, const std::string& base, const std::string& head,
                               const std::filesystem::path& index_file);

// The identity of this build and loader policy the facts are kept under (another one discards
// them): the version, the executable's size and modification time, the policy's fields.
std::string review_parser_identity(const model::Policy& policy);

}  // namespace flytecd::wiring
