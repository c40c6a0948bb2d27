#include "daemon/cli/commands/import_flytectl.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using flytecd::cli::ImportFlytectlOptions;
using flytecd::cli::run_import_flytectl;

namespace {

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("flytecd-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("import --from-flytectl: writes the layout, an invalid file writes nothing",
          "[flytectl][cli]") {
  TempDir tmp("import-flytectl");
  ImportFlytectlOptions opt;
  opt.out_dir = (tmp.path / "out").string();
  opt.files = {tmp.write("eq.yaml", "project: p\ndomain: development\ntags: [a]\n"),
               tmp.write("bad.yaml", "project: p\ndomain: development\nvalu: x\n")};
  std::ostringstream out, err;
  CHECK(run_import_flytectl(opt, out, err) == 1);
  CHECK_THAT(err.str(), Catch::Contains("bad.yaml:3:1: error[unknown_field]: valu"));
  CHECK_THAT(err.str(), Catch::Contains("nothing written"));
  CHECK_FALSE(fs::exists(tmp.path / "out"));

  opt.skip_invalid = true;
  std::ostringstream out2, err2;
  CHECK(run_import_flytectl(opt, out2, err2) == 0);
  const auto written = tmp.path / "out/projects/p/development.yaml";
  REQUIRE(fs::exists(written));
  CHECK_THAT(read(written), Catch::Contains("executionQueueAttributes:"));
  CHECK_THAT(out2.str(), Catch::Contains("1 invalid, left out"));

  // A second run never overwrites what is there.
  std::ofstream(written) << "# reviewed by hand\n";
  std::ostringstream out3, err3;
  CHECK(run_import_flytectl(opt, out3, err3) == 1);
  CHECK_THAT(err3.str(), Catch::Contains("already exists"));
  CHECK(read(written) == "# reviewed by hand\n");
}

TEST_CASE("import --from-flytectl: --type forces the type, an unknown --type is refused",
          "[flytectl][cli]") {
  TempDir tmp("import-flytectl-type");
  ImportFlytectlOptions opt;
  opt.out_dir = (tmp.path / "out").string();
  opt.files = {tmp.write("empty.yaml", "project: p\ndomain: staging\n")};
  std::ostringstream out, err;
  CHECK(run_import_flytectl(opt, out, err) == 1);
  CHECK_THAT(err.str(), Catch::Contains("cannot be inferred"));

  opt.type = "execution-cluster-label";
  std::ostringstream out2, err2;
  CHECK(run_import_flytectl(opt, out2, err2) == 0);
  CHECK_THAT(read(tmp.path / "out/projects/p/staging.yaml"),
             Catch::Contains("executionClusterLabel: {}"));

  opt.type = "quality-of-service";
  std::ostringstream out3, err3;
  CHECK(run_import_flytectl(opt, out3, err3) == 1);
  CHECK_THAT(err3.str(), Catch::Contains("unknown --type"));

  opt.type = "";
  opt.files = {(tmp.path / "missing.yaml").string()};
  std::ostringstream out4, err4;
  CHECK(run_import_flytectl(opt, out4, err4) == 1);
  CHECK_THAT(err4.str(), Catch::Contains("cannot read"));
}

}  // namespace FLYTECD_UNITY_ID
