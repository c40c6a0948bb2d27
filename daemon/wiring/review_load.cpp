#include "daemon/wiring/review_load.hpp"

#include <system_error>

#include "daemon/common/atomic_file.hpp"
#include "daemon/common/log.hpp"
#include "daemon/pass/scope.hpp"

namespace flytecd::wiring {
namespace {

constexpr size_t k_max_index_bytes = 64u << 20;

model::FileIndex read_index(const std::filesystem::path& file, const std::string& parser) {
  auto text = read_small_file(file, k_max_index_bytes, "review index");
  if (!text || !*text) return model::FileIndex(parser);
  return model::FileIndex::from_json(**text, parser);
}

// The facts of each file a load read, into the index under the revision's content ids.
void remember(model::FileIndex& index, const LoadedRevision& rev) {
  for (auto& [path, facts] : model::facts_of(rev.loads, rev.docs, rev.diagnostics))
    if (auto id = rev.files.find(path); id != rev.files.end())
      index.put(path, id->second, std::move(facts));
}

// The facts of each file a load read, by path.
std::map<std::string, model::FileFacts> facts_of_load(const LoadedRevision& rev) {
  return model::facts_of(rev.loads, rev.docs, rev.diagnostics);
}

// The documents of the touched projects (pass::narrowed, as a targeted pass narrows), and what
// every project resolves against or is the same in both revisions: platform defaults and
// generic objects, which a project's scope leaves out.
model::Documents touched_only(const model::Documents& docs, const std::set<std::string>& projects) {
  model::Documents out = pass::narrowed(pass::PassScope{"", "", projects}, docs);
  out.platform_defaults = docs.platform_defaults;
  out.objects = docs.objects;
  return out;
}

}  // namespace

std::string review_parser_identity(const model::Policy& policy) {
  std::string id = std::string("flytecd ") + FLYTECD_VERSION;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto size = std::filesystem::file_size(exe, ec);
    const auto mtime = std::filesystem::last_write_time(exe, ec);
    if (!ec)
      id += " " + std::to_string(size) + "@" + std::to_string(mtime.time_since_epoch().count());
  }
  id += " domains:";
  for (const auto& d : policy.domains) id += d + ",";
  id += policy.require_digest_pins ? " pins" : "";
  id += policy.configmap_mode ? " configmap" : "";
  return id;
}

Result<ReviewLoad> load_change(Reconciler& rec, const std::string& base, const std::string& head,
                               const std::filesystem::path& index_file) {
  auto base_snap = rec.snapshot(base);
  if (!base_snap) return base_snap.error().wrap("base revision '" + base + "'");
  auto head_snap = rec.snapshot(head);
  if (!head_snap) return head_snap.error().wrap("head revision '" + head + "'");
  rec.keep_parsed_files();  // a file parsed for one revision is not parsed again for the other
  const auto& policy = rec.config().documents;
  model::FileIndex index = read_index(index_file, review_parser_identity(policy));

  ReviewLoad out;
  auto load = [&](const sources::Snapshot& snap, const std::set<std::string>* only) {
    auto loaded = rec.load_snapshot(snap, only);
    out.files_parsed += loaded.files_parsed;
    return loaded;
  };
  std::map<std::string, std::string> base_files, head_files;
  for (size_t i = 0; i < base_snap->files.size() && i < base_snap->blob_ids.size(); ++i)
    base_files.emplace(base_snap->files[i].path, base_snap->blob_ids[i]);
  for (size_t i = 0; i < head_snap->files.size() && i < head_snap->blob_ids.size(); ++i)
    head_files.emplace(head_snap->files[i].path, head_snap->blob_ids[i]);

  model::ReviewFiles pick;
  if (index.size() == 0) {
    pick.whole = true;
    pick.why = "no facts kept from an earlier review";
  } else {
    const auto differing = model::differing_files(base_files, head_files);
    const auto base_changed = facts_of_load(load(*base_snap, &differing));
    const auto head_changed = facts_of_load(load(*head_snap, &differing));
    const model::Limits limits;
    pick = model::select_review_files(base_files, head_files, base_changed, head_changed, index,
                                      limits.max_documents, limits.max_nodes_per_revision);
  }
  if (pick.whole) {
    out.whole_because = pick.why;
    out.base = load(*base_snap, nullptr);
    out.head = load(*head_snap, nullptr);
  } else {
    out.partial = true;
    out.projects = pick.projects;
    out.base = load(*base_snap, &pick.base);
    out.head = load(*head_snap, &pick.head);
    out.base.docs = touched_only(out.base.docs, pick.projects);
    out.head.docs = touched_only(out.head.docs, pick.projects);
  }
  log::get("plan")->debug("review of {}..{}: {}, {} files parsed",
                          base_snap->revision.substr(0, 12), head_snap->revision.substr(0, 12),
                          out.partial ? std::to_string(out.projects.size()) + " projects touched"
                                      : "whole revisions (" + out.whole_because + ")",
                          out.files_parsed);

  remember(index, out.base);
  remember(index, out.head);
  index.keep_only({&base_files, &head_files});
  if (auto st = write_file_atomically(index_file, index.to_json(), "review index"); !st)
    log::get("plan")->warn("{} (the next review parses both revisions whole)", st.error().message);
  return out;
}

}  // namespace flytecd::wiring
