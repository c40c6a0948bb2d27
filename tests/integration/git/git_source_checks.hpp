#pragma once

// Opening and syncing a GitSource in a test: the options every Git test starts from, and a
// REQUIRE that shows the source's error when it fails.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>

#include "sources/git/git_source.hpp"

namespace git_test {

// Options for `url` on branch main with a cache directory and a bounded timeout.
inline flytecd::sources::git::GitOptions git_options(const std::string& url,
                                                     const std::string& cache_dir,
                                                     int timeout_seconds = 10) {
  flytecd::sources::git::GitOptions o;
  o.url = url;
  o.ref = "main";
  o.cache_dir = cache_dir;
  o.timeout_seconds = timeout_seconds;
  return o;
}

inline std::unique_ptr<flytecd::sources::git::GitSource> open_ok(
    const flytecd::sources::git::GitOptions& options) {
  auto source = flytecd::sources::git::GitSource::open(options);
  INFO((source ? std::string() : source.error().message));
  REQUIRE(source);
  return std::move(source).value();
}

inline flytecd::sources::Snapshot sync_ok(flytecd::sources::git::GitSource& source) {
  auto snap = source.sync();
  INFO((snap ? std::string() : snap.error().message));
  REQUIRE(snap);
  return std::move(snap).value();
}

// The commit the source's ref names now; a REQUIRE that shows the source's error when it fails.
inline std::string head_ok(flytecd::sources::git::GitSource& source) {
  auto head = source.head();
  INFO((head ? std::string() : head.error().message));
  REQUIRE(head);
  return *head;
}

}  // namespace git_test
