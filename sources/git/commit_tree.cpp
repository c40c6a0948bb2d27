#include "sources/git/commit_tree.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <vector>

#include "daemon/common/scan.hpp"
#include "sources/git/libgit2.hpp"
#include "sources/link_path.hpp"

namespace flytecd::sources::git {
namespace {

namespace fs = std::filesystem;

struct WalkState {
  std::vector<std::pair<std::string, git_oid>> found;
  std::vector<std::pair<std::string, git_oid>>
      links;  // *.yaml symlinks (mode 120000): resolved later
  // Bounds checked during the walk (a tree can list a subtree many times, so the paths it
  // spells out can grow exponentially with the repository's size).
  size_t max_files = 0, max_entries = 0, entries = 0;
  bool too_many_files = false, too_many_entries = false;
};

// Same selection as sources/local: *.yaml/*.yml, no dot-directories, symlinked documents
// followed (resolved after the walk), no submodules. Returns < 0 (stopping the walk) past a bound.
int collect_yaml(const char* root, const git_tree_entry* entry, void* payload) {
  auto& state = *static_cast<WalkState*>(payload);
  if (++state.entries > state.max_entries) {
    state.too_many_entries = true;
    return -1;
  }
  const std::string name = git_tree_entry_name(entry);
  auto* into = &state.found;
  switch (git_tree_entry_filemode(entry)) {
    case GIT_FILEMODE_TREE:
      return !name.empty() && name.front() == '.' ? 1 : 0;  // > 0 skips the subtree
    case GIT_FILEMODE_BLOB:
    case GIT_FILEMODE_BLOB_EXECUTABLE:
      break;
    case GIT_FILEMODE_LINK:
      into = &state.links;
      break;
    default:
      return 0;  // GIT_FILEMODE_COMMIT (submodule)
  }
  const std::string ext = fs::path(name).extension().string();
  if (ext != ".yaml" && ext != ".yml") return 0;
  if (state.found.size() + state.links.size() >= state.max_files) {
    state.too_many_files = true;
    return -1;
  }
  into->emplace_back(std::string(root) + name, *git_tree_entry_id(entry));
  return 0;
}

std::string mib(uint64_t bytes) {
  char out[32];
  std::snprintf(out, sizeof out, "%.1f MiB", static_cast<double>(bytes) / (1u << 20));
  return out;
}

Result<CommitPtr> lookup_commit(git_repository* repo, const std::string& id) {
  git_oid oid;
  if (git_oid_fromstr(&oid, id.c_str()) < 0)
    return make_error(ErrorCode::internal, "bad commit id " + id);
  git_commit* raw_commit = nullptr;
  if (int rc = git_commit_lookup(&raw_commit, repo, &oid); rc < 0)
    return git_failure(rc, "commit " + id);
  return CommitPtr(raw_commit);
}

// Replaces each symlinked document by the blob it names in `tree` (the repository path), as
// sources/local does on disk: at most k_max_link_hops links; dangling, looping, escaping or
// non-file targets refuse the revision, naming the link.
Result<bool> resolve_links(git_repository* repo, git_tree* tree, WalkState& walk) {
  for (const auto& [link_path, first_blob] : walk.links) {
    std::string rel = link_path;
    git_oid blob = first_blob;
    bool done = false;
    for (int hop = 0; hop < k_max_link_hops && !done; ++hop) {
      git_blob* raw_blob = nullptr;
      if (int rc = git_blob_lookup(&raw_blob, repo, &blob); rc < 0)
        return git_failure(rc, "read symlink " + rel);
      BlobPtr text(raw_blob);
      const std::string target(static_cast<const char*>(git_blob_rawcontent(text.get())),
                               static_cast<size_t>(git_blob_rawsize(text.get())));
      auto next = resolve_link(rel, target);
      if (!next) return next.error();
      rel = *next;
      git_tree_entry* raw_entry = nullptr;
      if (git_tree_entry_bypath(&raw_entry, tree, rel.c_str()) < 0)
        return make_error(ErrorCode::invalid_input,
                          "symlink '" + scan::printable(link_path) + "' dangles: '" +
                              scan::printable(rel) +
                              "' does not exist; expected a link to a file inside the "
                              "repository path");
      EntryPtr entry(raw_entry);
      blob = *git_tree_entry_id(entry.get());
      switch (git_tree_entry_filemode(entry.get())) {
        case GIT_FILEMODE_LINK:
          break;
        case GIT_FILEMODE_BLOB:
        case GIT_FILEMODE_BLOB_EXECUTABLE:
          done = true;
          break;
        default:
          return make_error(ErrorCode::invalid_input,
                            "symlink '" + scan::printable(link_path) + "' -> '" +
                                scan::printable(rel) +
                                "' is not a regular file; expected a link to a YAML file");
      }
    }
    if (!done)
      return make_error(ErrorCode::invalid_input,
                        "symlink '" + scan::printable(link_path) + "' goes through more than " +
                            std::to_string(k_max_link_hops) +
                            " links (a loop?); expected a link to a file inside the "
                            "repository path");
    walk.found.emplace_back(link_path, blob);
  }
  return true;
}

}  // namespace

Result<Snapshot> read_commit_snapshot(git_repository* repo, const std::string& id,
                                      const std::string& subpath, const GitOptions& opts) {
  auto found = lookup_commit(repo, id);
  if (!found) return found.error();
  CommitPtr commit = std::move(*found);
  Snapshot snap;
  snap.revision = id;
  snap.subject = commit_text(commit.get(), git_commit_summary(commit.get()));
  if (const git_signature* a = git_commit_author(commit.get()))
    snap.author =
        commit_text(commit.get(), a->name) + " <" + commit_text(commit.get(), a->email) + ">";
  snap.commit_time = static_cast<int64_t>(git_commit_time(commit.get()));

  git_tree* raw_tree = nullptr;
  if (int rc = git_commit_tree(&raw_tree, commit.get()); rc < 0)
    return git_failure(rc, "tree of commit " + id);
  TreePtr tree(raw_tree);
  if (!subpath.empty()) {
    git_tree_entry* raw_entry = nullptr;
    if (git_tree_entry_bypath(&raw_entry, tree.get(), subpath.c_str()) < 0)
      return make_error(ErrorCode::not_found,
                        "subpath '" + subpath + "' does not exist in commit " + id);
    EntryPtr entry(raw_entry);
    if (git_tree_entry_filemode(entry.get()) != GIT_FILEMODE_TREE)
      return make_error(ErrorCode::invalid_input,
                        "subpath '" + subpath + "' is not a directory in commit " + id);
    git_tree* sub = nullptr;
    if (int rc = git_tree_lookup(&sub, repo, git_tree_entry_id(entry.get())); rc < 0)
      return git_failure(rc, "tree " + subpath);
    tree.reset(sub);
  }
  const std::string where =
      "commit " + short_id(id) + (subpath.empty() ? "" : " under '" + subpath + "'");
  WalkState walk;
  walk.max_files = opts.max_snapshot_files;
  walk.max_entries = opts.max_tree_entries;
  const int walked = git_tree_walk(tree.get(), GIT_TREEWALK_PRE, collect_yaml, &walk);
  if (walk.too_many_files)
    return make_error(ErrorCode::invalid_input,
                      where + " has more than " + std::to_string(opts.max_snapshot_files) +
                          " YAML files; a revision may hold at most " +
                          std::to_string(opts.max_snapshot_files) +
                          " (the per-revision file limit of the Git source)");
  if (walk.too_many_entries)
    return make_error(ErrorCode::invalid_input,
                      where + " lists more than " + std::to_string(opts.max_tree_entries) +
                          " tree entries; a revision may list at most " +
                          std::to_string(opts.max_tree_entries) +
                          " (the per-revision tree limit of the Git source)");
  if (walked < 0) return git_failure(walked, "walk tree of commit " + id);
  if (auto linked = resolve_links(repo, tree.get(), walk); !linked) return linked.error();
  std::vector<size_t> order(walk.found.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return walk.found[a].first < walk.found[b].first; });

  git_odb* raw_odb = nullptr;
  if (int rc = git_repository_odb(&raw_odb, repo); rc < 0)
    return git_failure(rc, "object database");
  OdbPtr odb(raw_odb);
  // Sizes first (object headers: nothing is inflated), so a revision over the byte limit is
  // refused before any of it is read.
  std::vector<size_t> sizes(walk.found.size());
  uint64_t total = 0;
  size_t largest = 0;
  for (size_t i : order) {
    git_object_t type{};
    if (int rc = git_odb_read_header(&sizes[i], &type, odb.get(), &walk.found[i].second); rc < 0)
      return git_failure(rc, "read " + walk.found[i].first);
    if (sizes[i] > opts.max_file_bytes) continue;  // listed, not read
    total += sizes[i];
    if (sizes[i] > sizes[largest] || sizes[largest] > opts.max_file_bytes) largest = i;
  }
  if (total > opts.max_snapshot_bytes)
    return make_error(
        ErrorCode::invalid_input,
        where + ": its " + std::to_string(order.size()) + " YAML files hold " + mib(total) + " (" +
            std::to_string(total) + " bytes; the largest, '" +
            scan::printable(walk.found[largest].first) + "', " + mib(sizes[largest]) +
            "); a revision may hold at most " + mib(opts.max_snapshot_bytes) + " (" +
            std::to_string(opts.max_snapshot_bytes) +
            " bytes, the per-revision size limit of the Git source). A tree can list one "
            "large file under many paths: check what the commit adds");
  for (size_t i : order) {
    const auto& [path, blob_id] = walk.found[i];
    SourceFile file;
    file.path = path;
    file.size = sizes[i];
    if (file.size <= opts.max_file_bytes) {
      git_blob* raw_blob = nullptr;
      if (int rc = git_blob_lookup(&raw_blob, repo, &blob_id); rc < 0)
        return git_failure(rc, "read " + path);
      BlobPtr blob(raw_blob);
      file.bytes.assign(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                        static_cast<size_t>(git_blob_rawsize(blob.get())));
    }
    snap.files.push_back(std::move(file));
    snap.blob_ids.push_back(oid_hex(blob_id));
  }
  return snap;
}

Result<std::string> read_commit_file(git_repository* repo, const std::string& id,
                                     const std::string& subpath, const std::string& path,
                                     uint64_t max_bytes) {
  auto commit = lookup_commit(repo, id);
  if (!commit) return commit.error();
  git_tree* raw_tree = nullptr;
  if (int rc = git_commit_tree(&raw_tree, commit->get()); rc < 0)
    return git_failure(rc, "tree of commit " + id);
  TreePtr tree(raw_tree);
  const std::string full = subpath.empty() ? path : subpath + "/" + path;
  git_tree_entry* raw_entry = nullptr;
  if (git_tree_entry_bypath(&raw_entry, tree.get(), full.c_str()) < 0)
    return make_error(ErrorCode::not_found, "no file '" + path + "' in commit " + short_id(id));
  EntryPtr entry(raw_entry);
  const auto mode = git_tree_entry_filemode(entry.get());
  if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE)
    return make_error(ErrorCode::invalid_input,
                      "'" + path + "' in commit " + short_id(id) + " is not a regular file");
  git_odb* raw_odb = nullptr;
  if (int rc = git_repository_odb(&raw_odb, repo); rc < 0)
    return git_failure(rc, "object database");
  OdbPtr odb(raw_odb);
  size_t size = 0;
  git_object_t type{};
  if (int rc = git_odb_read_header(&size, &type, odb.get(), git_tree_entry_id(entry.get())); rc < 0)
    return git_failure(rc, "read " + path);
  if (size > max_bytes)
    return make_error(ErrorCode::invalid_input, "'" + path + "' is " + std::to_string(size) +
                                                    " bytes; the limit is " +
                                                    std::to_string(max_bytes));
  git_blob* raw_blob = nullptr;
  if (int rc = git_blob_lookup(&raw_blob, repo, git_tree_entry_id(entry.get())); rc < 0)
    return git_failure(rc, "read " + path);
  BlobPtr blob(raw_blob);
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                     static_cast<size_t>(git_blob_rawsize(blob.get())));
}

}  // namespace flytecd::sources::git
