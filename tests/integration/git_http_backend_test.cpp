// The Git source against `git http-backend` behind a real web server from Debian: lighttpd with
// mod_cgi, mod_alias, mod_setenv and mod_auth (Basic, plain user file), started on a free loopback
// port as the current user with a configuration in a temporary directory.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sources/git/git_source.hpp"
#include "tests/integration/git/git_source_checks.hpp"
#include "tests/integration/git/git_test_support.hpp"
#include "tests/integration/git/lighttpd_git.hpp"
#include "tests/support/tools.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace {

namespace fg = flytecd::sources::git;
using flytecd::ErrorCode;
using namespace git_test;

struct Repo {
  TempDir tmp;
  std::string home = tmp.str("home");
  std::string work = tmp.str("work");
  std::string served = tmp.str("served");  // GIT_PROJECT_ROOT
  std::string remote = tmp.str("served/remote.git");

  Repo() {
    git_test::stdfs::create_directories(home);
    git_test::stdfs::create_directories(served);
    git(home, tmp.str(), {"init", "-q", "-b", "main", work});
    git(home, tmp.str(), {"init", "-q", "--bare", "-b", "main", remote});
  }
  std::string commit_and_push(const std::string& path, const std::string& text,
                              const std::string& message) {
    spit(git_test::stdfs::path(work) / path, text);
    git(home, work, {"add", "-A"});
    git(home, work, {"commit", "-q", "-m", message});
    git(home, work, {"push", "-q", remote, "main:main"});
    return git(home, work, {"rev-parse", "HEAD"});
  }
  fg::GitOptions options(const std::string& url, const std::string& cache) const {
    auto o = git_test::git_options(url, tmp.str(cache), 20);
    o.subpath = "deploy";
    return o;
  }
};

}  // namespace

TEST_CASE("git: git http-backend behind lighttpd (CGI, Basic auth) is cloned, polled and followed",
          "[git][integration]") {
  FLYTECD_REQUIRE_LIGHTTPD();
  Repo repo;
  const std::string password = "Pa55-lighttpd-SECRET-1";
  const std::string wrong = "Wr0ng-lighttpd-SECRET-2";
  spit(repo.tmp.path() / "www-conf/users", "flytecd:" + password + "\n");
  spit(repo.tmp.path() / "secrets/password", password + "\n");
  spit(repo.tmp.path() / "secrets/wrong", wrong + "\n");
  const std::string first = repo.commit_and_push("deploy/a.yaml", "a: 1\n", "first");

  git_test::LighttpdGit server(repo.served, repo.home, repo.tmp.str("www-conf"),
                               repo.tmp.str("www-conf/users"));
  const bool started = server.start();
  INFO("lighttpd log: " << server.log());
  REQUIRE(started);

  SECTION("anonymous clone and poll; a pushed commit is picked up by the next sync") {
    auto source = open_ok(repo.options(server.url("remote.git"), "cache-anon"));
    CHECK(head_ok(*source) == first);
    flytecd::sources::Snapshot snap = sync_ok(*source);
    CHECK(snap.revision == first);
    REQUIRE(snap.files.size() == 1);
    CHECK(snap.files[0].bytes == "a: 1\n");
    // An unmoved head: the poll answers the same commit, the sync the same snapshot.
    CHECK(*source->head() == first);
    CHECK(sync_ok(*source).revision == first);

    const std::string second = repo.commit_and_push("deploy/b.yaml", "b: 2\n", "second");
    CHECK(*source->head() == second);
    snap = sync_ok(*source);
    CHECK(snap.revision == second);
    CHECK(snap.files.size() == 2);
  }
  SECTION("Basic auth with the password read from a file syncs and follows new commits") {
    auto options = repo.options(server.url("remote.git", true), "cache-auth");
    options.auth.username = "flytecd";
    options.auth.password_file = repo.tmp.str("secrets/password");
    auto source = open_ok(options);
    CHECK(sync_ok(*source).revision == first);
    const std::string second = repo.commit_and_push("deploy/a.yaml", "a: 2\n", "second");
    flytecd::sources::Snapshot snap = sync_ok(*source);
    CHECK(snap.revision == second);
    REQUIRE(snap.files.size() == 1);
    CHECK(snap.files[0].bytes == "a: 2\n");
  }
  SECTION("a wrong password is unauthenticated with a clear message and no secret in it") {
    auto options = repo.options(server.url("remote.git", true), "cache-wrong");
    options.auth.username = "flytecd";
    options.auth.password_file = repo.tmp.str("secrets/wrong");
    auto source = open_ok(options);
    auto head = source->head();
    REQUIRE_FALSE(head);
    CHECK(head.error().code == ErrorCode::unauthenticated);
    CHECK_THAT(head.error().message, Catch::Contains("rejected the configured credentials"));
    CHECK_FALSE(head.error().retryable());
    for (const auto& secret : {wrong, password, std::string("SECRET")})
      CHECK(head.error().message.find(secret) == std::string::npos);
    auto synced = source->sync();
    REQUIRE_FALSE(synced);
    CHECK(synced.error().code == ErrorCode::unauthenticated);
    CHECK(synced.error().message.find("SECRET") == std::string::npos);
  }
  SECTION("the authenticated prefix without credentials is unauthenticated") {
    auto head = open_ok(repo.options(server.url("remote.git", true), "cache-none"))->head();
    REQUIRE_FALSE(head);
    CHECK(head.error().code == ErrorCode::unauthenticated);
  }
}

}  // namespace FLYTECD_UNITY_ID
