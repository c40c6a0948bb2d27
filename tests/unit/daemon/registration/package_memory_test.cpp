// Reading pyflyte package archives within a memory budget: package bombs, leases, summaries and the
// decode estimate.

#include <catch2/catch.hpp>

#include "tests/unit/daemon/registration/package_test_support.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::registration;
using namespace package_test;

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
using package_test::error_of;  // one overload set with the summary's
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
