#pragma once
// valid-register.tgz with one binding changed: node n1's STRING input `a` reads n0's INTEGER
// output `t1_int_output` instead of its STRING output `c` (FlyteAdmin's compiler refuses it).
// The archive is rewritten at test time with libarchive: every other member is kept as is.
#include <archive.h>
#include <archive_entry.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "flyteidl/admin/workflow.pb.h"
#include "tests/support/fixtures.hpp"

namespace flytecd::testing {

inline la_ssize_t append_archive_bytes(archive*, void* client, const void* buf, size_t n) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

// The members (path, bytes) of a .tgz, regular files only.
inline std::vector<std::pair<std::string, std::string>> untar(const std::string& tgz) {
  std::vector<std::pair<std::string, std::string>> out;
  archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_all(a);
  REQUIRE(archive_read_open_memory(a, tgz.data(), tgz.size()) == ARCHIVE_OK);
  archive_entry* e = nullptr;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    if (archive_entry_filetype(e) != AE_IFREG) continue;
    std::string data(static_cast<size_t>(archive_entry_size(e)), '\0');
    if (!data.empty()) REQUIRE(archive_read_data(a, data.data(), data.size()) > 0);
    out.emplace_back(archive_entry_pathname(e), std::move(data));
  }
  archive_read_free(a);
  return out;
}

inline std::string tgz(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_gzip(a);
  archive_write_set_bytes_in_last_block(a, 1);
  REQUIRE(archive_write_open(a, &out, nullptr, append_archive_bytes, nullptr) == ARCHIVE_OK);
  for (const auto& [path, data] : members) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, path.c_str());
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, static_cast<int64_t>(data.size()));
    REQUIRE(archive_write_header(a, e) == ARCHIVE_OK);
    archive_write_data(a, data.data(), data.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

// valid-register.tgz with n1.a bound to n0.t1_int_output.
inline std::string binding_mismatch_package() {
  auto members = untar(read_bytes(package_fixtures() / "valid-register.tgz"));
  bool edited = false;
  for (auto& [path, data] : members) {
    if (path.find("my_wf_2.pb") == std::string::npos) continue;
    flyteidl::admin::WorkflowSpec spec;
    REQUIRE(spec.ParseFromString(data));
    for (auto& n : *spec.mutable_template_()->mutable_nodes()) {
      if (n.id() != "n1") continue;
      for (auto& in : *n.mutable_inputs()) {
        if (in.var() != "a") continue;
        REQUIRE(in.binding().promise().var() == "c");
        in.mutable_binding()->mutable_promise()->set_var("t1_int_output");
        edited = true;
      }
    }
    data = spec.SerializeAsString();
  }
  REQUIRE(edited);
  return tgz(members);
}

}  // namespace flytecd::testing
