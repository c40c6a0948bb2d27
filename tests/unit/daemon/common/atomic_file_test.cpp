#include "daemon/common/atomic_file.hpp"

#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "daemon/common/sqlite.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;

namespace {
unsigned mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

struct Umask {
  explicit Umask(mode_t m) : old(::umask(m)) {}
  ~Umask() { ::umask(old); }
  mode_t old;
};
}  // namespace

// Issue 27.9: state files were 0644 under umask 022 (only the lock was 0600).
TEST_CASE("state files: the directory is created 0700 and its files 0600 whatever the umask",
          "[state][mode]") {
  for (mode_t mask : {mode_t{022}, mode_t{0}, mode_t{077}}) {
    Umask u(mask);
    std::string tmpl = (fs::temp_directory_path() / "flytecd-mode-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    const fs::path state = fs::path(tmpl) / "nested" / "state";
    REQUIRE(flytecd::create_private_directory(state, "state directory"));
    CHECK(mode_of(state) == 0700);
    REQUIRE(flytecd::create_private_directory(state, "state directory"));  // idempotent

    REQUIRE(flytecd::write_file_atomically(state / "applied-revision.json", "{}\n", "record"));
    CHECK(mode_of(state / "applied-revision.json") == 0600);
    // A directory write_file_atomically has to create is private too.
    REQUIRE(flytecd::write_file_atomically(state / "sub" / "f.json", "{}", "record"));
    CHECK(mode_of(state / "sub") == 0700);
    CHECK(mode_of(state / "sub" / "f.json") == 0600);

    {
      auto db = flytecd::sqlite::Database::open((state / "ledger.db").string(), "test");
      REQUIRE(db);
      REQUIRE((*db)->exec("CREATE TABLE t(x); INSERT INTO t VALUES (1)", "write"));
      CHECK(mode_of(state / "ledger.db") == 0600);
      // WAL mode: SQLite gives -wal and -shm the database's mode.
      REQUIRE(fs::exists(state / "ledger.db-wal"));
      CHECK(mode_of(state / "ledger.db-wal") == 0600);
      CHECK(mode_of(state / "ledger.db-shm") == 0600);
    }
    fs::remove_all(tmpl);
  }
}

// `plan --state-dir ps` (relative, not yet there) failed "cannot create : No such file or
// directory": the error of the is_directory probe was taken for create_directories' error.
TEST_CASE("state files: a relative state directory that does not exist yet is created",
          "[state][mode]") {
  std::string tmpl = (fs::temp_directory_path() / "flytecd-rel-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const auto cwd = fs::current_path();
  fs::current_path(tmpl);
  auto made = flytecd::create_private_directory("ps", "state directory");
  fs::current_path(cwd);
  INFO((made ? std::string() : made.error().message));
  CHECK(made);
  CHECK(fs::is_directory(fs::path(tmpl) / "ps"));
  fs::remove_all(tmpl);
}

}  // namespace FLYTECD_UNITY_ID
