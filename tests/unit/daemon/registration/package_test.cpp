// Reading pyflyte package archives: entity counts, fast source, hostile and malformed archives,
// bounds.

#include <catch2/catch.hpp>

#include "tests/unit/daemon/registration/package_test_support.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::registration;
using namespace package_test;

TEST_CASE("package: the four valid pyflyte archives have flytekit's entity counts",
          "[registration]") {
  struct Case {
    const char* file;
    size_t tasks, workflows, launch_plans;
    bool fast;
  };
  for (const Case& c :
       {Case{"valid-register.tgz", 2, 1, 1, false}, Case{"flyte-package.tgz", 1, 1, 1, true},
        Case{"flytesnacks-core.tgz", 39, 21, 24, true},
        Case{"valid-fast-register.tgz", 44, 27, 30, true}}) {
    INFO(c.file);
    auto pkg = read_package(read_fixture(c.file), c.file);
    REQUIRE(pkg.ok());
    CHECK(pkg->count(EntityKind::task) == c.tasks);
    CHECK(pkg->count(EntityKind::workflow) == c.workflows);
    CHECK(pkg->count(EntityKind::launch_plan) == c.launch_plans);
    CHECK(pkg->has_fast_source() == c.fast);
    CHECK((pkg->fast_source_size == 0) == !c.fast);
    for (size_t i = 1; i < pkg->entities.size(); ++i) {
      CHECK(pkg->entities[i - 1].file < pkg->entities[i].file);
    }
  }
}

TEST_CASE("package: fast source is decompressed and hashed like flytectl", "[registration]") {
  auto pkg = read_package(read_fixture("flytesnacks-core.tgz"), "flytesnacks-core.tgz");
  REQUIRE(pkg.ok());
  CHECK(pkg->fast_source_name == "fasted4a62b5c4359e9aed745fa1197a9ea0.tar.gz");
  CHECK(md5_hex(pkg->fast_source_md5) == "aa0c31cca94b4fa3ca0959cdc314bfa7");
  // The decompressed bytes (streamed again, as the upload does) are a tar: ustar magic at 257.
  auto tar = read_fast_source(*pkg);
  REQUIRE(tar.ok());
  CHECK(tar->size() == pkg->fast_source_size);
  REQUIRE(tar->size() > 512);
  CHECK(tar->substr(257, 5) == "ustar");
  unsigned char md[16];
  unsigned int len = 0;
  EVP_Digest(tar->data(), tar->size(), md, &len, EVP_md5(), nullptr);
  CHECK(std::equal(md, md + 16, pkg->fast_source_md5.begin()));
  // Only the compressed member is held.
  CHECK(pkg->fast_source_gz.size() < pkg->fast_source_size);
  // "./core/_pb_output/…" is normalised; order is the sorted member order.
  CHECK(pkg->entities.front().file.starts_with("core/_pb_output/00_"));
  CHECK(pkg->entities.back().file.starts_with("core/_pb_output/83_"));
  CHECK(pkg->ignored.empty());
  const auto& first = pkg->entities.front();
  CHECK(first.id().project() == "{{ registration.project }}");
  CHECK(first.id().version() == "{{ registration.version }}");
}

TEST_CASE("package: macOS metadata is ignored and listed", "[registration]") {
  auto pkg = read_package(read_fixture("valid-fast-register.tgz"), "valid-fast-register.tgz");
  REQUIRE(pkg.ok());
  CHECK(pkg->ignored ==
        std::vector<std::string>{"core/_pb_output/.DS_Store", "core/_pb_output/._.DS_Store"});
  CHECK(pkg->fast_source_name == "fastb17d7d7f43e1611d1c7a82d5e0296977.tar.gz");

  auto entries = base_entries();
  entries.push_back({"__MACOSX/._0_t_1.pb", "apple double"});
  entries.push_back({"sub/._1_wf_2.pb", "apple double"});
  auto crafted = read_package(make_tar(entries), "crafted.tgz");
  REQUIRE(crafted.ok());
  CHECK(crafted->entities.size() == 3);
  CHECK(crafted->ignored.size() == 2);
}

TEST_CASE("package: invalid-fast.tgz is rejected naming the misnamed source", "[registration]") {
  auto r = read_package(read_fixture("invalid-fast.tgz"), "invalid-fast.tgz");
  auto msg = error_of(r);
  CHECK_THAT(msg, Catch::Contains("invalid-fast.tgz"));
  CHECK_THAT(msg, Catch::Contains("core/_pb_output/fastb17d7d7f43e1611d1c7a82d5e0296977.tagz.gz"));
  CHECK_THAT(msg, Catch::Contains("must end in .tar.gz"));
  CHECK_THAT(msg, Catch::Contains("expected only entity files"));
  // The AppleDouble twin of the bad file is metadata, not a second complaint.
  CHECK_THAT(msg, !Catch::Contains("._fastb17"));
}

TEST_CASE("package: plain tar, directory entries, suffix-less .pb and closure handling",
          "[registration]") {
  auto entries = base_entries();
  entries.insert(entries.begin(), TarEntry{"./", "", AE_IFDIR});
  entries.insert(entries.begin(), TarEntry{"/", "", AE_IFDIR});
  entries.push_back({"nested/", "", AE_IFDIR});
  entries.push_back({"nested/3_extra.pb", task_pb("extra")});  // no _N suffix
  auto pkg = read_package(make_tar(entries, /*gzip=*/false), "plain.tar");
  REQUIRE(pkg.ok());
  REQUIRE(pkg->entities.size() == 4);
  CHECK(pkg->entities[3].file == "nested/3_extra.pb");
  CHECK(pkg->entities[3].kind == EntityKind::task);
  CHECK(pkg->entities[2].kind == EntityKind::launch_plan);
  CHECK_FALSE(pkg->entities[2].launch_plan.has_closure());
  CHECK(pkg->entities[2].id().name() == "wf");
  CHECK_FALSE(pkg->has_fast_source());
}

TEST_CASE("package: hostile archives are rejected with the member and the reason",
          "[registration]") {
  struct Case {
    const char* what;
    std::vector<TarEntry> extra;
    const char* member;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"traversal", {{"../evil_1.pb", task_pb("evil")}}, "../evil_1.pb", "path traversal"},
      {"nested traversal",
       {{"a/../../evil_1.pb", task_pb("evil")}},
       "a/../../evil_1.pb",
       "path traversal"},
      {"absolute", {{"/etc/evil_1.pb", task_pb("evil")}}, "/etc/evil_1.pb", "absolute path"},
      {"symlink", {{"link_1.pb", "", AE_IFLNK, "/etc/passwd"}}, "link_1.pb", "symbolic link"},
      {"hardlink", {{"hard_1.pb", "", AE_IFREG, "0_t_1.pb", true}}, "hard_1.pb", "hard link"},
      {"char device", {{"dev_1.pb", "", AE_IFCHR}}, "dev_1.pb", "character device"},
      {"fifo", {{"fifo_1.pb", "", AE_IFIFO}}, "fifo_1.pb", "FIFO"},
      {"duplicate", {{"0_t_1.pb", task_pb("t")}}, "0_t_1.pb", "appears twice"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto entries = base_entries();
    entries.insert(entries.end(), c.extra.begin(), c.extra.end());
    auto msg = error_of(read_package(make_tar(entries), "hostile.tgz"));
    CHECK_THAT(msg, Catch::StartsWith(std::string("hostile.tgz: ") + c.member + ": "));
    CHECK_THAT(msg, Catch::Contains(c.reason));
    CHECK_THAT(msg, Catch::Contains("expected"));
  }
}

TEST_CASE("package: entry count, entry size and total size are bounded", "[registration]") {
  auto entries = base_entries();
  for (int i = 0; i < 10; ++i) entries.push_back({"d" + std::to_string(i) + "/", "", AE_IFDIR});
  ReaderLimits few;
  few.max_entries = 5;
  auto msg = error_of(read_package(make_tar(entries), "many.tgz", few));
  CHECK_THAT(msg, Catch::Contains("more than 5 entries"));

  ReaderLimits small;
  small.max_entry_bytes = 4096;
  auto big = base_entries();
  big.push_back({"9_big_1.pb", std::string(5000, 'x')});
  msg = error_of(read_package(make_tar(big), "big.tgz", small));
  CHECK_THAT(msg, Catch::StartsWith("big.tgz: 9_big_1.pb: "));
  CHECK_THAT(msg, Catch::Contains("per-entry limit of 4096"));

  // An ignored file is still counted (it has to be decompressed to be skipped).
  big = base_entries();
  big.push_back({".DS_Store", std::string(5000, 'x')});
  msg = error_of(read_package(make_tar(big), "big.tgz", small));
  CHECK_THAT(msg, Catch::Contains(".DS_Store"));

  ReaderLimits total;
  total.max_total_bytes = 3000;
  auto many = base_entries();
  for (int i = 0; i < 4; ++i)
    many.push_back({"x" + std::to_string(i) + "_1.pb", std::string(900, 'y')});
  msg = error_of(read_package(make_tar(many), "total.tgz", total));
  CHECK_THAT(msg, Catch::Contains("total"));
  CHECK_THAT(msg, Catch::Contains("3000"));

  // The fast source is bounded after decompression (a gzip bomb stays a small member).
  ReaderLimits fast_limit;
  fast_limit.max_entry_bytes = 100000;
  auto bomb = base_entries();
  bomb.push_back({"fastbomb.tar.gz", gzip_bytes(std::string(1 << 20, '\0'))});
  REQUIRE(bomb.back().data.size() < 100000);
  msg = error_of(read_package(make_tar(bomb), "bomb.tgz", fast_limit));
  CHECK_THAT(msg, Catch::StartsWith("bomb.tgz: fastbomb.tar.gz: "));
  CHECK_THAT(msg, Catch::Contains("100000"));
}

TEST_CASE("package: entity files must decode as the type their suffix names", "[registration]") {
  auto entries = base_entries();
  entries.push_back({"5_wrong_1.pb", task_pb("wrong", flyteidl::core::WORKFLOW)});
  auto msg = error_of(read_package(make_tar(entries), "p.tgz"));
  CHECK_THAT(msg, Catch::StartsWith("p.tgz: 5_wrong_1.pb: "));
  CHECK_THAT(msg, Catch::Contains("_1.pb suffix means a task"));
  CHECK_THAT(msg, Catch::Contains("resource_type is WORKFLOW; expected TASK"));

  entries = base_entries();
  entries.push_back({"6_garbage_2.pb", std::string("\xff\xff\xff\xff garbage", 13)});
  msg = error_of(read_package(make_tar(entries), "p.tgz"));
  CHECK_THAT(msg, Catch::StartsWith("p.tgz: 6_garbage_2.pb: "));
  CHECK_THAT(msg, Catch::Contains("WorkflowSpec"));

  entries = base_entries();
  entries.push_back({"7_noid_3.pb", ""});  // decodes as an empty LaunchPlan
  msg = error_of(read_package(make_tar(entries), "p.tgz"));
  CHECK_THAT(msg, Catch::Contains("7_noid_3.pb"));
  CHECK_THAT(msg, Catch::Contains("no identifier"));
}

TEST_CASE("package: stray files, ambiguous fast sources and empty packages are errors",
          "[registration]") {
  auto entries = base_entries();
  entries.push_back({"README.md", "hello"});
  entries.push_back({"notes.txt", "hello"});
  auto msg = error_of(read_package(make_tar(entries), "p.tgz"));
  CHECK_THAT(msg, Catch::Contains("2 files that are not part of a pyflyte package: README.md, "
                                  "notes.txt"));
  CHECK_THAT(msg, Catch::Contains("NN_name_1.pb"));

  entries = base_entries();
  entries.push_back({"fasta.tar.gz", gzip_bytes("a")});
  entries.push_back({"fastb.tar.gz", gzip_bytes("b")});
  msg = error_of(read_package(make_tar(entries), "p.tgz"));
  CHECK_THAT(msg, Catch::Contains("more than one fast-registration source archive (fasta.tar.gz, "
                                  "fastb.tar.gz)"));

  entries = base_entries();
  entries.push_back({"fastplain.tar.gz", "not gzip at all"});
  msg = error_of(read_package(make_tar(entries), "p.tgz"));
  CHECK_THAT(msg, Catch::Contains("fastplain.tar.gz"));
  CHECK_THAT(msg, Catch::Contains("not gzip-compressed"));

  msg = error_of(read_package(make_tar({}), "empty.tgz"));
  CHECK_THAT(msg, Catch::Contains("empty.tgz: contains no entity files"));
  msg = error_of(read_package(make_tar({{"dir/", "", AE_IFDIR}, {".DS_Store", "x"}}), "e.tgz"));
  CHECK_THAT(msg, Catch::Contains("contains no entity files"));
  msg = error_of(read_package("", "zero.tgz"));
  CHECK_THAT(msg, Catch::Contains("zero.tgz: is empty"));
}

// Issue 10.8: NNN_name_4.pb was decoded as whatever it parsed as (a task) instead of refused.
TEST_CASE("package: an entity file with an unknown numeric type suffix is refused",
          "[registration]") {
  for (const char* stray : {"3_t_4.pb", "3_t_0.pb", "3_t_12.pb"}) {
    auto entries = base_entries();
    entries.push_back({stray, task_pb("t2")});
    auto msg = error_of(read_package(make_tar(entries), "p.tgz"));
    CHECK_THAT(msg, Catch::Contains(std::string("p.tgz: ") + stray));
    CHECK_THAT(msg, Catch::Contains("not _1 (task), _2 (workflow) or _3 (launch plan)"));
  }
  // Still accepted: no suffix at all (flytectl guesses by decoding), and names with digits.
  auto entries = base_entries();
  entries.push_back({"3_t2.pb", task_pb("t2")});
  entries.push_back({"4_v2_t_1.pb", task_pb("v2t")});
  CHECK(read_package(make_tar(entries), "p.tgz").ok());
}

TEST_CASE("package: corrupt input is rejected, not half-read", "[registration]") {
  std::string tgz = make_tar(base_entries());
  auto msg = error_of(read_package(tgz.substr(0, tgz.size() / 2), "truncated.tgz"));
  CHECK_THAT(msg, Catch::StartsWith("truncated.tgz: "));
  CHECK_THAT(msg, Catch::Contains("truncated") || Catch::Contains("corrupt"));

  msg = error_of(read_package("this is not an archive\n", "invalid.tar"));
  CHECK_THAT(msg, Catch::Contains("invalid.tar: not a tar archive"));

  msg = error_of(read_package(gzip_bytes("plain text, gzip-compressed"), "invalid.tgz"));
  CHECK_THAT(msg, Catch::Contains("invalid.tgz: not a tar archive"));

  CHECK(to_string(EntityKind::launch_plan) == "launch plan");
}

}  // namespace FLYTECD_UNITY_ID
