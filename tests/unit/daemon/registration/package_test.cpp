#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "daemon/registration/package.hpp"
#include "daemon/registration/package_decode.hpp"
#include "test_paths.hpp"
#include "tests/unit/daemon/registration/package_bomb.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::registration;

namespace {

std::string fixture_dir() {
  const std::string shared = "/work/shared/fixtures/flyte-packages";
  if (std::filesystem::exists(shared)) return shared;
  return FLYTECD_SOURCE_DIR "/../shared/fixtures/flyte-packages";
}

std::string read_fixture(const std::string& file) {
  std::ifstream in(fixture_dir() + "/" + file, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct TarEntry {
  TarEntry(std::string p, std::string d = "", unsigned t = AE_IFREG, std::string l = "",
           bool h = false)
      : path(std::move(p)), data(std::move(d)), type(t), link(std::move(l)), hard(h) {}
  std::string path;
  std::string data;
  unsigned type;
  std::string link;  // symlink target, or hardlink target when `hard`
  bool hard;
};

la_ssize_t append_to_string(archive*, void* client, const void* buf, size_t n) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

// Crafts a tar (optionally gzip) in memory with libarchive's writer.
std::string make_tar(const std::vector<TarEntry>& entries, bool gzip = true) {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (gzip) archive_write_add_filter_gzip(a);
  archive_write_set_bytes_in_last_block(a, 1);
  REQUIRE(archive_write_open(a, &out, nullptr, append_to_string, nullptr) == ARCHIVE_OK);
  for (const auto& t : entries) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, t.path.c_str());
    archive_entry_set_filetype(e, t.type);
    archive_entry_set_perm(e, 0644);
    if (t.type == AE_IFLNK) archive_entry_set_symlink(e, t.link.c_str());
    if (t.hard) archive_entry_set_hardlink(e, t.link.c_str());
    if (t.type == AE_IFCHR) archive_entry_set_rdev(e, makedev(1, 3));
    const bool has_data = t.type == AE_IFREG && !t.hard;
    archive_entry_set_size(e, has_data ? static_cast<int64_t>(t.data.size()) : 0);
    REQUIRE(archive_write_header(a, e) == ARCHIVE_OK);
    if (has_data && !t.data.empty()) archive_write_data(a, t.data.data(), t.data.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

std::string gzip_bytes(const std::string& raw) {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_raw(a);
  archive_write_add_filter_gzip(a);
  REQUIRE(archive_write_open(a, &out, nullptr, append_to_string, nullptr) == ARCHIVE_OK);
  archive_entry* e = archive_entry_new();
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_size(e, static_cast<int64_t>(raw.size()));
  archive_write_header(a, e);
  archive_write_data(a, raw.data(), raw.size());
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

void set_placeholder_id(flyteidl::core::Identifier* id, flyteidl::core::ResourceType type,
                        const std::string& name) {
  id->set_resource_type(type);
  id->set_project("{{ registration.project }}");
  id->set_domain("{{ registration.domain }}");
  id->set_name(name);
  id->set_version("{{ registration.version }}");
}

std::string task_pb(const std::string& name,
                    flyteidl::core::ResourceType type = flyteidl::core::TASK) {
  flyteidl::admin::TaskSpec spec;
  set_placeholder_id(spec.mutable_template_()->mutable_id(), type, name);
  spec.mutable_template_()->set_type("python-task");
  return spec.SerializeAsString();
}

std::string workflow_pb(const std::string& name) {
  flyteidl::admin::WorkflowSpec spec;
  set_placeholder_id(spec.mutable_template_()->mutable_id(), flyteidl::core::WORKFLOW, name);
  return spec.SerializeAsString();
}

std::string launch_plan_pb(const std::string& name) {
  flyteidl::admin::LaunchPlan lp;
  set_placeholder_id(lp.mutable_id(), flyteidl::core::LAUNCH_PLAN, name);
  set_placeholder_id(lp.mutable_spec()->mutable_workflow_id(), flyteidl::core::WORKFLOW, name);
  lp.mutable_closure()->mutable_expected_inputs();  // must be dropped by the reader
  return lp.SerializeAsString();
}

// A minimal valid package plus `extra` entries.
std::vector<TarEntry> base_entries() {
  return {{"0_t_1.pb", task_pb("t")},
          {"1_wf_2.pb", workflow_pb("wf")},
          {"2_wf_3.pb", launch_plan_pb("wf")}};
}

std::string error_of(const flytecd::Result<Package>& r) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == flytecd::ErrorCode::invalid_input);
  return r.error().message;
}

}  // namespace

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

namespace {

// A valid task whose spec carries `bytes` of payload (a legitimately large entity file).
std::string big_task_pb(const std::string& name, size_t bytes) {
  flyteidl::admin::TaskSpec spec;
  set_placeholder_id(spec.mutable_template_()->mutable_id(), flyteidl::core::TASK, name);
  spec.mutable_template_()->set_type(std::string(bytes, 't'));
  return spec.SerializeAsString();
}

}  // namespace

TEST_CASE("package: the package bomb (40 x 60 MiB of zeros) is refused by name, nothing held",
          "[registration][memory]") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("flytecd-bomb-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "bomb.tgz";
  flytecd::test::write_bomb(file, 40, 60u << 20);
  std::ifstream in(file, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  std::filesystem::remove_all(dir);
  REQUIRE(bytes.size() < (16u << 20));  // 2.4 GiB decompressed, a few MB on the wire

  // Defaults: refused at the per-package total, from the tar headers, before any member is read.
  MemoryBudget budget(k_default_memory_budget_bytes);
  ReaderLimits limits;
  limits.budget = &budget;
  auto msg = error_of(read_package(bytes, "packages/bomb.tgz", limits));
  CHECK_THAT(msg, Catch::StartsWith("packages/bomb.tgz: "));
  CHECK_THAT(msg, Catch::Contains("_big_1.pb"));
  CHECK_THAT(msg, Catch::Contains("268435456 decompressed bytes (packages.maxPackageBytes)"));
  CHECK(budget.peak() == 0);

  // With the per-package bound raised out of the way, the memory budget refuses it whole, again
  // before anything is held (the lease is asked for in one piece).
  limits.max_total_bytes = 4ull << 30;
  msg = error_of(read_package(bytes, "packages/bomb.tgz", limits));
  CHECK_THAT(msg, Catch::StartsWith("packages/bomb.tgz: needs "));
  CHECK_THAT(msg, Catch::Contains("(packages.memoryBudgetBytes)"));
  CHECK(budget.peak() == 0);
  CHECK(budget.in_use() == 0);
}

TEST_CASE("package: one large zero-filled entity is held within its lease, then given back",
          "[registration][memory]") {
  auto entries = base_entries();
  entries.push_back({"9_zero_1.pb", std::string(8u << 20, '\0')});
  const std::string tgz = make_tar(entries);
  MemoryBudget budget(64u << 20);
  ReaderLimits limits;
  limits.budget = &budget;
  auto msg = error_of(read_package(tgz, "zero.tgz", limits));
  CHECK_THAT(msg, Catch::StartsWith("zero.tgz: 9_zero_1.pb: cannot be decoded"));
  CHECK(budget.peak() >= (8u << 20));  // the raw member was accounted while it was read
  CHECK(budget.peak() <= budget.capacity());
  CHECK(budget.in_use() == 0);
}

TEST_CASE("package: a package holds a lease for its decoded entities while it lives",
          "[registration][memory]") {
  MemoryBudget budget(k_default_memory_budget_bytes);
  ReaderLimits limits;
  limits.budget = &budget;
  for (const char* file : {"flytesnacks-core.tgz", "valid-fast-register.tgz"}) {
    INFO(file);
    const std::string bytes = read_fixture(file);
    {
      auto pkg = read_package(bytes, file, limits);
      REQUIRE(pkg.ok());
      CHECK(pkg->memory.bytes() > pkg->fast_source_gz.size());
      CHECK(budget.in_use() == pkg->memory.bytes());  // trimmed to what is held
      // Without a budget the same package reads the same (and still says what it holds).
      auto free_pkg = read_package(bytes, file);
      REQUIRE(free_pkg.ok());
      CHECK(free_pkg->entities.size() == pkg->entities.size());
      CHECK(free_pkg->memory.bytes() == pkg->memory.bytes());
    }
    CHECK(budget.in_use() == 0);
  }
}

TEST_CASE("package: concurrent readers share one budget and take turns within it",
          "[registration][memory]") {
  auto entries = base_entries();
  entries.push_back({"9_big_1.pb", big_task_pb("big", 4u << 20)});
  const std::string tgz = make_tar(entries);
  // Room for one such package at a time (its lease is about 3x its entity bytes), not two.
  MemoryBudget budget(20u << 20);
  ReaderLimits limits;
  limits.budget = &budget;
  limits.budget_wait = std::chrono::seconds(30);
  std::atomic<int> ok{0};
  std::atomic<uint64_t> most_seen{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 4; ++i) {
    readers.emplace_back([&, i] {
      auto pkg = read_package(tgz, "big-" + std::to_string(i) + ".tgz", limits);
      if (!pkg) return;
      ++ok;
      uint64_t seen = budget.in_use();
      uint64_t prev = most_seen.load();
      while (seen > prev && !most_seen.compare_exchange_weak(prev, seen)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // hold it a while
    });
  }
  for (auto& t : readers) t.join();
  CHECK(ok == 4);
  CHECK(budget.peak() <= budget.capacity());
  CHECK(budget.peak() >= (4u << 20));
  CHECK(most_seen.load() <= budget.capacity());
  CHECK(budget.in_use() == 0);

  // A reader that cannot get its lease while another package holds the budget fails, retryably,
  // naming the package; once that package is gone the same read succeeds.
  MemoryBudget tight(14u << 20);
  limits.budget = &tight;
  limits.budget_wait = std::chrono::milliseconds(50);
  auto first = read_package(tgz, "first.tgz", limits);
  REQUIRE(first.ok());
  auto second = read_package(tgz, "second.tgz", limits);
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == flytecd::ErrorCode::unavailable);
  CHECK_THAT(second.error().message, Catch::StartsWith("second.tgz: waited"));
  first = read_package("", "gone.tgz");  // drops the first package and its lease
  CHECK(read_package(tgz, "second.tgz", limits).ok());
}

namespace {
std::string error_of(const flytecd::Result<PackageSummary>& r) {
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}
}  // namespace

TEST_CASE("package: a summary has read_package's counts and launch plans, in package order",
          "[registration][summary]") {
  for (const char* file : {"valid-register.tgz", "flyte-package.tgz", "flytesnacks-core.tgz",
                           "valid-fast-register.tgz"}) {
    INFO(file);
    const std::string bytes = read_fixture(file);
    auto pkg = read_package(bytes, file);
    auto sum = summarize_package(bytes, file);
    REQUIRE(pkg.ok());
    REQUIRE(sum.ok());
    CHECK(sum->tasks == pkg->count(EntityKind::task));
    CHECK(sum->workflows == pkg->count(EntityKind::workflow));
    CHECK(sum->fast_source_name == pkg->fast_source_name);
    std::vector<std::pair<std::string, bool>> want, got;
    for (const auto& e : pkg->entities)
      if (e.kind == EntityKind::launch_plan)
        want.emplace_back(e.id().name(), e.launch_plan.spec().entity_metadata().has_schedule());
    for (const auto& lp : sum->launch_plans) got.emplace_back(lp.name, lp.scheduled);
    CHECK(got == want);
  }
  // A suffix-less .pb is decoded to learn its kind.
  auto entries = base_entries();
  entries.push_back({"nested/3_extra.pb", task_pb("extra")});
  auto sum = summarize_package(make_tar(entries), "p.tgz");
  REQUIRE(sum.ok());
  CHECK(sum->tasks == 2);
}

TEST_CASE("package: a summary refuses what the first pass refuses", "[registration][summary]") {
  auto entries = base_entries();
  entries.push_back({"README.md", "hello"});
  CHECK_THAT(error_of(summarize_package(make_tar(entries), "p.tgz")),
             Catch::Contains("a file that is not part of a pyflyte package: README.md"));
  CHECK_THAT(error_of(summarize_package(read_fixture("invalid-fast.tgz"), "invalid-fast.tgz")),
             Catch::Contains("tagz"));
  CHECK_THAT(error_of(summarize_package("", "empty.tgz")), Catch::Contains("is empty"));
  const auto dir =
      std::filesystem::temp_directory_path() / ("flytecd-sbomb-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  flytecd::test::write_bomb(dir / "bomb.tgz", 40, 6u << 20);
  std::ifstream in(dir / "bomb.tgz", std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  std::filesystem::remove_all(dir);
  ReaderLimits limits;
  limits.max_total_bytes = 32u << 20;
  MemoryBudget budget(8u << 20);
  limits.budget = &budget;
  CHECK_THAT(error_of(summarize_package(ss.str(), "bomb.tgz", limits)),
             Catch::Contains("33554432 decompressed bytes (packages.maxPackageBytes)"));
  CHECK(budget.in_use() == 0);
}

namespace {

std::string varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}

std::string length_delimited(int number, const std::string& payload) {
  return varint(static_cast<uint64_t>(number) << 3 | 2) + varint(payload.size()) + payload;
}

// A WorkflowSpec whose template carries its id and `n` copies of `node` (wire bytes of one
// WorkflowTemplate.nodes entry's payload): written on the wire directly, never decoded here.
std::string workflow_with_nodes(size_t n, const std::string& node = "") {
  flyteidl::core::WorkflowTemplate t;
  set_placeholder_id(t.mutable_id(), flyteidl::core::WORKFLOW, "bomb");
  std::string tmpl = t.SerializeAsString();
  const std::string entry =
      length_delimited(flyteidl::core::WorkflowTemplate::kNodesFieldNumber, node);
  tmpl.reserve(tmpl.size() + n * entry.size());
  for (size_t i = 0; i < n; ++i) tmpl += entry;
  return length_delimited(flyteidl::admin::WorkflowSpec::kTemplateFieldNumber, tmpl);
}

long peak_rss_kib() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

TEST_CASE("package: the decode estimate bounds every pyflyte entity from above, within the ratio",
          "[registration][memory]") {
  double worst = 0;
  for (const char* file : {"valid-register.tgz", "flyte-package.tgz", "flytesnacks-core.tgz",
                           "valid-fast-register.tgz"}) {
    auto pkg = read_package(read_fixture(file), file);
    REQUIRE(pkg.ok());
    for (const auto& e : pkg->entities) {
      const google::protobuf::Message& m =
          e.kind == EntityKind::task ? static_cast<const google::protobuf::Message&>(e.task)
          : e.kind == EntityKind::workflow
              ? static_cast<const google::protobuf::Message&>(e.workflow)
              : static_cast<const google::protobuf::Message&>(e.launch_plan);
      const std::string wire = m.SerializeAsString();
      const auto est = estimate_decode(*m.GetDescriptor(), wire);
      INFO(file << ": " << e.file << ": " << wire.size() << " bytes, estimate " << est.bytes
                << ", SpaceUsedLong " << m.SpaceUsedLong());
      CHECK_FALSE(est.malformed);
      CHECK(est.bytes >= m.SpaceUsedLong());
      CHECK(check_decode(est, wire.size(), k_default_memory_budget_bytes, "k", "x").ok());
      worst = std::max(worst, static_cast<double>(est.bytes) / static_cast<double>(wire.size()));
    }
  }
  // Real entities stay far below the bound (~11 of 48): room for denser workflows.
  INFO("worst decoded/wire ratio " << worst);
  CHECK(worst * 3 < static_cast<double>(k_max_decode_amplification));
}

TEST_CASE("package: a workflow of a million empty nodes (2 bytes each) is refused before decoding",
          "[registration][memory]") {
  const std::string pb = workflow_with_nodes(1000000);
  REQUIRE(pb.size() < (2100u << 10));  // 2 MB member, a few KB compressed
  const std::string tgz = make_tar({{"0_bomb.wf_2.pb", pb}});
  REQUIRE(tgz.size() < (16u << 10));
  const long before = peak_rss_kib();
  MemoryBudget budget(k_default_memory_budget_bytes);
  ReaderLimits limits;
  limits.budget = &budget;
  auto msg = error_of(read_package(tgz, "bomb.tgz", limits));
  CHECK_THAT(msg, Catch::StartsWith("bomb.tgz: 0_bomb.wf_2.pb (as flyteidl.admin.WorkflowSpec): "
                                    "decoding it would take about "));
  CHECK_THAT(msg, Catch::Contains("(1000006 elements in 2000097 bytes of protobuf)"));
  CHECK_THAT(msg, Catch::Contains("more than 48 bytes per byte of protobuf"));
  CHECK(budget.peak() < (16u << 20));  // the raw member and the first lease, never the decode
  CHECK(budget.in_use() == 0);
  // The same without a budget (flytecd compile), and for the plan-time summary of a file
  // without a type suffix (decoded there).
  CHECK_THAT(error_of(read_package(tgz, "bomb.tgz")), Catch::Contains("bytes per byte"));
  CHECK_THAT(error_of(summarize_package(make_tar({{"bomb.pb", pb}}), "bomb.tgz", limits)),
             Catch::Contains("bytes per byte"));
  CHECK(budget.in_use() == 0);
  // Decoding it took ~150 MB before; the bytes above are all this test held. Under
  // AddressSanitizer the process's peak RSS is the sanitizer's (shadow memory, a 256 MiB
  // quarantine of freed blocks), not the reader's: the budget's peak above is the figure there.
  // GCC says so with __SANITIZE_ADDRESS__, clang with __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define FLYTECD_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FLYTECD_TEST_UNDER_ASAN 1
#endif
#endif
#if !defined(FLYTECD_TEST_UNDER_ASAN)
  CHECK(peak_rss_kib() - before < 48 * 1024);
#else
  (void)before;
#endif
}

TEST_CASE("package: an entity within the ratio but over the memory budget is refused undecoded",
          "[registration][memory]") {
  // 100,000 nodes with a 12-character id: ~1.5 MB on the wire, ~30 MB decoded.
  flyteidl::core::Node node;
  node.set_id("node-0000001");
  const std::string pb = workflow_with_nodes(100000, node.SerializeAsString());
  const auto est = estimate_decode(*flyteidl::admin::WorkflowSpec::descriptor(), pb);
  REQUIRE(est.bytes < k_max_decode_amplification * pb.size());
  MemoryBudget budget(16u << 20);
  ReaderLimits limits;
  limits.budget = &budget;
  auto msg = error_of(read_package(make_tar({{"0_wide.wf_2.pb", pb}}), "wide.tgz", limits));
  CHECK_THAT(msg, Catch::Contains("0_wide.wf_2.pb"));
  CHECK_THAT(msg, Catch::Contains("more than the package memory budget of 16777216 bytes "
                                  "(packages.memoryBudgetBytes)"));
  CHECK(budget.peak() < (8u << 20));  // refused on the estimate: the decode was never leased
  CHECK(budget.in_use() == 0);
  // Within a budget that has room, it decodes (and the lease covers it).
  MemoryBudget roomy(k_default_memory_budget_bytes);
  limits.budget = &roomy;
  auto pkg = read_package(make_tar({{"0_wide.wf_2.pb", pb}}), "wide.tgz", limits);
  REQUIRE(pkg.ok());
  CHECK(pkg->entities.at(0).workflow.template_().nodes_size() == 100000);
  CHECK(roomy.peak() >= est.bytes);
}

TEST_CASE("package: unknown fields and malformed wire bytes are bounded too",
          "[registration][memory]") {
  // A launch plan padded with 500,000 empty unknown fields (number 15; ~40 MB decoded, 1 MB on
  // the wire): the plan-time summary refuses it on the estimate, before decoding.
  flyteidl::admin::LaunchPlan lp;
  set_placeholder_id(lp.mutable_id(), flyteidl::core::LAUNCH_PLAN, "lp");
  set_placeholder_id(lp.mutable_spec()->mutable_workflow_id(), flyteidl::core::WORKFLOW, "lp");
  std::string pb = lp.SerializeAsString();
  for (int i = 0; i < 500000; ++i) pb += length_delimited(15, "");
  MemoryBudget budget(16u << 20);
  ReaderLimits limits;
  limits.budget = &budget;
  CHECK_THAT(error_of(summarize_package(make_tar({{"0_lp_3.pb", pb}}), "u.tgz", limits)),
             Catch::Contains("0_lp_3.pb (as flyteidl.admin.LaunchPlan): decoding it would take") &&
                 Catch::Contains("more than the package memory budget of 16777216 bytes"));
  CHECK(budget.peak() < (4u << 20));
  CHECK(budget.in_use() == 0);
  // A million empty nodes cut short at the end: refused as undecodable, without decoding them.
  std::string cut = workflow_with_nodes(1000000);
  cut.pop_back();
  cut += "\x22";  // a tag with no length
  const auto est = estimate_decode(*flyteidl::admin::WorkflowSpec::descriptor(), cut);
  CHECK(est.malformed);
  CHECK_THAT(error_of(read_package(make_tar({{"0_cut_2.pb", cut}}), "cut.tgz")),
             Catch::Contains("cannot be decoded as flyteidl.admin.WorkflowSpec"));
}

}  // namespace FLYTECD_UNITY_ID
