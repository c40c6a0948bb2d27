// The Git source against real Git, served as file:// and local paths: snapshots of YAML files
// under a subpath, revisions fetched on demand, force-pushed branches, symlinked documents, and
// strict parsing of remote URLs and subpaths. The network transports: git_transport_test.cpp.

#include "sources/git/git_source.hpp"

#include <git2.h>
#include <pwd.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "sources/git/known_hosts.hpp"
#include "sources/git/url.hpp"
#include "tests/integration/git/git_source_fixture.hpp"
#include "tests/support/tools.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fg = flytecd::sources::git;
using flytecd::ErrorCode;
using namespace git_test;
using Clock = std::chrono::steady_clock;

TEST_CASE("git: file:// and local paths give the same snapshot of YAML files under the subpath",
          "[git]") {
  Fixture fx;
  const std::string head = seed(fx);
  auto options = fx.options("file://" + fx.remote);
  options.subpath = "./deploy/";
  options.max_file_bytes = 100;
  auto source = open_ok(options);
  CHECK(source->describe() == "git file://" + fx.remote + " (ref main, path deploy)");

  auto remote = source->head();
  REQUIRE(remote);
  CHECK(*remote == head);

  flytecd::sources::Snapshot snap = sync_ok(*source);
  CHECK(snap.revision == head);
  CHECK(snap.subject == "add submodule");
  CHECK(snap.author == "Flytecd Test <test@example.com>");
  CHECK(snap.commit_time > 0);
  // link.yaml is a symlink to a.yaml (mode 120000): followed to a.yaml's blob (issue 10.3).
  CHECK(paths(snap) == std::vector<std::string>{"a.yaml", "big.yaml", "link.yaml", "sub/b.yml"});
  REQUIRE(snap.blob_ids.size() == 4);
  CHECK(snap.files[0].bytes == "a: 1\n");
  CHECK(snap.files[0].size == 5);
  CHECK(snap.files[1].bytes.empty());  // over max_file_bytes: listed, not read
  CHECK(snap.files[1].size == 301);
  CHECK(snap.files[2].bytes == "a: 1\n");
  CHECK(snap.files[3].bytes == "b: 2\n");
  CHECK(snap.blob_ids[0] == fx.blob("HEAD:deploy/a.yaml"));
  CHECK(snap.blob_ids[1] == fx.blob("HEAD:deploy/big.yaml"));
  CHECK(snap.blob_ids[2] == fx.blob("HEAD:deploy/a.yaml"));
  CHECK(snap.blob_ids[3] == fx.blob("HEAD:deploy/sub/b.yml"));

  SECTION("a plain local path reads the same revision") {
    auto local_options = fx.options(fx.remote);
    local_options.subpath = "deploy";
    local_options.max_file_bytes = 100;
    local_options.cache_dir = fx.tmp.str("cache-local");
    auto local = open_ok(local_options);
    flytecd::sources::Snapshot same = sync_ok(*local);
    CHECK(same.revision == snap.revision);
    CHECK(paths(same) == paths(snap));
    CHECK(same.blob_ids == snap.blob_ids);
  }

  SECTION("the repository root is the default subpath") {
    auto root_options = fx.options("file://" + fx.remote);
    auto root = open_ok(root_options);
    CHECK(paths(sync_ok(*root)) == std::vector<std::string>{"deploy/a.yaml", "deploy/big.yaml",
                                                            "deploy/link.yaml", "deploy/sub/b.yml",
                                                            "top.yaml"});
  }

  SECTION("blob ids stay for unchanged files and change for edited ones") {
    fx.write("deploy/a.yaml", "a: 2\n");
    const std::string next = fx.commit("edit a");
    fx.push();
    auto moved = source->head();
    REQUIRE(moved);
    CHECK(*moved == next);
    flytecd::sources::Snapshot after = sync_ok(*source);
    CHECK(after.revision == next);
    CHECK(after.files[0].bytes == "a: 2\n");
    CHECK(after.blob_ids[0] != snap.blob_ids[0]);
    CHECK(after.blob_ids[1] == snap.blob_ids[1]);
    CHECK(after.blob_ids[2] == after.blob_ids[0]);  // the link follows its target's edit
    CHECK(after.blob_ids[3] == snap.blob_ids[3]);

    // Older revisions stay addressable for `flytecd plan --base X --head Y`.
    auto previous = source->snapshot_at("HEAD~1");
    REQUIRE(previous);
    CHECK(previous->revision == head);
    auto by_id = source->snapshot_at(head);
    REQUIRE(by_id);
    CHECK(by_id->blob_ids == snap.blob_ids);
    auto by_branch = source->snapshot_at("origin/main");
    REQUIRE(by_branch);
    CHECK(by_branch->revision == next);
  }

  SECTION("an unknown revision is not_found") {
    auto missing = source->snapshot_at("no-such-branch");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ErrorCode::not_found);
  }

  SECTION("a subpath missing from the commit is not_found") {
    auto other = fx.options("file://" + fx.remote);
    other.subpath = "nope";
    auto missing = open_ok(other)->sync();
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ErrorCode::not_found);
    CHECK_THAT(missing.error().message, Catch::Contains("subpath 'nope'"));
  }
}

TEST_CASE("git: snapshot fetches revisions the mirror does not have yet", "[git]") {
  Fixture fx;
  const std::string first = seed(fx);
  auto source = open_ok(fx.options("file://" + fx.remote));
  // Nothing synced yet: snapshot() must fetch to answer.
  auto snap = source->snapshot_at(first);
  REQUIRE(snap);
  CHECK(snap->revision == first);
  git(fx.home, fx.work, {"tag", "-a", "v1", "-m", "release 1"});
  git(fx.home, fx.work, {"push", "-q", fx.remote, "v1"});
  fx.write("deploy/a.yaml", "a: 3\n");
  fx.commit("after v1");
  fx.push();
  auto tagged = source->snapshot_at("v1");
  REQUIRE(tagged);
  CHECK(tagged->revision == first);

  SECTION("a tag can be followed as the ref") {
    auto options = fx.options("file://" + fx.remote);
    options.ref = "v1";
    auto by_tag = open_ok(options);
    CHECK(head_ok(*by_tag) == first);  // annotated tag peeled to its commit
    CHECK(sync_ok(*by_tag).revision == first);
  }
  SECTION("a commit id can be pinned as the ref") {
    auto options = fx.options("file://" + fx.remote);
    options.ref = first;
    auto pinned = open_ok(options);
    CHECK(sync_ok(*pinned).revision == first);
  }
  SECTION("a commit only a pull-request ref reaches is fetched by id") {
    git(fx.home, fx.work, {"checkout", "-q", "-b", "feature"});
    fx.write("deploy/a.yaml", "a: pr\n");
    const std::string pr = fx.commit("pull request head");
    git(fx.home, fx.work, {"push", "-q", fx.remote, "feature:refs/pull/1/head"});
    auto snap_pr = source->snapshot_at(pr);
    INFO((snap_pr ? std::string() : snap_pr.error().message));
    REQUIRE(snap_pr);
    CHECK(snap_pr->files[0].bytes == "a: pr\n");
  }
  SECTION("a missing ref is not_found") {
    auto options = fx.options("file://" + fx.remote);
    options.ref = "does-not-exist";
    auto missing = open_ok(options)->head();
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ErrorCode::not_found);
  }
}

TEST_CASE("git: a force-pushed (rewritten) branch is followed", "[git]") {
  Fixture fx;
  fx.write("deploy/a.yaml", "v: 1\n");
  const std::string c1 = fx.commit("one");
  fx.write("deploy/a.yaml", "v: 2\n");
  const std::string c2 = fx.commit("two");
  fx.push();
  auto source = open_ok(fx.options("file://" + fx.remote));
  CHECK(sync_ok(*source).revision == c2);

  git(fx.home, fx.work, {"reset", "-q", "--hard", c1});
  fx.write("deploy/a.yaml", "v: 3\n");
  const std::string c3 = fx.commit("three (rewritten history)");
  fx.push(/*force=*/true);

  CHECK(head_ok(*source) == c3);
  flytecd::sources::Snapshot snap = sync_ok(*source);
  CHECK(snap.revision == c3);
  REQUIRE(snap.files.size() == 1);
  CHECK(snap.files[0].bytes == "v: 3\n");
  // The unchanged head is served again without a fetch and gives the same content.
  CHECK(sync_ok(*source).blob_ids == snap.blob_ids);
  CHECK(source->snapshot_at("HEAD~1")->revision == c1);
}

TEST_CASE("git: remote URLs and subpaths are parsed strictly", "[git]") {
  using fg::Transport;
  auto https = fg::parse_remote_url("https://x-access-token@GitHub.com/org/repo.git");
  REQUIRE(https);
  CHECK(https->transport == Transport::https);
  CHECK(https->host == "github.com");
  CHECK(https->port == 443);
  CHECK_FALSE(https->has_password);
  auto scp = fg::parse_remote_url("git@github.com:org/repo.git");
  REQUIRE(scp);
  CHECK(scp->transport == Transport::ssh);
  CHECK(scp->host == "github.com");
  CHECK(scp->user == "git");
  CHECK(scp->port == 22);
  auto ssh = fg::parse_remote_url("ssh://git@[::1]:2222/repo");
  REQUIRE(ssh);
  CHECK(ssh->host == "::1");
  CHECK(ssh->port == 2222);
  CHECK(fg::parse_remote_url("https://u:p@h/x")->has_password);
  CHECK(fg::parse_remote_url("/srv/git/repo.git")->transport == Transport::local);
  CHECK(fg::parse_remote_url("./repo")->transport == Transport::local);
  CHECK(fg::parse_remote_url("file:///srv/repo")->transport == Transport::file);
  CHECK_FALSE(fg::parse_remote_url("ftp://h/x"));
  CHECK_FALSE(fg::parse_remote_url("https://h:99999/x"));

  CHECK(*fg::normalize_subpath("") == "");
  CHECK(*fg::normalize_subpath("./a//b/") == "a/b");
  CHECK(*fg::normalize_subpath("/a/b") == "a/b");
  CHECK_FALSE(fg::normalize_subpath("../etc"));
  CHECK_FALSE(fg::normalize_subpath("a/../../b"));
  CHECK_FALSE(fg::normalize_subpath("a\\b"));

  TempDir tmp;
  fg::GitOptions options;
  options.url = tmp.str();
  options.cache_dir = tmp.str("cache");
  options.subpath = "deploy/../../outside";
  auto escaped = fg::GitSource::open(options);
  REQUIRE_FALSE(escaped);
  CHECK(escaped.error().code == ErrorCode::invalid_input);
  options.subpath = "";
  options.ref = "-bad";
  CHECK_FALSE(fg::GitSource::open(options));
  CHECK(fg::mirror_dir_name("https://github.com/org/repo.git") !=
        fg::mirror_dir_name("https://github.com/org/repo2.git"));
  CHECK(fg::mirror_dir_name("https://github.com/org/repo.git").rfind("org-repo-", 0) == 0);
}

// Issue 10.3: a symlinked document that dangles, loops or leaves the repository path refuses the
// revision, naming the link; one to a file inside the path is followed (also through a chain).
TEST_CASE("git: symlinked documents are followed inside the path, refused by name otherwise",
          "[git][symlink]") {
  Fixture fx;
  fx.write("deploy/real.yaml", "r: 1\n");
  fx.write("outside.yaml", "o: 1\n");
  const auto deploy = git_test::stdfs::path(fx.work) / "deploy";
  git_test::stdfs::create_symlink("real.yaml", deploy / "hop1.yaml");
  git_test::stdfs::create_symlink("hop1.yaml", deploy / "hop2.yaml");
  fx.commit("links");
  fx.push();
  auto options = fx.options("file://" + fx.remote);
  options.subpath = "deploy";
  auto source = open_ok(options);
  flytecd::sources::Snapshot snap = sync_ok(*source);
  CHECK(paths(snap) == std::vector<std::string>{"hop1.yaml", "hop2.yaml", "real.yaml"});
  CHECK(snap.files[1].bytes == "r: 1\n");

  auto refused = [&](const std::string& link, const std::string& target) {
    git_test::stdfs::create_symlink(target, deploy / link);
    fx.commit("bad link " + link);
    fx.push();
    auto bad = source->sync();
    git_test::stdfs::remove(deploy / link);
    fx.commit("remove " + link);
    fx.push();
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::invalid_input);
    CHECK_THAT(bad.error().message, Catch::Contains("symlink '" + link + "'"));
    return bad.error().message;
  };
  CHECK_THAT(refused("escape.yaml", "../outside.yaml"), Catch::Contains("leaves the repository"));
  CHECK_THAT(refused("abs.yaml", "/etc/passwd"), Catch::Contains("absolute"));
  CHECK_THAT(refused("dangling.yaml", "missing.yaml"), Catch::Contains("dangles"));
  CHECK_THAT(refused("self.yaml", "self.yaml"), Catch::Contains("more than 8 links"));
  CHECK_THAT(refused("dir.yaml", "."), Catch::Contains("repository root"));
  CHECK(paths(sync_ok(*source)) == std::vector<std::string>{"hop1.yaml", "hop2.yaml", "real.yaml"});
}

}  // namespace FLYTECD_UNITY_ID
