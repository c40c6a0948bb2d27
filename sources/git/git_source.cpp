#include "sources/git/git_source.hpp"

#include <git2.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>

#include "daemon/common/log.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"
#include "sources/git/commit_tree.hpp"
#include "sources/git/libgit2.hpp"
#include "sources/git/net.hpp"
#include "sources/git/remote_connection.hpp"
#include "sources/git/ssh_signature.hpp"
#include "sources/git/url.hpp"

namespace flytecd::sources::git {
namespace fs = std::filesystem;

namespace {

// libgit2 stays initialized for the life of the process: our TCP stream is registered in its
// global state, which a final git_libgit2_shutdown would tear down.
Status init_libgit2() {
  static Status status = []() -> Status {
    if (git_libgit2_init() < 0)
      return make_error(ErrorCode::internal, "libgit2 init: " + last_git_message());
    if (!net::install_stream())
      return make_error(ErrorCode::internal, "libgit2 stream: " + last_git_message());
    return ok_status();
  }();
  return status;
}

Status require_readable(const std::string& path, const std::string& what) {
  if (::access(path.c_str(), R_OK) != 0)
    return make_error(ErrorCode::invalid_input, what + " '" + path + "' is not readable");
  return ok_status();
}

// The remote refs a configured ref may name, most specific first.
std::vector<std::string> ref_candidates(const std::string& ref) {
  if (ref.rfind("refs/", 0) == 0) return {ref};
  return {"refs/heads/" + ref, "refs/tags/" + ref};
}

Status validate_ref(const std::string& ref) {
  if (ref.empty()) return make_error(ErrorCode::invalid_input, "ref is empty");
  if (is_full_commit_id(ref)) return ok_status();
  int valid = 0;
  const std::string full = ref.rfind("refs/", 0) == 0 ? ref : "refs/heads/" + ref;
  if (ref.front() == '-' || git_reference_name_is_valid(&valid, full.c_str()) < 0 || !valid)
    return make_error(ErrorCode::invalid_input, "ref '" + ref + "' is not a valid Git ref name");
  return ok_status();
}

// The ref to follow on the remote and the commit it names (annotated tags peeled).
struct Tracked {
  std::string remote_ref;
  std::string commit;
};

Result<Tracked> find_tracked(const std::vector<RemoteRef>& refs, const std::string& ref) {
  auto find = [&](const std::string& name) -> const RemoteRef* {
    auto it = std::find_if(refs.begin(), refs.end(), [&](const auto& r) { return r.name == name; });
    return it == refs.end() ? nullptr : &*it;
  };
  for (const auto& candidate : ref_candidates(ref)) {
    const RemoteRef* hit = find(candidate);
    if (!hit) continue;
    const RemoteRef* peeled = find(candidate + "^{}");
    return Tracked{candidate, peeled ? peeled->id : hit->id};
  }
  return make_error(ErrorCode::not_found, "ref '" + ref + "' not found on the remote");
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Git reads a lone "@" (at the start of a revision or of either side of a range, not followed
// by "{") as HEAD: "@~1", "@^", "main...@". libgit2 takes only "@" alone.
std::string expand_at(const std::string& spec) {
  std::string out;
  for (size_t i = 0; i < spec.size(); ++i) {
    const bool side_start = i == 0 || (i >= 2 && spec.compare(i - 2, 2, "..") == 0);
    if (spec[i] == '@' && side_start && (i + 1 == spec.size() || spec[i + 1] != '{'))
      out += "HEAD";
    else
      out += spec[i];
  }
  return out;
}

// The remote's refs a mirror holds: branches, tags and its remote-tracking refs.
bool mirrored_ref(const std::string& name) {
  return (starts_with(name, "refs/heads/") || starts_with(name, "refs/tags/") ||
          starts_with(name, "refs/remotes/")) &&
         !(name.size() > 3 && name.compare(name.size() - 3, 3, "^{}") == 0);
}

}  // namespace

struct GitSource::Impl {
  GitOptions opts;
  RemoteUrl remote;
  std::string url;  // as given to libgit2 (a local path: its real path)
  std::string redacted;
  std::string subpath;
  std::string mirror_path;
  // A local path is read in place: `repo` is that repository (opened on first use, so a path
  // that appears later is picked up), not a mirror.
  bool direct = false;
  bool following = false;  // sync() ran: the mirror's HEAD is the followed ref
  RepoPtr repo;
  std::shared_ptr<spdlog::logger> log;
  std::mutex mu;
  std::optional<Snapshot> last;  // the snapshot sync() returned last (commits are immutable)
  std::string verified;          // the last head that passed the signature policy

  Error fail(const Error& e, const std::string& what) const {
    return e.wrap("git " + redacted + ": " + what);
  }

  // The commit a local ref names in the mirror, or "" when it is absent.
  std::string local_commit(const std::string& refname) const {
    git_object* raw = nullptr;
    if (git_revparse_single(&raw, repo.get(), refname.c_str()) < 0) return {};
    ObjectPtr obj(raw);
    git_object* peeled = nullptr;
    if (git_object_peel(&peeled, obj.get(), GIT_OBJECT_COMMIT) < 0) return {};
    ObjectPtr commit(peeled);
    return oid_hex(*git_object_id(commit.get()));
  }

  bool has_commit(const std::string& id) const {
    git_oid oid;
    git_commit* raw = nullptr;
    if (git_oid_fromstr(&oid, id.c_str()) < 0 || git_commit_lookup(&raw, repo.get(), &oid) < 0)
      return false;
    git_commit_free(raw);
    return true;
  }

  // Points the mirror's HEAD at the followed ref so revspecs like "HEAD~1" mean what users expect.
  void update_head(const Tracked& tracked) {
    if (tracked.remote_ref.rfind("refs/heads/", 0) == 0) {
      git_repository_set_head(repo.get(), tracked.remote_ref.c_str());
    } else if (git_oid oid; git_oid_fromstr(&oid, tracked.commit.c_str()) == 0) {
      git_repository_set_head_detached(repo.get(), &oid);
    }
  }

  Result<Tracked> remote_tracked(Connection& conn) {
    auto refs = conn.list();
    if (!refs) return fail(refs.error(), "ls-remote");
    auto tracked = find_tracked(*refs, opts.ref);
    if (!tracked) return fail(tracked.error(), "ls-remote");
    return tracked;
  }

  // The id a ref of the mirror points at (not peeled), or "".
  std::string ref_target(const std::string& name) const {
    git_oid oid;
    if (git_reference_name_to_id(&oid, repo.get(), name.c_str()) < 0) return {};
    return oid_hex(oid);
  }

  // Brings the mirror up to the remote: its branches, tags and remote-tracking refs (and the
  // followed ref), downloaded only when one differs; refs the remote no longer has are removed,
  // as `git fetch --prune` does. HEAD is the followed ref once sync() ran, else the remote's.
  Status fetch_all() {
    Connection conn(repo.get(), opts, remote, url, redacted);
    auto refs = conn.list();
    if (!refs) return fail(refs.error(), "ls-remote");
    const std::string remote_head_branch = conn.default_branch();
    std::vector<std::string> specs = {"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*",
                                      "+refs/remotes/*:refs/remotes/*"};
    std::optional<Tracked> tracked;
    if (!is_full_commit_id(opts.ref))
      if (auto found = find_tracked(*refs, opts.ref)) tracked = *found;
    bool stale = false;
    if (tracked && !mirrored_ref(tracked->remote_ref)) {
      specs.push_back("+" + tracked->remote_ref + ":" + tracked->remote_ref);
      stale = local_commit(tracked->remote_ref) != tracked->commit;
    }
    std::set<std::string> advertised;
    std::string remote_head_id;
    for (const auto& r : *refs) {
      if (r.name == "HEAD") remote_head_id = r.id;
      if (!mirrored_ref(r.name)) continue;
      advertised.insert(r.name);
      if (ref_target(r.name) != r.id) stale = true;
    }
    if (stale) {
      if (auto st = conn.fetch(specs); !st) return fail(st.error(), "fetch");
      log->info("fetched branches, tags and remote-tracking refs");
    }
    prune(advertised);
    if (following && tracked) {
      update_head(*tracked);
    } else if (!remote_head_branch.empty() && !ref_target(remote_head_branch).empty()) {
      git_repository_set_head(repo.get(), remote_head_branch.c_str());
    } else if (git_oid oid; !remote_head_id.empty() && has_commit(remote_head_id) &&
                            git_oid_fromstr(&oid, remote_head_id.c_str()) == 0) {
      git_repository_set_head_detached(repo.get(), &oid);
    }
    return ok_status();
  }

  // Removes the mirror's branches, tags and remote-tracking refs the remote no longer lists.
  void prune(const std::set<std::string>& advertised) {
    git_reference_iterator* raw = nullptr;
    if (git_reference_iterator_new(&raw, repo.get()) < 0) return;
    std::vector<std::string> gone;
    const char* name = nullptr;
    while (git_reference_next_name(&name, raw) == 0)
      if (mirrored_ref(name) && !advertised.count(name)) gone.emplace_back(name);
    git_reference_iterator_free(raw);
    for (const auto& g : gone) {
      if (git_reference_remove(repo.get(), g.c_str()) == 0)
        log->info("pruned {} (no longer on the remote)", g);
    }
  }

  // Asks the remote for one commit by id (servers allow it for reachable commits over
  // protocol v2 or with uploadpack.allowReachableSHA1InWant); failure is not an error here.
  void try_fetch_commit(const std::string& id) {
    Connection conn(repo.get(), opts, remote, url, redacted);
    if (!conn.list()) return;
    if (!conn.fetch({id + ":refs/flytecd/commits/" + id}))
      log->debug("fetching commit {} by id was refused: {}", short_id(id), last_git_message());
  }

  Status verify_signature(const std::string& id) {
    if (opts.signatures.mode == SignaturePolicy::Mode::off || id == verified) return ok_status();
    git_oid oid;
    git_oid_fromstr(&oid, id.c_str());
    SignedCommit signed_commit;
    signed_commit.commit_id = id;
    {
      Buf sig, data;
      int rc = git_commit_extract_signature(&sig.b, &data.b, repo.get(), &oid, nullptr);
      if (rc == GIT_ENOTFOUND)
        return make_error(ErrorCode::invalid_input,
                          "commit " + id +
                              " is not signed; the signature policy requires an SSH "
                              "signature by a key in " +
                              opts.signatures.allowed_signers_file);
      if (rc < 0) return git_failure(rc, "read signature of commit " + id);
      signed_commit.signature = sig.str();
      signed_commit.signed_data = data.str();
    }
    git_commit* raw = nullptr;
    if (int rc = git_commit_lookup(&raw, repo.get(), &oid); rc < 0)
      return git_failure(rc, "commit " + id);
    CommitPtr commit(raw);
    if (const git_signature* committer = git_commit_committer(commit.get()))
      signed_commit.committer_email = committer->email ? committer->email : "";
    if (auto st = verify_ssh_commit_signature(signed_commit, opts.signatures.allowed_signers_file,
                                              scratch_dir());
        !st)
      return st;
    verified = id;
    log->info("commit {} has a valid SSH signature by <{}>", short_id(id),
              signed_commit.committer_email);
    return ok_status();
  }

  // Where private temp files go: the mirror, or for a repository read in place the cache
  // directory (else the system's temp directory).
  std::string scratch_dir() const {
    if (!direct) return mirror_path;
    std::error_code ec;
    if (!opts.cache_dir.empty()) {
      fs::create_directories(opts.cache_dir, ec);
      if (fs::is_directory(opts.cache_dir, ec)) return opts.cache_dir;
    }
    return fs::temp_directory_path(ec).string();
  }

  // Opens the repository at a local path (once). Not the top of a repository, or no repository
  // at all, is said plainly.
  Status open_direct() {
    if (repo) return ok_status();
    std::error_code ec;
    if (!fs::is_directory(url, ec))
      return make_error(ErrorCode::not_found, "'" + url + "' is not a directory");
    git_repository* raw = nullptr;
    if (git_repository_open_ext(&raw, url.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) == 0) {
      repo.reset(raw);
      return ok_status();
    }
    const std::string why = last_git_message();
    Buf found;
    if (git_repository_discover(&found.b, url.c_str(), 0, nullptr) == 0 &&
        git_repository_open(&raw, found.str().c_str()) == 0) {
      RepoPtr outer(raw);
      const char* workdir = git_repository_workdir(outer.get());
      std::string top_s = workdir ? workdir : found.str();
      while (top_s.size() > 1 && top_s.back() == '/') top_s.pop_back();
      const std::string rel = fs::path(url).lexically_relative(top_s).generic_string();
      return make_error(ErrorCode::invalid_input, "'" + url + "' is inside the Git repository at " +
                                                      top_s + ", not its top; give " + top_s +
                                                      " as the repository and '" + rel +
                                                      "' as the path of the documents");
    }
    return make_error(ErrorCode::not_found, "'" + url + "' is not a Git repository (" + why + ")");
  }

  // `spec` resolved in `repo` to a commit id, as `git rev-parse` does ("A...B": their merge
  // base); "" when it names nothing there.
  Result<std::string> resolve_spec(const std::string& spec) {
    git_revspec rs{};
    const int rc = git_revparse(&rs, repo.get(), expand_at(spec).c_str());
    if (rc == GIT_ENOTFOUND || rc == GIT_EUNBORNBRANCH) return std::string();
    if (rc == GIT_EAMBIGUOUS)
      return make_error(ErrorCode::invalid_input, "'" + spec + "' is ambiguous (" +
                                                      last_git_message() +
                                                      "); give more digits of the commit id");
    if (rc < 0)
      return make_error(ErrorCode::invalid_input, "'" + spec + "' is not a revision (" +
                                                      last_git_message() +
                                                      "); expected a name `git rev-parse` takes");
    ObjectPtr from(rs.from), to(rs.to);
    auto commit_of = [&](git_object* obj, const std::string& what) -> Result<git_oid> {
      git_object* peeled = nullptr;
      if (!obj || git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) < 0)
        return make_error(ErrorCode::invalid_input, "'" + what + "' does not name a commit");
      ObjectPtr commit(peeled);
      return *git_object_id(commit.get());
    };
    if (rs.flags & GIT_REVSPEC_MERGE_BASE) {
      auto a = commit_of(from.get(), spec);
      if (!a) return a.error();
      auto b = commit_of(to.get(), spec);
      if (!b) return b.error();
      git_oid base;
      if (int mb = git_merge_base(&base, repo.get(), &*a, &*b); mb == GIT_ENOTFOUND)
        return make_error(ErrorCode::invalid_input,
                          "'" + spec + "': the two commits have no common ancestor");
      else if (mb < 0)
        return git_failure(mb, "merge base of '" + spec + "'");
      return oid_hex(base);
    }
    if (rs.flags & GIT_REVSPEC_RANGE)
      return make_error(ErrorCode::invalid_input,
                        "'" + spec +
                            "' is a range (A..B); give one revision, or A...B for the merge "
                            "base of A and B");
    auto id = commit_of(from.get(), spec);
    if (!id) return id.error();
    return oid_hex(*id);
  }

  // The commit a configured ref names in a repository read in place.
  Result<std::string> direct_ref_commit() {
    if (is_full_commit_id(opts.ref)) {
      std::string id = opts.ref;
      std::transform(id.begin(), id.end(), id.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (!has_commit(id))
        return make_error(ErrorCode::not_found, "commit " + id + " is not in the repository");
      return id;
    }
    for (const auto& candidate : ref_candidates(opts.ref)) {
      git_reference* raw = nullptr;
      if (git_reference_lookup(&raw, repo.get(), candidate.c_str()) < 0) continue;
      RefPtr ref(raw);
      git_object* peeled = nullptr;
      if (git_reference_peel(&peeled, ref.get(), GIT_OBJECT_COMMIT) < 0)
        return make_error(ErrorCode::invalid_input,
                          "ref '" + opts.ref + "' does not name a commit");
      ObjectPtr commit(peeled);
      return oid_hex(*git_object_id(commit.get()));
    }
    return make_error(ErrorCode::not_found, "ref '" + opts.ref + "' not found in the repository");
  }

  Result<Snapshot> build_snapshot(const std::string& id) {
    return read_commit_snapshot(repo.get(), id, subpath, opts);
  }

  // One file of a commit (path relative to the subpath), bounded by max_bytes.
  Result<std::string> read_file(const std::string& id, const std::string& path,
                                uint64_t max_bytes) {
    if (direct)
      if (auto st = open_direct(); !st) return fail(st.error(), "read " + path);
    return read_commit_file(repo.get(), id, subpath, path, max_bytes);
  }

  // A revision of a URL's mirror, fetched first unless it is a full commit id already there.
  Result<std::string> resolve_remote(const std::string& revspec) {
    const std::string what = "revision '" + revspec + "'";
    if (is_full_commit_id(revspec)) {
      std::string id = revspec;
      std::transform(id.begin(), id.end(), id.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (has_commit(id)) return id;
      if (auto st = fetch_all(); !st) return st.error();
      if (!has_commit(id)) try_fetch_commit(id);
      if (has_commit(id)) return id;
      return fail(make_error(ErrorCode::not_found,
                             "commit " + id +
                                 " is not on the remote (not reachable from a branch, tag or "
                                 "remote-tracking ref, and not fetchable by id)"),
                  what);
    }
    if (auto st = fetch_all(); !st) return st.error();
    // "origin/<b>" is the remote's branch <b>, as in a clone of the URL; then Git's own rules
    // (which also find the remote's refs/remotes/origin/<b>).
    std::vector<std::string> tries;
    if (starts_with(revspec, "origin/")) tries.push_back("refs/heads/" + revspec.substr(7));
    tries.push_back(revspec);
    for (const auto& spec : tries) {
      auto id = resolve_spec(spec);
      if (!id) return fail(id.error(), what);
      if (!id->empty()) return id;
    }
    return fail(
        make_error(ErrorCode::not_found, what + " not found on the remote (its branches, tags and "
                                                "remote-tracking refs were fetched)"),
        "snapshot");
  }

  // A revision of a repository read in place, as `git rev-parse` resolves it there.
  Result<std::string> resolve_direct(const std::string& revspec) {
    const std::string what = "revision '" + revspec + "'";
    if (auto st = open_direct(); !st) return fail(st.error(), what);
    auto id = resolve_spec(revspec);
    if (!id) return fail(id.error(), what);
    if (id->empty())
      return fail(
          make_error(ErrorCode::not_found, what + " not found in the repository (`git rev-parse " +
                                               revspec + "` there names nothing)"),
          "snapshot");
    return id;
  }

  Result<Snapshot> sync() {
    std::string head;
    following = true;
    if (direct) {
      if (auto st = open_direct(); !st) return fail(st.error(), "sync");
      auto id = direct_ref_commit();
      if (!id) return fail(id.error(), "sync");
      head = *id;
    } else if (is_full_commit_id(opts.ref)) {
      head = opts.ref;
      std::transform(head.begin(), head.end(), head.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (!has_commit(head)) {
        if (auto st = fetch_all(); !st) return st.error();
        if (!has_commit(head)) try_fetch_commit(head);
        if (!has_commit(head))
          return fail(make_error(ErrorCode::not_found,
                                 "commit " + head + " is not reachable from any branch or tag"),
                      "sync");
        git_oid oid;
        git_oid_fromstr(&oid, head.c_str());
        git_repository_set_head_detached(repo.get(), &oid);
      }
    } else {
      Connection conn(repo.get(), opts, remote, url, redacted);
      auto tracked = remote_tracked(conn);
      if (!tracked) return tracked.error();
      const std::string before = local_commit(tracked->remote_ref);
      if (before != tracked->commit) {
        const std::string spec = "+" + tracked->remote_ref + ":" + tracked->remote_ref;
        if (auto st = conn.fetch({spec}); !st) return fail(st.error(), "fetch");
        log->info("fetched {}: {} -> {}", tracked->remote_ref, short_id(before),
                  short_id(tracked->commit));
      }
      head = local_commit(tracked->remote_ref);
      if (head.empty())
        return fail(make_error(ErrorCode::internal, "fetch did not create the local ref"),
                    "fetch " + tracked->remote_ref);
      if (before != head || local_commit("HEAD") != head) update_head(*tracked);
    }
    if (auto st = verify_signature(head); !st) return fail(st.error(), "signature policy");
    if (last && last->revision == head) return *last;
    auto snap = build_snapshot(head);
    if (!snap) return fail(snap.error(), "snapshot");
    last = *snap;
    return snap;
  }

  Result<Snapshot> snapshot(const std::string& revspec) {
    if (revspec.empty())
      return fail(make_error(ErrorCode::invalid_input, "empty revision"), "snapshot");
    auto id = direct ? resolve_direct(revspec) : resolve_remote(revspec);
    if (!id) return id.error();
    if (last && last->revision == *id) return *last;
    auto snap = build_snapshot(*id);
    if (!snap) return fail(snap.error(), "snapshot " + revspec);
    return snap;
  }
};

GitSource::GitSource(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
GitSource::~GitSource() = default;

Result<std::unique_ptr<GitSource>> GitSource::open(const GitOptions& options) {
  auto invalid = [&](const std::string& message) {
    return make_error(ErrorCode::invalid_input,
                      "git " + log::redact_url(options.url) + ": " + message);
  };
  if (auto st = init_libgit2(); !st) return st.error();
  auto impl = std::make_unique<Impl>();
  impl->opts = options;
  impl->redacted = log::redact_url(options.url);
  auto remote = parse_remote_url(options.url);
  if (!remote) return invalid(remote.error().message);
  impl->remote = *remote;
  if (remote->has_password)
    return invalid(
        "the URL embeds a password; put the secret in auth.password_file or "
        "auth.password_env instead");
  impl->url = options.url;
  std::string mirror_key = impl->redacted;
  if (remote->transport == Transport::local || remote->transport == Transport::file) {
    // One identity per repository on disk: its real path ("." and its absolute path, or a
    // symlink to it, are the same repository).
    const bool file = remote->transport == Transport::file;
    std::string path = file ? options.url.substr(7) : options.url;
    if (file && path.rfind("localhost/", 0) == 0) path = path.substr(9);
    std::error_code ec;
    fs::path normal = fs::absolute(path, ec).lexically_normal();
    if (fs::path real = fs::weakly_canonical(normal, ec); !ec) normal = real;
    std::string canonical = normal.string();
    while (canonical.size() > 1 && canonical.back() == '/') canonical.pop_back();
    if (file) {
      mirror_key = "file://" + canonical;
    } else {
      impl->direct = true;
      impl->url = canonical;
      impl->redacted = canonical;
    }
  }
  if (auto st = validate_ref(options.ref); !st) return invalid(st.error().message);
  auto sub = normalize_subpath(options.subpath);
  if (!sub) return invalid(sub.error().message);
  impl->subpath = *sub;
  if (options.timeout_seconds <= 0) return invalid("timeout_seconds must be positive");
  if (options.max_snapshot_files == 0 || options.max_snapshot_bytes == 0 ||
      options.max_tree_entries == 0)
    return invalid("the per-revision snapshot limits must be positive");
  if (!impl->direct && options.cache_dir.empty()) return invalid("cache_dir is required");

  const GitAuth& auth = options.auth;
  if (remote->transport == Transport::ssh) {
    if (!(git_libgit2_features() & GIT_FEATURE_SSH))
      return invalid("this libgit2 was built without SSH support (libssh2); use an https:// URL");
    if (auth.ssh_private_key_file.empty())
      return invalid("ssh remotes need auth.ssh_private_key_file");
    if (auth.ssh_known_hosts_file.empty())
      return invalid("ssh remotes need auth.ssh_known_hosts_file (host keys are always checked)");
    if (auto st = require_readable(auth.ssh_private_key_file, "SSH private key"); !st)
      return invalid(st.error().message);
    if (auto st = require_readable(auth.ssh_known_hosts_file, "known_hosts file"); !st)
      return invalid(st.error().message);
  }
  if (remote->transport == Transport::https && !(git_libgit2_features() & GIT_FEATURE_HTTPS))
    return invalid("this libgit2 was built without HTTPS support");
  if (!auth.password_file.empty())
    if (auto st = require_readable(auth.password_file, "password file"); !st)
      return invalid(st.error().message);
  if (options.signatures.mode == SignaturePolicy::Mode::ssh) {
    if (options.signatures.allowed_signers_file.empty())
      return invalid("the ssh signature policy needs allowed_signers_file");
    if (auto st = require_readable(options.signatures.allowed_signers_file, "allowed_signers"); !st)
      return invalid(st.error().message);
    if (auto keygen = find_ssh_keygen(); !keygen) return invalid(keygen.error().message);
  }

  impl->log = log::get("git:" + impl->redacted);
  if (impl->direct) return std::unique_ptr<GitSource>(new GitSource(std::move(impl)));
  std::error_code ec;
  fs::create_directories(options.cache_dir, ec);
  if (ec) return invalid("cannot create cache_dir '" + options.cache_dir + "': " + ec.message());
  impl->mirror_path = (fs::path(options.cache_dir) / mirror_dir_name(mirror_key)).string();
  git_repository* raw = nullptr;
  if (fs::exists(impl->mirror_path, ec) &&
      git_repository_open_bare(&raw, impl->mirror_path.c_str()) < 0) {
    // The mirror is a cache under a name we chose; a damaged one is rebuilt from the remote.
    impl->log->warn("mirror {} is unusable ({}); recreating it", impl->mirror_path,
                    last_git_message());
    fs::remove_all(impl->mirror_path, ec);
  }
  if (!raw && git_repository_init(&raw, impl->mirror_path.c_str(), 1) < 0)
    return make_error(ErrorCode::internal,
                      "git: cannot create mirror " + impl->mirror_path + ": " + last_git_message());
  impl->repo.reset(raw);
  return std::unique_ptr<GitSource>(new GitSource(std::move(impl)));
}

Result<std::string> GitSource::head() {
  std::lock_guard<std::mutex> lock(m_impl->mu);
  if (is_full_commit_id(m_impl->opts.ref)) {
    std::string id = m_impl->opts.ref;
    std::transform(id.begin(), id.end(), id.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return id;
  }
  if (m_impl->direct) {
    if (auto st = m_impl->open_direct(); !st) return m_impl->fail(st.error(), "open");
    auto id = m_impl->direct_ref_commit();
    if (!id) return m_impl->fail(id.error(), "ref");
    return id;
  }
  Connection conn(m_impl->repo.get(), m_impl->opts, m_impl->remote, m_impl->url, m_impl->redacted);
  auto tracked = m_impl->remote_tracked(conn);
  if (!tracked) return tracked.error();
  return tracked->commit;
}

Result<Snapshot> GitSource::sync() {
  std::lock_guard<std::mutex> lock(m_impl->mu);
  return m_impl->sync();
}

Result<Snapshot> GitSource::snapshot_at(const std::string& revspec) {
  std::lock_guard<std::mutex> lock(m_impl->mu);
  return m_impl->snapshot(revspec);
}

Result<std::string> GitSource::read_file(const std::string& revision, const std::string& path,
                                         uint64_t max_bytes) {
  std::lock_guard<std::mutex> lock(m_impl->mu);
  return m_impl->read_file(revision, path, max_bytes);
}

std::string GitSource::describe() const {
  std::string out = "git " + m_impl->redacted + " (ref " + m_impl->opts.ref;
  if (!m_impl->subpath.empty()) out += ", path " + m_impl->subpath;
  return out + ")";
}

}  // namespace flytecd::sources::git
