// Poll cost with an unmoved head (prints figures; never a pass/fail test):
//
//   flytecd_bench_git_poll URL [--polls N] [--ref main] [--path P] [--cache DIR]
//
// Opens flytecd's GitSource on URL, syncs once (clone into the mirror), then calls
// head() N times (one ls-remote each, what the daemon does every interval) and sync()
// N times (ls-remote + "head unchanged" + the snapshot of the head read from the mirror), and
// prints wall and CPU time per call. Credentials, if any, from FLYTECD_BENCH_GIT_USER and the
// file named by FLYTECD_BENCH_GIT_PASSWORD_FILE.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "sources/git/git_source.hpp"

namespace {

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s URL [--polls N] [--ref main] [--path P] [--cache DIR]\n",
                 argv[0]);
    return 2;
  }
  namespace fg = flytecd::sources::git;
  fg::GitOptions o;
  o.url = argv[1];
  int polls = 50;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--polls")
      polls = std::atoi(value.c_str());
    else if (flag == "--ref")
      o.ref = value;
    else if (flag == "--path")
      o.subpath = value;
    else if (flag == "--cache")
      o.cache_dir = value;
  }
  if (o.cache_dir.empty())
    o.cache_dir = (std::filesystem::temp_directory_path() /
                   ("flytecd-bench-git-" + std::to_string(::getpid())))
                      .string();
  if (const char* u = std::getenv("FLYTECD_BENCH_GIT_USER")) o.auth.username = u;
  if (const char* f = std::getenv("FLYTECD_BENCH_GIT_PASSWORD_FILE")) o.auth.password_file = f;
  o.timeout_seconds = 600;

  auto source = fg::GitSource::open(o);
  if (!source) {
    std::fprintf(stderr, "open: %s\n", source.error().message.c_str());
    return 1;
  }
  double t0 = now_seconds(), c0 = cpu_seconds();
  auto first = (*source)->sync();
  if (!first) {
    std::fprintf(stderr, "sync: %s\n", first.error().message.c_str());
    return 1;
  }
  std::printf("%s: first sync (clone + snapshot of %zu files): wall %.3f s, cpu %.3f s\n",
              (*source)->describe().c_str(), first->files.size(), now_seconds() - t0,
              cpu_seconds() - c0);

  t0 = now_seconds();
  c0 = cpu_seconds();
  for (int i = 0; i < polls; ++i) {
    auto head = (*source)->head();
    if (!head || *head != first->revision) {
      std::fprintf(stderr, "remote_head: %s\n", head ? "moved" : head.error().message.c_str());
      return 1;
    }
  }
  std::printf("head() x %d, head unmoved: %.2f ms wall, %.2f ms cpu per poll\n", polls,
              (now_seconds() - t0) * 1000.0 / polls, (cpu_seconds() - c0) * 1000.0 / polls);

  const int syncs = polls < 10 ? polls : 10;
  t0 = now_seconds();
  c0 = cpu_seconds();
  for (int i = 0; i < syncs; ++i) {
    auto snap = (*source)->sync();
    if (!snap) {
      std::fprintf(stderr, "sync: %s\n", snap.error().message.c_str());
      return 1;
    }
  }
  std::printf(
      "sync() x %d, head unmoved (ls-remote + snapshot read from the mirror): %.2f ms wall, "
      "%.2f ms cpu per call\n",
      syncs, (now_seconds() - t0) * 1000.0 / syncs, (cpu_seconds() - c0) * 1000.0 / syncs);
  std::error_code ec;
  if (!std::getenv("FLYTECD_BENCH_KEEP_CACHE")) std::filesystem::remove_all(o.cache_dir, ec);
  return 0;
}
