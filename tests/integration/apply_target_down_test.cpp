// `flytecd apply` (the binary) of a large repository against a standalone FlyteAdmin emulator that
// goes away mid-apply: the apply stops within seconds instead of trying every remaining step with
// retries, says the target is down, keeps what succeeded in the ledger, and the next apply against
// the restarted emulator converges.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "daemon/ledger/ledger.hpp"
#include "sinks/emulator/emulator.hpp"
#include "test_paths.hpp"
#include "tests/integration/git/git_test_support.hpp"
#include "tests/integration/target_state.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace fs = std::filesystem;
using namespace flytecd;
using git_test::eventually;
using git_test::free_port;

namespace {

constexpr int k_projects = 450;  // 450 projects + 450 * 4 scopes * 2 types = 4,050 steps
constexpr size_t k_steps = k_projects * 9;

void write_repo(const fs::path& dir) {
  fs::create_directories(dir);
  for (int p = 0; p < k_projects; ++p) {
    std::ofstream f(dir / ("p" + std::to_string(p) + ".yaml"));
    const std::string id = "proj-" + std::to_string(p);
    f << "apiVersion: flytecd/v1\nkind: Project\nid: " << id << "\nname: Project " << p << "\n";
    for (const char* domain : {"", "development", "staging", "production"}) {
      f << "---\napiVersion: flytecd/v1\nkind: Overrides\nproject: " << id << "\n";
      if (*domain) f << "domain: " << domain << "\n";
      f << "spec:\n  executionClusterLabel: {value: c" << p % 7 << "}\n"
        << "  workflowExecutionConfig: {maxParallelism: " << 1 + p % 30 << "}\n";
    }
  }
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t count_lines_ending(const std::string& text, const std::string& suffix) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    n += line.size() >= suffix.size() &&
         line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0;
  return n;
}

size_t count_failed(const std::string& text) {
  size_t n = 0;
  for (size_t at = text.find("  FAILED: "); at != std::string::npos;
       at = text.find("  FAILED: ", at + 1))
    ++n;
  return n;
}

pid_t spawn(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// Waits up to `seconds` for pid; kills it and returns -1 if it is still running then.
int wait_exit(pid_t pid, double seconds) {
  int status = 0;
  if (!eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, seconds)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// Kills and reaps a child still running when a failing REQUIRE leaves the test.
struct Reaper {
  pid_t pid = 0;
  ~Reaper() {
    if (pid > 0 && kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
  }
};

struct Rig {
  fs::path dir;
  fs::path repo;
  explicit Rig(const std::string& name)
      : dir(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))),
        repo(dir / "repo") {
    fs::remove_all(dir);
    write_repo(repo);
  }
  ~Rig() { fs::remove_all(dir); }
  std::vector<std::string> apply_args(const std::string& at) {
    endpoint = at;
    return {FLYTECD_BINARY,
            "apply",
            "--repo",
            repo.string(),
            "--state-dir",
            (dir / "state").string(),
            "--admin-endpoint",
            at,
            "--insecure",
            "--log-level",
            "error"};
  }
  std::string endpoint;  // the FlyteAdmin the last apply_args named
  size_t ledger_size() const {
    auto l = ledger::Ledger::open(testing::target_ledger(dir / "state", endpoint).string());
    REQUIRE(l.ok());
    auto m = (*l)->managed();
    REQUIRE(m.ok());
    return m->size();
  }
};

}  // namespace

TEST_CASE(
    "apply: the emulator killed (SIGKILL) mid-apply, apply reports the target down within "
    "seconds, keeps what succeeded, and the next apply converges",
    "[integration][reconcile][faults][breaker]") {
  Rig rig("flytecd-target-down");
  const int port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  // Writes slowed down so that the kill lands mid-apply on any machine.
  auto start_emulator = [&](const std::string& fault) {
    std::vector<std::string> argv{FLYTECD_BINARY, "emulator", "--listen",
                                  address,        "--db",     (rig.dir / "admin.db").string(),
                                  "--log-level",  "warn"};
    if (!fault.empty()) argv.insert(argv.end(), {"--fault", fault});
    pid_t pid = spawn(argv, rig.dir / "emulator.out", rig.dir / "emulator.err");
    REQUIRE(git_test::wait_for_port(port));
    return pid;
  };
  pid_t emulator = start_emulator("writes:latency=10ms");
  Reaper emulator_reaper{emulator};
  pid_t apply = spawn(rig.apply_args(address), rig.dir / "apply.out", rig.dir / "apply.err");
  Reaper apply_reaper{apply};
  // Kill the emulator once the apply is well under way (100 steps done).
  REQUIRE(eventually(
      [&] { return count_lines_ending(slurp(rig.dir / "apply.out"), "  ok") >= 100; }, 60));
  kill(emulator, SIGKILL);
  waitpid(emulator, nullptr, 0);
  emulator_reaper.pid = 0;
  const auto killed = std::chrono::steady_clock::now();
  // Generous bound: the old code took minutes here (every remaining step with retries).
  const int rc = wait_exit(apply, 60);
  apply_reaper.pid = 0;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  const std::string out = slurp(rig.dir / "apply.out"), err = slurp(rig.dir / "apply.err");
  INFO("apply exited " << rc << " " << secs << " s after the kill\n"
                       << out.substr(out.size() > 3000 ? out.size() - 3000 : 0) << "\n"
                       << err);
  REQUIRE(rc == 1);
  CHECK(secs < 30);
  CHECK(err.find("is down") != std::string::npos);
  CHECK(out.find("target unreachable") != std::string::npos);
  const size_t ok_steps = count_lines_ending(out, "  ok");
  CHECK(ok_steps >= 100);
  // Only the steps in flight when the breaker opened failed; the rest never started.
  CHECK(ok_steps + count_failed(out) < k_steps);
  CHECK(rig.ledger_size() == ok_steps);

  // Restarted on the same port and database: the next apply converges.
  emulator = start_emulator("");
  emulator_reaper.pid = emulator;
  pid_t again = spawn(rig.apply_args(address), rig.dir / "again.out", rig.dir / "again.err");
  const int rc2 = wait_exit(again, 120);
  INFO(slurp(rig.dir / "again.err"));
  CHECK(rc2 == 0);
  CHECK(slurp(rig.dir / "again.out").find("converged") != std::string::npos);
  CHECK(rig.ledger_size() == k_steps);
  kill(emulator, SIGTERM);
  CHECK(wait_exit(emulator, 15) >= 0);
  emulator_reaper.pid = 0;
}

TEST_CASE(
    "apply: FlyteAdmin unavailable after N writes (fault injection), apply stops, the "
    "ledger holds exactly the N steps, the next apply converges",
    "[integration][reconcile][faults][breaker]") {
  Rig rig("flytecd-target-down-det");
  sinks::emulator::Options opts;
  auto rule = sinks::emulator::parse_fault("writes:after=300,code=UNAVAILABLE");
  REQUIRE(rule.ok());
  opts.faults.push_back(*rule);
  auto emu = sinks::emulator::Emulator::start(opts);
  REQUIRE(emu.ok());
  const auto started = std::chrono::steady_clock::now();
  pid_t apply =
      spawn(rig.apply_args((*emu)->address()), rig.dir / "apply.out", rig.dir / "apply.err");
  const int rc = wait_exit(apply, 60);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string out = slurp(rig.dir / "apply.out"), err = slurp(rig.dir / "apply.err");
  INFO("apply exited " << rc << " after " << secs << " s\n"
                       << out.substr(out.size() > 3000 ? out.size() - 3000 : 0) << "\n"
                       << err);
  REQUIRE(rc == 1);
  CHECK(secs < 30);
  CHECK(err.find("is down") != std::string::npos);
  CHECK(count_lines_ending(out, "  ok") == 300);
  CHECK(rig.ledger_size() == 300);
  // The steps in flight when the breaker opened failed (threshold 5; admin.maxInFlight 64 steps
  // in flight, refilled at most 4 times before the fifth failure came back); the rest never
  // started.
  CHECK(count_failed(out) >= 5);
  CHECK(count_failed(out) <= 64 + 4);
  CHECK(count_lines_ending(out, "  ok") + count_failed(out) < k_steps);
  CHECK(out.find("not started") != std::string::npos);

  (*emu)->set_faults({});
  pid_t again =
      spawn(rig.apply_args((*emu)->address()), rig.dir / "again.out", rig.dir / "again.err");
  CHECK(wait_exit(again, 120) == 0);
  CHECK(rig.ledger_size() == k_steps);
}

}  // namespace FLYTECD_UNITY_ID
