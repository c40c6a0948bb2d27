#include "daemon/model/file_facts.hpp"

#include <catch2/catch.hpp>

#include "daemon/model/incremental.hpp"
#include "tests/unit/daemon/model/test_util.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::model;
using flytecd::test::file;

namespace {

std::string project(const std::string& id) {
  return "apiVersion: flytecd/v1\nkind: Project\nid: " + id + "\nname: " + id + "\n";
}
std::string override_of(const std::string& p, int parallelism) {
  return "apiVersion: flytecd/v1\nkind: Overrides\nproject: " + p +
         "\ndomain: development\nspec:\n  workflowExecutionConfig:\n    maxParallelism: " +
         std::to_string(parallelism) + "\n";
}
std::string registration(const std::string& name, const std::string& p,
                         const std::string& package) {
  return "apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata: {name: " + name +
         "}\nproject: " + p + "\ndomain: development\nversion: v1\npackage: " + package + "\n";
}
const std::string k_defaults =
    "apiVersion: flytecd/v1\nkind: PlatformDefaults\nspec:\n  workflowExecutionConfig:\n"
    "    maxParallelism: 3\n";

// The facts of each file of one load of `files`.
std::map<std::string, FileFacts> load_facts(const std::vector<SourceFile>& files) {
  IncrementalLoader loader(Limits{}, Policy{});
  auto r = loader.load(files, {});
  return facts_of(loader.last_files(), r.documents, r.diagnostics);
}

}  // namespace

TEST_CASE("file facts: projects, registration names, what is in no project, errors",
          "[review-files]") {
  auto f = load_facts({
      file("a.yaml", project("a") + "---\n" + override_of("a", 4) + "---\n" + override_of("b", 5)),
      file("r.yaml", registration("r1", "c", "oci://registry.example/p:v1") + "---\n" +
                         registration("r2", "d", "packages/p.tgz")),
      file("platform.yaml", k_defaults),
      file("bad.yaml", override_of("e", 4) + "---\n" + override_of("e", 5)),
      file("empty.yaml", ""),
  });
  REQUIRE(f.size() == 5);
  CHECK(f["a.yaml"].projects == std::set<std::string>{"a", "b"});
  CHECK(f["a.yaml"].documents == 3);
  CHECK(f["a.yaml"].nodes > 0);
  CHECK_FALSE(f["a.yaml"].global);
  CHECK_FALSE(f["a.yaml"].errors);
  CHECK(f["r.yaml"].projects == std::set<std::string>{"c", "d"});
  CHECK(f["r.yaml"].registrations == std::set<std::string>{"r1", "r2"});
  CHECK(f["r.yaml"].reads_repository);  // packages/p.tgz is a file of the repository
  CHECK(f["platform.yaml"].global);
  CHECK(f["bad.yaml"].errors);  // the same scope and type twice
  CHECK(f["empty.yaml"].projects.empty());
}

TEST_CASE("file facts: the index keeps facts by path and content id, across runs of one parser",
          "[review-files]") {
  FileIndex index("parser-1");
  FileFacts facts;
  facts.projects = {"a", "b\xff"};  // names from documents can hold any bytes
  facts.registrations = {"r"};
  facts.documents = 3;
  facts.nodes = 40;
  facts.reads_repository = true;
  index.put("a.yaml", "blob-1", facts);
  index.put("b.yaml", "", facts);  // no content id: nothing to find it by
  CHECK(index.size() == 1);
  auto again = FileIndex::from_json(index.to_json(), "parser-1");
  REQUIRE(again.find("a.yaml", "blob-1"));
  CHECK(again.find("a.yaml", "blob-1")->registrations == facts.registrations);
  CHECK(again.find("a.yaml", "blob-1")->documents == 3);
  CHECK(again.find("a.yaml", "blob-1")->reads_repository);
  CHECK(again.find("a.yaml", "blob-1")->projects.count("a"));
  CHECK_FALSE(again.find("a.yaml", "blob-2"));
  // Another build (or loader policy) starts empty; so does a damaged file.
  CHECK(FileIndex::from_json(index.to_json(), "parser-2").size() == 0);
  CHECK(FileIndex::from_json("{\"parser\":\"parser-1\",\"files\":[{\"path\":1}]}", "parser-1")
            .size() == 0);
  CHECK(FileIndex::from_json("not json", "parser-1").size() == 0);
  // keep_only: the entries of the revisions named.
  index.put("gone.yaml", "blob-9", facts);
  const std::map<std::string, std::string> rev{{"a.yaml", "blob-1"}};
  index.keep_only({&rev});
  CHECK(index.size() == 1);
}

TEST_CASE("file facts: a change parses the files that differ and those of the projects they touch",
          "[review-files]") {
  const std::map<std::string, std::string> base{
      {"a.yaml", "1"}, {"b.yaml", "2"}, {"c.yaml", "3"}, {"platform.yaml", "4"}, {"r.yaml", "5"}};
  auto head = base;
  head["a.yaml"] = "1b";   // changed: touches a (and b, named in it before)
  head["new.yaml"] = "6";  // added: touches n
  head.erase("c.yaml");    // removed: touches c
  FileIndex index("p");
  auto facts = [](std::set<std::string> projects) {
    FileFacts f;
    f.projects = std::move(projects);
    f.documents = 1;
    return f;
  };
  index.put("b.yaml", "2", facts({"b", "x"}));
  index.put("c.yaml", "3", facts({"c"}));
  FileFacts defaults;
  defaults.global = true;
  index.put("platform.yaml", "4", defaults);
  FileFacts repo_reg = facts({"y"});
  repo_reg.reads_repository = true;
  index.put("r.yaml", "5", repo_reg);
  const std::map<std::string, FileFacts> base_changed{{"a.yaml", facts({"a", "b"})},
                                                      {"c.yaml", facts({"c"})}};
  const std::map<std::string, FileFacts> head_changed{{"a.yaml", facts({"a"})},
                                                      {"new.yaml", facts({"n"})}};

  SECTION("partial") {
    auto pick = select_review_files(base, head, base_changed, head_changed, index, 100, 1000);
    INFO(pick.why);
    REQUIRE_FALSE(pick.whole);
    CHECK(pick.projects == std::set<std::string>{"a", "b", "c", "n", "y"});
    CHECK(pick.base ==
          std::set<std::string>{"a.yaml", "b.yaml", "c.yaml", "platform.yaml", "r.yaml"});
    CHECK(pick.head ==
          std::set<std::string>{"a.yaml", "b.yaml", "new.yaml", "platform.yaml", "r.yaml"});
  }
  SECTION("a file the same in both without facts: whole") {
    FileIndex empty("p");
    auto pick = select_review_files(base, head, base_changed, head_changed, empty, 100, 1000);
    CHECK(pick.whole);
    CHECK(pick.why.find("no facts kept for b.yaml") != std::string::npos);
  }
  SECTION("platform defaults changed: whole") {
    auto h = head;
    h["platform.yaml"] = "4b";
    auto hc = head_changed;
    hc["platform.yaml"] = defaults;
    auto bc = base_changed;
    bc["platform.yaml"] = defaults;
    auto pick = select_review_files(base, h, bc, hc, index, 100, 1000);
    CHECK(pick.whole);
    CHECK(pick.why.find("platform.yaml") != std::string::npos);
  }
  SECTION("an unchanged file with an error: whole") {
    auto bad = facts({"b"});
    bad.errors = true;
    index.put("b.yaml", "2", bad);
    CHECK(select_review_files(base, head, base_changed, head_changed, index, 100, 1000).whole);
  }
  SECTION("a registration name in two files of the head: whole") {
    auto hc = head_changed;
    hc["new.yaml"].registrations = {"r1"};
    auto other = repo_reg;
    other.registrations = {"r1"};
    index.put("r.yaml", "5", other);
    auto pick = select_review_files(base, head, base_changed, hc, index, 100, 1000);
    CHECK(pick.whole);
    CHECK(pick.why.find("registration names") != std::string::npos);
  }
  SECTION("the revision's bounds: whole") {
    CHECK(select_review_files(base, head, base_changed, head_changed, index, 3, 1000).whole);
    auto big = facts({"b"});
    big.nodes = 2000;
    index.put("b.yaml", "2", big);
    CHECK(select_review_files(base, head, base_changed, head_changed, index, 100, 1000).whole);
  }
}

}  // namespace FLYTECD_UNITY_ID
