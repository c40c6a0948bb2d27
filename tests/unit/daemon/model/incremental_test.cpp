#include <catch2/catch.hpp>

#include "daemon/model/incremental.hpp"
#include "tests/unit/daemon/model/test_util.hpp"

using namespace flytecd::model;
using flytecd::test::file;

TEST_CASE("incremental: only files whose blob id changed are parsed again", "[loader]") {
  IncrementalLoader loader(Limits{}, Policy{});
  std::vector<SourceFile> files = {
      file("a.yaml", "apiVersion: flytecd/v1\nkind: Project\nid: a\n"),
      file("b.yaml", "apiVersion: flytecd/v1\nkind: Project\nid: b\n"),
  };
  auto r1 = loader.load(files, {"1", "2"});
  CHECK(r1.ok());
  CHECK(loader.parsed_last() == 2);
  files[1] = file("b.yaml", "apiVersion: flytecd/v1\nkind: Project\nid: a\n");
  auto r2 = loader.load(files, {"1", "3"});
  CHECK(loader.parsed_last() == 1);
  // Cross-file checks still see the whole revision: the duplicate is found.
  CHECK_FALSE(r2.ok());
  auto r3 = loader.load(files, {"1", "3"});
  CHECK(loader.parsed_last() == 0);
  CHECK(r3.diagnostics.size() == r2.diagnostics.size());
  CHECK(r3.documents.projects.size() == 2);
}
