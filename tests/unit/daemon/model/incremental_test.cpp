#include <catch2/catch.hpp>

#include "daemon/model/incremental.hpp"
#include "tests/unit/daemon/model/test_util.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

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

TEST_CASE("incremental: the revision's node budget gives the result a full load gives",
          "[loader][memory]") {
  Limits limits;
  limits.max_nodes_per_revision = 20;  // a Project document here is 7 nodes
  IncrementalLoader loader(limits, Policy{});
  auto project = [](const std::string& id) {
    return "apiVersion: flytecd/v1\nkind: Project\nid: " + id + "\n";
  };
  std::vector<SourceFile> files = {file("a.yaml", project("a")), file("b.yaml", project("b")),
                                   file("c.yaml", project("c")), file("d.yaml", project("d"))};
  auto kinds = [](const LoadResult& r) {
    std::vector<std::string> out;
    for (const auto& d : r.diagnostics)
      out.push_back(std::string(to_string(d.kind)) + " " + to_string(d.where));
    return out;
  };
  auto full = load_documents(files, limits, Policy{});
  auto first = loader.load(files, {"1", "2", "3", "4"});
  CHECK(kinds(first) == kinds(full));
  CHECK(kinds(full) == std::vector<std::string>{"too_many_nodes c.yaml:3:5"});
  CHECK(full.documents.projects.size() == 2);
  // a.yaml shrinks: c.yaml now fits and d.yaml spends the budget; the cached c.yaml and d.yaml
  // results (refused, not read) must not be reused.
  files[0] = file("a.yaml", "# empty\n");
  full = load_documents(files, limits, Policy{});
  auto second = loader.load(files, {"5", "2", "3", "4"});
  CHECK(kinds(second) == kinds(full));
  CHECK(kinds(full) == std::vector<std::string>{"too_many_nodes d.yaml:3:5"});
  CHECK(second.documents.projects.size() == 2);
  auto third = loader.load(files, {"5", "2", "3", "4"});
  CHECK(kinds(third) == kinds(full));
}

}  // namespace FLYTECD_UNITY_ID
