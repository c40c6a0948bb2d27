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

// The reference: every file parsed in order against one node budget, as a load did before files
// were parsed on every core.
LoadResult one_after_the_other(const std::vector<SourceFile>& files, const Limits& limits) {
  LoadResult r;
  NodeBudget budget;
  for (const auto& f : files) {
    r.documents.document_count +=
        parse_file(f, limits, Policy{}, r.documents, r.diagnostics, &budget);
    ++r.documents.file_count;
  }
  check_documents(r.documents, limits, r.diagnostics);
  sort_diagnostics(r.diagnostics);
  return r;
}

TEST_CASE("load: files parsed on every core give the result of one after the other",
          "[loader][memory]") {
  // 300 files (enough to be parsed ahead in parallel): errors here and there, one file larger
  // than the whole budget, and the budget running out two thirds of the way.
  std::vector<SourceFile> files;
  for (int i = 0; i < 300; ++i) {
    std::string id = "p" + std::to_string(i);
    std::string body = "apiVersion: flytecd/v1\nkind: Project\nid: " + id + "\n";
    if (i % 37 == 5) body += "colour: blue\n";  // an unknown field
    if (i == 50) {
      body += "labels:\n";
      for (int l = 0; l < 400; ++l) body += "  k" + std::to_string(l) + ": v\n";
    }
    files.push_back(file("f" + std::to_string(1000 + i) + ".yaml", body));
  }
  Limits limits;
  limits.max_nodes_per_revision = 2200;  // runs out after some 200 files
  auto text = [](const LoadResult& r) {
    std::vector<std::string> out;
    for (const auto& d : r.diagnostics) out.push_back(format(d));
    for (const auto& p : r.documents.projects) out.push_back(p.id + " @" + to_string(p.where));
    out.push_back(std::to_string(r.documents.document_count) + " documents, " +
                  std::to_string(r.documents.rejected_documents) + " rejected");
    return out;
  };
  const auto reference = one_after_the_other(files, limits);
  CHECK(has_errors(reference.diagnostics));
  CHECK(reference.documents.projects.size() > 100);
  CHECK(reference.documents.projects.size() < 290);
  CHECK(text(load_documents(files, limits, Policy{})) == text(reference));
  // With blob ids, then again with a third of them changed: the same answer each time.
  IncrementalLoader loader(limits, Policy{});
  std::vector<std::string> ids;
  for (size_t i = 0; i < files.size(); ++i) ids.push_back("b" + std::to_string(i));
  CHECK(text(loader.load(files, ids)) == text(reference));
  CHECK(loader.parsed_last() == files.size());
  for (size_t i = 0; i < files.size(); i += 3) {
    files[i] = file(files[i].path,
                    "apiVersion: flytecd/v1\nkind: Project\nid: q" + std::to_string(i) + "\n");
    ids[i] += "'";
  }
  CHECK(text(loader.load(files, ids)) == text(one_after_the_other(files, limits)));
}

// plan --git loads two revisions and parts of them: with keep_all a file parsed for one load is
// not parsed again for another that does not include the files between (the default keeps only
// the last load's files, bounding a daemon's memory). last_files() names each file of the load.
TEST_CASE("incremental: keep_all keeps files across loads, and last_files describes the last load",
          "[loader]") {
  const std::vector<SourceFile> a = {
      file("a.yaml", "apiVersion: flytecd/v1\nkind: Project\nid: a\n")};
  const std::vector<SourceFile> b = {
      file("b.yaml", "apiVersion: flytecd/v1\nkind: Project\nid: b\n")};
  for (bool keep : {false, true}) {
    IncrementalLoader loader(Limits{}, Policy{});
    loader.keep_all(keep);
    loader.load(a, {"1"});
    loader.load(b, {"2"});
    REQUIRE(loader.last_files().size() == 1);
    CHECK(loader.last_files()[0].path == "b.yaml");
    CHECK(loader.last_files()[0].documents == 1);
    CHECK(loader.last_files()[0].nodes > 0);
    loader.load(a, {"1"});
    CHECK(loader.parsed_last() == (keep ? 0u : 1u));
  }
}

// A command that loads once keeps nothing: the documents are moved into the result, the same
// result, and loading the same files again parses them again.
TEST_CASE("incremental: keep_none moves every file into the result and caches nothing",
          "[loader]") {
  const std::vector<SourceFile> files = {
      file("a.yaml", "apiVersion: flytecd/v1\nkind: Project\nid: a\n"),
      file("b.yaml", "apiVersion: flytecd/v1\nkind: Project\nid: b\n")};
  auto text = [](const LoadResult& r) {
    std::vector<std::string> out;
    for (const auto& p : r.documents.projects) out.push_back(p.id + " @" + to_string(p.where));
    out.push_back(std::to_string(r.documents.document_count) + " documents");
    return out;
  };
  IncrementalLoader cached(Limits{}, Policy{});
  IncrementalLoader once(Limits{}, Policy{});
  once.keep_none(true);
  const auto want = text(cached.load(files, {"1", "2"}));
  CHECK(text(once.load(files, {"1", "2"})) == want);
  CHECK(text(once.load(files, {"1", "2"})) == want);
  CHECK(once.parsed_last() == 2);
  cached.load(files, {"1", "2"});
  CHECK(cached.parsed_last() == 0);
}

}  // namespace FLYTECD_UNITY_ID
