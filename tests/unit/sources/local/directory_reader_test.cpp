#include "sources/local/directory_reader.hpp"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using flytecd::sources::local::read_yaml_tree;

namespace {
struct Tree {
  fs::path root;
  fs::path outside;
  Tree() {
    std::string tmpl = (fs::temp_directory_path() / "flytecd-dir-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    outside = tmpl;
    root = outside / "repo";
    fs::create_directories(root / "projects");
    fs::create_directories(root / "shared");
    std::ofstream(root / "shared/p.yaml") << "apiVersion: flytecd/v1\nkind: Project\nid: p1\n";
    std::ofstream(outside / "secret.yaml") << "secret: 1\n";
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(outside, ec);
  }
  std::string refused(const std::string& link, const std::string& target) {
    fs::create_symlink(target, root / link);
    auto r = read_yaml_tree(root, 1 << 20);
    fs::remove(root / link);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == flytecd::ErrorCode::invalid_input);
    CHECK_THAT(r.error().message, Catch::Contains("symlink '" + link + "'"));
    return r.error().message;
  }
};
}  // namespace

// Issue 10.3: a document file replaced by a symlink was skipped ("valid: 0 files"), and apply
// archived the project it declared.
TEST_CASE("directory reader: a symlinked document inside the repository is read", "[symlink]") {
  Tree t;
  fs::create_symlink("../shared/p.yaml", t.root / "projects/p.yaml");
  fs::create_symlink("p.yaml", t.root / "projects/chain.yaml");
  auto r = read_yaml_tree(t.root, 1 << 20);
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r);
  REQUIRE(r->size() == 3);
  CHECK((*r)[0].path == "projects/chain.yaml");
  CHECK((*r)[1].path == "projects/p.yaml");
  CHECK((*r)[1].bytes.find("id: p1") != std::string::npos);
  CHECK((*r)[0].bytes == (*r)[1].bytes);
  CHECK((*r)[2].path == "shared/p.yaml");
}

TEST_CASE("directory reader: dangling, looping and escaping symlinks are errors naming the link",
          "[symlink]") {
  Tree t;
  CHECK_THAT(t.refused("projects/out.yaml", "../../secret.yaml"),
             Catch::Contains("leaves the repository path"));
  CHECK_THAT(t.refused("projects/abs.yaml", (t.outside / "secret.yaml").string()),
             Catch::Contains("absolute"));
  CHECK_THAT(t.refused("projects/gone.yaml", "nothing.yaml"), Catch::Contains("dangles"));
  CHECK_THAT(t.refused("projects/self.yaml", "self.yaml"), Catch::Contains("more than 8 links"));
  CHECK_THAT(t.refused("projects/dir.yaml", "../shared"), Catch::Contains("not a regular file"));
  // Through a symlinked directory that points outside: the final file is outside the root.
  fs::create_symlink(t.outside, t.root / "escape-dir");
  CHECK_THAT(t.refused("projects/via.yaml", "../escape-dir/secret.yaml"),
             Catch::Contains("leaves the repository path"));
}

}  // namespace FLYTECD_UNITY_ID
