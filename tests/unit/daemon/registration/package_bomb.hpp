#pragma once

// Test support: a package bomb for the memory-budget tests (unit and integration).

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace flytecd::test {

// `members` entity files NN_big_1.pb of `each` zero bytes, gzip level 1: a few hundred KB on
// disk for gigabytes decompressed.
inline void write_bomb(const std::filesystem::path& file, int members, size_t each) {
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_gzip(a);
  archive_write_set_filter_option(a, "gzip", "compression-level", "1");
  REQUIRE(archive_write_open_filename(a, file.c_str()) == ARCHIVE_OK);
  const std::string zeros(1 << 20, '\0');
  for (int i = 0; i < members; ++i) {
    archive_entry* e = archive_entry_new();
    const std::string path = std::to_string(10 + i) + "_big_1.pb";
    archive_entry_set_pathname(e, path.c_str());
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, static_cast<int64_t>(each));
    REQUIRE(archive_write_header(a, e) == ARCHIVE_OK);
    for (size_t done = 0; done < each; done += zeros.size())
      archive_write_data(a, zeros.data(), std::min(zeros.size(), each - done));
    archive_entry_free(e);
  }
  REQUIRE(archive_write_close(a) == ARCHIVE_OK);
  archive_write_free(a);
}

// A gzip tar of the given (member path, bytes) entries, as pyflyte package writes one.
inline void write_package(const std::filesystem::path& file,
                          const std::vector<std::pair<std::string, std::string>>& members) {
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_gzip(a);
  REQUIRE(archive_write_open_filename(a, file.c_str()) == ARCHIVE_OK);
  for (const auto& [path, bytes] : members) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, path.c_str());
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, static_cast<int64_t>(bytes.size()));
    REQUIRE(archive_write_header(a, e) == ARCHIVE_OK);
    archive_write_data(a, bytes.data(), bytes.size());
    archive_entry_free(e);
  }
  REQUIRE(archive_write_close(a) == ARCHIVE_OK);
  archive_write_free(a);
}

}  // namespace flytecd::test
