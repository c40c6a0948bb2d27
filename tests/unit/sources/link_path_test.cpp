#include "sources/link_path.hpp"

#include <catch2/catch.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::sources::resolve_link;

TEST_CASE("link path: targets resolve against the link's directory inside the repository",
          "[symlink]") {
  CHECK(resolve_link("a.yaml", "b.yaml").value() == "b.yaml");
  CHECK(resolve_link("projects/a.yaml", "../shared/p.yaml").value() == "shared/p.yaml");
  CHECK(resolve_link("projects/a.yaml", "./x/./y.yaml").value() == "projects/x/y.yaml");
  CHECK(resolve_link("a/b/c.yaml", "../../d.yaml").value() == "d.yaml");
  CHECK(resolve_link("a//b.yaml", "c.yaml").value() == "a/c.yaml");
}

TEST_CASE("link path: absolute, empty and escaping targets are refused, naming the link",
          "[symlink]") {
  auto abs = resolve_link("p.yaml", "/etc/passwd");
  REQUIRE_FALSE(abs);
  CHECK_THAT(abs.error().message, Catch::Contains("symlink 'p.yaml' -> '/etc/passwd' is absolute"));
  CHECK_FALSE(resolve_link("p.yaml", ""));
  auto up = resolve_link("a/p.yaml", "../../x.yaml");
  REQUIRE_FALSE(up);
  CHECK_THAT(up.error().message, Catch::Contains("leaves the repository path"));
  CHECK_FALSE(resolve_link("a/p.yaml", "../a/../../x.yaml"));
  CHECK_FALSE(resolve_link("p.yaml", "."));
}

}  // namespace FLYTECD_UNITY_ID
