// Runs the malformed-input corpus (tests/corpus/bad/*): each case directory must be rejected,
// with every diagnostic its `expect` file lists (kind, file, line).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/model/loader.hpp"
#include "sources/local/directory_reader.hpp"
#include "test_paths.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace fs = std::filesystem;

namespace {
struct Expectation {
  std::string kind, file;
  int line = 0;
};

std::vector<Expectation> read_expect(const fs::path& p) {
  std::vector<Expectation> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string kind, where;
    ss >> kind >> where;
    auto colon = where.rfind(':');
    out.push_back({kind, where.substr(0, colon), std::stoi(where.substr(colon + 1))});
  }
  return out;
}

void check_case(const fs::path& dir, const std::vector<Expectation>& expected) {
  model::Limits limits;
  auto files = sources::local::read_yaml_tree(dir, limits.max_file_bytes);
  REQUIRE(files.ok());
  auto r = model::load_documents(*files, limits, model::Policy{});
  std::string all;
  for (const auto& d : r.diagnostics) all += model::format(d) + "\n";
  INFO("case " << dir.filename().string() << " reported:\n" << all);
  CHECK_FALSE(r.ok());
  REQUIRE_FALSE(expected.empty());
  for (const auto& e : expected) {
    bool found = false;
    for (const auto& d : r.diagnostics)
      found |= d.severity == model::Severity::error &&
               std::string(model::to_string(d.kind)) == e.kind && d.where.file == e.file &&
               d.where.line == e.line;
    INFO("expected " << e.kind << " at " << e.file << ":" << e.line);
    CHECK(found);
  }
}
}  // namespace

TEST_CASE("corpus: every malformed repository is rejected with the expected file, line and kind",
          "[corpus]") {
  fs::path root = fs::path(FLYTECD_SOURCE_DIR) / "tests/corpus/bad";
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory()) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  CHECK(cases.size() >= 40);
  for (const auto& dir : cases) {
    SECTION(dir.filename().string()) { check_case(dir, read_expect(dir / "expect")); }
  }
}

TEST_CASE("corpus: a 50 MB file is rejected from its size, on disk and in memory", "[corpus]") {
  fs::path dir = fs::temp_directory_path() / ("flytecd-big-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "big.yaml", std::ios::binary);
    out << "apiVersion: flytecd/v1\nkind: Project\nid: big\n";
    std::string pad(1 << 20, '#');
    pad.back() = '\n';
    for (int i = 0; i < 50; ++i) out << pad;
  }
  CHECK(fs::file_size(dir / "big.yaml") > 50u * 1000 * 1000);
  check_case(dir, {{"file_too_large", "big.yaml", 0}});
  // The loader also refuses oversized bytes handed to it directly (e.g. from a Git blob).
  model::SourceFile f;
  f.path = "big.yaml";
  f.bytes.assign(50u << 20, '#');
  f.size = f.bytes.size();
  model::Documents docs;
  model::Diagnostics diags;
  model::parse_file(f, model::Limits{}, model::Policy{}, docs, diags);
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].kind == model::DiagKind::file_too_large);
  fs::remove_all(dir);
}

}  // namespace FLYTECD_UNITY_ID
