// GitSource::snapshot resolves revision names as `git rev-parse` does (issue 20 item 1): in the
// repository itself for a local path (no mirror), after a fetch for a URL; and a revision over
// the per-revision snapshot limits is refused before it is read (issue 27 item 6, tree bomb).
// Real repositories made with the git CLI; the expected ids come from `git rev-parse`.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sources/git/git_source.hpp"
#include "tests/integration/git/git_source_checks.hpp"
#include "tests/integration/git/git_test_support.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

namespace fg = flytecd::sources::git;
namespace stdfs = git_test::stdfs;
using flytecd::ErrorCode;
using namespace git_test;

struct Repo : git_test::WorkAndRemote {
  std::string cache = tmp.str("cache");

  Repo() { git(home, work, {"remote", "add", "origin", remote}); }
  std::string commit(const std::string& file, const std::string& text) {
    spit(stdfs::path(work) / file, text);
    git(home, work, {"add", "-A"});
    git(home, work, {"commit", "-q", "-m", file + " " + text});
    return rev_parse("HEAD");
  }
  std::string rev_parse(const std::string& name, const std::string& dir = "") {
    return git(home, dir.empty() ? work : dir, {"rev-parse", "--verify", "-q", name + "^{commit}"});
  }
  fg::GitOptions options(const std::string& url) const { return git_test::git_options(url, cache); }
};

std::string resolved(fg::GitSource& source, const std::string& name) {
  auto snap = source.snapshot_at(name);
  INFO(name << ": " << (snap ? std::string() : snap.error().message));
  REQUIRE(snap);
  return snap->revision;
}

size_t entries_in(const std::string& dir) {
  std::error_code ec;
  if (!stdfs::exists(dir, ec)) return 0;
  size_t n = 0;
  for (auto it = stdfs::directory_iterator(dir, ec); it != stdfs::directory_iterator(); ++it) ++n;
  return n;
}

}  // namespace

TEST_CASE("git revisions: a local path resolves names in the repository itself, as rev-parse does",
          "[git][revisions]") {
  Repo r;
  const std::string c1 = r.commit("a.yaml", "a: 1\n");
  git(r.home, r.work, {"tag", "-a", "v1", "-m", "release 1"});
  const std::string c2 = r.commit("a.yaml", "a: 2\n");
  git(r.home, r.work, {"push", "-q", "origin", "main"});
  git(r.home, r.work, {"fetch", "-q", "origin"});
  git(r.home, r.work, {"checkout", "-q", "-b", "feature"});
  const std::string f1 = r.commit("b.yaml", "b: 1\n");
  git(r.home, r.work, {"checkout", "-q", "main"});
  const std::string c3 = r.commit("a.yaml", "a: 3\n");  // local main is ahead of origin/main

  auto source = open_ok(r.options(r.work));
  // Every name as `git rev-parse` gives it in that repository.
  for (const std::string& name : std::vector<std::string>{
           "HEAD", "@", "@~1", "@^", "HEAD^", "main~2", "main", "v1", "feature", "origin/main",
           "refs/remotes/origin/main", "refs/tags/v1", c1.substr(0, 7), c2}) {
    INFO(name);
    CHECK(resolved(*source, name) == r.rev_parse(name));
  }
  CHECK(resolved(*source, "HEAD") == c3);
  CHECK(resolved(*source, "origin/main") == c2);  // the remote-tracking ref, not local main
  CHECK(resolved(*source, "main") == c3);
  CHECK(resolved(*source, "v1") == c1);  // an annotated tag peeled to its commit
  // A...B is the merge base of A and B.
  CHECK(resolved(*source, "main...feature") == c2);
  CHECK(resolved(*source, "main...feature") == git(r.home, r.work, {"merge-base", "main", f1}));
  CHECK(resolved(*source, "feature...@") == c2);
  // The documents are that commit's.
  auto at_c1 = source->snapshot_at("v1");
  REQUIRE(at_c1);
  REQUIRE(at_c1->files.size() == 1);
  CHECK(at_c1->files[0].bytes == "a: 1\n");

  SECTION("nothing is copied: no mirror under the cache directory") {
    CHECK(entries_in(r.cache) == 0);
  }
  SECTION("a moved branch and a new detached HEAD are seen at once (no fetch to miss)") {
    const std::string c4 = r.commit("a.yaml", "a: 4\n");
    CHECK(resolved(*source, "main") == c4);
    git(r.home, r.work, {"checkout", "-q", "--detach", c1});
    CHECK(resolved(*source, "HEAD") == c1);
  }
  SECTION("sync() follows the configured ref in place") {
    auto options = r.options(r.work);
    options.ref = "main";
    auto following = open_ok(options);
    CHECK(head_ok(*following) == c3);
    auto synced = following->sync();
    REQUIRE(synced);
    CHECK(synced->revision == c3);
    const std::string c4 = r.commit("a.yaml", "a: 4\n");
    CHECK(following->sync()->revision == c4);
    CHECK(entries_in(r.cache) == 0);
  }
  SECTION("a range is refused, saying what to give") {
    auto range = source->snapshot_at("main~1..main");
    REQUIRE_FALSE(range);
    CHECK(range.error().code == ErrorCode::invalid_input);
    CHECK_THAT(range.error().message, Catch::Contains("is a range") && Catch::Contains("A...B"));
  }
  SECTION("a name the repository does not have is not_found, named") {
    auto missing = source->snapshot_at("origin/feature");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ErrorCode::not_found);
    CHECK_THAT(missing.error().message,
               Catch::Contains("revision 'origin/feature' not found in the repository"));
  }
  SECTION("one identity per repository: a symlink and a dotted spelling are the same path") {
    stdfs::create_directory_symlink(r.work, r.tmp.str("link"));
    auto via_link = open_ok(r.options(r.tmp.str("link")));
    auto dotted = open_ok(r.options(r.work + "/./sub/../"));
    CHECK(via_link->describe() == source->describe());
    CHECK(dotted->describe() == source->describe());
    CHECK(resolved(*via_link, "HEAD") == c3);
  }
  SECTION("a subdirectory of the repository is refused, naming its top") {
    stdfs::create_directories(r.work + "/deploy");
    auto sub = open_ok(r.options(r.work + "/deploy"));
    auto snap = sub->snapshot_at("HEAD");
    REQUIRE_FALSE(snap);
    CHECK(snap.error().code == ErrorCode::invalid_input);
    CHECK_THAT(snap.error().message,
               Catch::Contains("not its top") && Catch::Contains("'deploy' as the path"));
  }
  SECTION("a directory that is no repository is not_found") {
    stdfs::create_directories(r.tmp.str("plain"));
    auto plain = open_ok(r.options(r.tmp.str("plain")));
    auto snap = plain->snapshot_at("HEAD");
    REQUIRE_FALSE(snap);
    CHECK(snap.error().code == ErrorCode::not_found);
    CHECK_THAT(snap.error().message, Catch::Contains("is not a Git repository"));
  }
}

TEST_CASE("git revisions: the layout actions/checkout leaves resolves origin/<base> and HEAD",
          "[git][revisions]") {
  Repo r;
  const std::string base = r.commit("a.yaml", "a: 1\n");
  git(r.home, r.work, {"push", "-q", "origin", "main"});
  git(r.home, r.work, {"checkout", "-q", "-b", "pr"});
  const std::string pr = r.commit("a.yaml", "a: pr\n");
  git(r.home, r.work, {"push", "-q", "origin", "pr"});
  // git init; fetch heads into refs/remotes/origin/*; checkout --detach <sha>.
  const std::string ci = r.tmp.str("ci");
  git(r.home, r.tmp.str(), {"init", "-q", ci});
  git(r.home, ci, {"remote", "add", "origin", r.remote});
  git(r.home, ci, {"fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*"});
  git(r.home, ci, {"checkout", "-q", "--detach", pr});
  auto source = open_ok(r.options(ci));
  CHECK(resolved(*source, "origin/main") == base);
  CHECK(resolved(*source, "HEAD") == pr);
  CHECK(resolved(*source, pr) == pr);
  CHECK(resolved(*source, "origin/main..." + pr) == base);
  auto local_main = source->snapshot_at("main");  // there is no local branch main
  REQUIRE_FALSE(local_main);
  CHECK(local_main.error().code == ErrorCode::not_found);
}

TEST_CASE("git revisions: a URL is fetched before a name resolves", "[git][revisions]") {
  Repo r;
  const std::string c1 = r.commit("a.yaml", "a: 1\n");
  git(r.home, r.work, {"push", "-q", "origin", "main"});
  const std::string url = "file://" + r.remote;
  auto source = open_ok(r.options(url));
  CHECK(resolved(*source, "main") == c1);
  CHECK(resolved(*source, "HEAD") == c1);  // the remote's HEAD before anything is followed

  SECTION("a moved branch is fetched again, by the same source and by a new one") {
    const std::string c2 = r.commit("a.yaml", "a: 2\n");
    git(r.home, r.work, {"push", "-q", "origin", "main"});
    CHECK(resolved(*source, "main") == c2);
    CHECK(resolved(*source, "origin/main") == c2);  // the remote's branch, as in a clone
    CHECK(resolved(*open_ok(r.options(url)), "main~1") == c1);
    const std::string c3 = r.commit("a.yaml", "a: 3\n");
    git(r.home, r.work, {"push", "-q", "origin", "main"});
    CHECK(resolved(*open_ok(r.options(url)), "main") == c3);
  }
  SECTION("the remote's remote-tracking refs are fetched (a CI checkout served as a URL)") {
    const std::string ci = r.tmp.str("ci");
    git(r.home, r.tmp.str(), {"init", "-q", ci});
    git(r.home, ci, {"remote", "add", "origin", r.remote});
    git(r.home, ci, {"fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*"});
    git(r.home, ci, {"checkout", "-q", "--detach", c1});
    auto served = open_ok(r.options("file://" + ci));
    CHECK(resolved(*served, "origin/main") == c1);
    CHECK(resolved(*served, "refs/remotes/origin/main") == c1);
  }
  SECTION("a branch deleted on the remote is pruned from the mirror") {
    git(r.home, r.work, {"push", "-q", "origin", "main:gone"});
    CHECK(resolved(*source, "gone") == c1);
    git(r.home, r.work, {"push", "-q", "origin", ":gone"});
    auto gone = source->snapshot_at("gone");
    REQUIRE_FALSE(gone);
    CHECK(gone.error().code == ErrorCode::not_found);
    CHECK_THAT(gone.error().message, Catch::Contains("not found on the remote"));
  }
  SECTION("a file:// URL spelled through a symlink shares the one mirror") {
    stdfs::create_directory_symlink(r.remote, r.tmp.str("remote-link.git"));
    CHECK(resolved(*open_ok(r.options("file://" + r.tmp.str("remote-link.git"))), "main") == c1);
    CHECK(entries_in(r.cache) == 1);
  }
}

TEST_CASE("git revisions: a revision over the per-revision limits is refused before it is read",
          "[git][revisions]") {
  Repo r;
  r.commit("ok.yaml", "a: 1\n");
  // One 64 KiB blob listed under 20 paths: 1.25 MiB of documents from a few KiB of Git.
  const std::string blob_file = r.tmp.str("blob");
  spit(blob_file, std::string(64 << 10, '#'));
  const std::string blob = git(r.home, r.work, {"hash-object", "-w", blob_file});
  for (int i = 0; i < 20; ++i)
    git(r.home, r.work,
        {"update-index", "--add", "--cacheinfo",
         "100644," + blob + ",bomb/f" + std::to_string(i) + ".yaml"});
  git(r.home, r.work, {"commit", "-q", "-m", "bomb"});

  auto options = r.options(r.work);
  options.max_snapshot_bytes = 1u << 20;
  SECTION("total bytes") {
    auto snap = open_ok(options)->snapshot_at("HEAD");
    REQUIRE_FALSE(snap);
    CHECK(snap.error().code == ErrorCode::invalid_input);
    CHECK_THAT(snap.error().message,
               Catch::Contains("21 YAML files hold 1.3 MiB") &&
                   Catch::Contains("a revision may hold at most 1.0 MiB (1048576 bytes, the "
                                   "per-revision size limit"));
    options.max_snapshot_bytes = 2u << 20;
    auto within = open_ok(options)->snapshot_at("HEAD");
    REQUIRE(within);
    CHECK(within->files.size() == 21);
  }
  SECTION("files that are listed but too large to read do not count") {
    options.max_file_bytes = 1000;
    auto snap = open_ok(options)->snapshot_at("HEAD");
    REQUIRE(snap);
    CHECK(snap->files.size() == 21);
    CHECK(snap->files[0].bytes.empty());
  }
  SECTION("files") {
    options.max_snapshot_bytes = 256u << 20;
    options.max_snapshot_files = 5;
    auto snap = open_ok(options)->snapshot_at("HEAD");
    REQUIRE_FALSE(snap);
    CHECK_THAT(snap.error().message, Catch::Contains("more than 5 YAML files") &&
                                         Catch::Contains("per-revision file limit"));
  }
  SECTION("tree entries walked") {
    options.max_snapshot_bytes = 256u << 20;
    options.max_tree_entries = 10;
    auto snap = open_ok(options)->snapshot_at("HEAD");
    REQUIRE_FALSE(snap);
    CHECK_THAT(snap.error().message, Catch::Contains("more than 10 tree entries"));
  }
  SECTION("the daemon's sync() is bounded the same way, through a mirror too") {
    git(r.home, r.work, {"push", "-q", "origin", "main"});
    auto url_options = r.options("file://" + r.remote);
    url_options.ref = "main";
    url_options.max_snapshot_bytes = 1u << 20;
    auto synced = open_ok(url_options)->sync();
    REQUIRE_FALSE(synced);
    CHECK_THAT(synced.error().message, Catch::Contains("per-revision size limit"));
  }
}

}  // namespace FLYTECD_UNITY_ID
