// The commands read their revision through the same source factory as the daemon.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/cli/commands.hpp"
#include "daemon/wiring/wiring.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using flytecd::config::Config;

TEST_CASE("load_valid: a directory is named by its content, as the daemon's source names it",
          "[cli]") {
  const fs::path dir = fs::temp_directory_path() / "flytecd-load-revision";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "p.yaml") << "apiVersion: flytecd/v1\nkind: Project\nid: p\nname: p\n";
  Config cfg;
  cfg.repo = dir.string();
  std::ostringstream err;
  auto rec = flytecd::wiring::Reconciler::open(cfg);
  REQUIRE(rec);
  auto rev = flytecd::cli::load_valid(**rec, "", err);
  REQUIRE(rev);
  auto source = flytecd::wiring::make_source(cfg);
  REQUIRE(source);
  auto snap = (*source)->sync();
  REQUIRE(snap);
  CHECK(rev->revision == snap->revision);
  CHECK(rev->revision.rfind("dir:", 0) == 0);
  CHECK(rev->revision.find(dir.string()) == std::string::npos);  // content, not the path
  CHECK((*rec)->describe_source() == (*source)->describe());     // one source for documents and
                                                                 // repository-path packages
  CHECK(rev->docs.projects.size() == 1);

  // Another content is another revision; a revision id needs a Git source.
  std::ofstream(dir / "p.yaml") << "apiVersion: flytecd/v1\nkind: Project\nid: p\nname: q\n";
  auto changed = flytecd::cli::load_valid(**rec, "", err);
  REQUIRE(changed);
  CHECK(changed->revision != rev->revision);
  CHECK(changed->files_parsed == 1);
  auto at = flytecd::cli::load_valid(**rec, "abc123", err);
  REQUIRE_FALSE(at);
  CHECK(at.error().message.find("needs a Git source") != std::string::npos);
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
