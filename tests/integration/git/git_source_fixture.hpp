#pragma once

// The Git source tests' repository: a working tree whose branch main is pushed to a bare
// remote, with the cache a GitSource mirrors into, and the seed content most tests start from.

#include <chrono>
#include <string>
#include <vector>

#include "sources/git/git_source.hpp"
#include "tests/integration/git/git_source_checks.hpp"
#include "tests/integration/git/git_test_support.hpp"

namespace git_test {

// A working repository `work` whose branch main is pushed to the bare `remote.git`.
struct Fixture : WorkAndRemote {
  std::string cache = tmp.str("cache");

  void write(const std::string& path, const std::string& text) {
    spit(stdfs::path(work) / path, text);
  }
  std::string commit(const std::string& message, const std::vector<std::string>& config = {}) {
    git(home, work, {"add", "-A"});
    git(home, work, {"commit", "-q", "--allow-empty", "-m", message}, config);
    return git(home, work, {"rev-parse", "HEAD"});
  }
  void push(bool force = false) {
    std::vector<std::string> args = {"push", "-q"};
    if (force) args.push_back("--force");
    args.insert(args.end(), {remote, "main:main"});
    git(home, work, args);
  }
  std::string blob(const std::string& rev_path) { return git(home, work, {"rev-parse", rev_path}); }
  flytecd::sources::git::GitOptions options(const std::string& url) const {
    return git_options(url, cache);
  }
};

inline std::vector<std::string> paths(const flytecd::sources::Snapshot& snap) {
  std::vector<std::string> out;
  for (const auto& f : snap.files) out.push_back(f.path);
  return out;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Writes the common starting content: YAML under deploy/, plus everything that must be skipped.
inline std::string seed(Fixture& fx) {
  fx.write("top.yaml", "kind: Project\n");
  fx.write("deploy/a.yaml", "a: 1\n");
  fx.write("deploy/sub/b.yml", "b: 2\n");
  fx.write("deploy/readme.md", "not yaml\n");
  fx.write("deploy/.github/ci.yaml", "skipped: dot-directory\n");
  fx.write("deploy/big.yaml", std::string(300, '#') + "\n");
  stdfs::create_symlink("a.yaml", stdfs::path(fx.work) / "deploy/link.yaml");
  fx.commit("seed");
  // A submodule entry (gitlink) named like a YAML file: listed by Git, skipped by flytecd.
  std::string self = git(fx.home, fx.work, {"rev-parse", "HEAD"});
  git(fx.home, fx.work,
      {"update-index", "--add", "--cacheinfo", "160000," + self + ",deploy/module.yaml"});
  git(fx.home, fx.work, {"commit", "-q", "-m", "add submodule"});
  fx.push();
  return git(fx.home, fx.work, {"rev-parse", "HEAD"});
}

}  // namespace git_test
