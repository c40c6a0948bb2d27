#pragma once

// What the package reader tests share: the real pyflyte archives, tar/gzip builders and minimal
// task, workflow and launch plan entities.

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

namespace package_test {

using namespace flytecd::registration;

inline std::string fixture_dir() {
  const std::string shared = "/work/shared/fixtures/flyte-packages";
  if (std::filesystem::exists(shared)) return shared;
  return FLYTECD_SOURCE_DIR "/../shared/fixtures/flyte-packages";
}

inline std::string read_fixture(const std::string& file) {
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

inline la_ssize_t append_to_string(archive*, void* client, const void* buf, size_t n) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

// Crafts a tar (optionally gzip) in memory with libarchive's writer.
inline std::string make_tar(const std::vector<TarEntry>& entries, bool gzip = true) {
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

inline std::string gzip_bytes(const std::string& raw) {
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

inline void set_placeholder_id(flyteidl::core::Identifier* id, flyteidl::core::ResourceType type,
                               const std::string& name) {
  id->set_resource_type(type);
  id->set_project("{{ registration.project }}");
  id->set_domain("{{ registration.domain }}");
  id->set_name(name);
  id->set_version("{{ registration.version }}");
}

inline std::string task_pb(const std::string& name,
                           flyteidl::core::ResourceType type = flyteidl::core::TASK) {
  flyteidl::admin::TaskSpec spec;
  set_placeholder_id(spec.mutable_template_()->mutable_id(), type, name);
  spec.mutable_template_()->set_type("python-task");
  return spec.SerializeAsString();
}

inline std::string workflow_pb(const std::string& name) {
  flyteidl::admin::WorkflowSpec spec;
  set_placeholder_id(spec.mutable_template_()->mutable_id(), flyteidl::core::WORKFLOW, name);
  return spec.SerializeAsString();
}

inline std::string launch_plan_pb(const std::string& name) {
  flyteidl::admin::LaunchPlan lp;
  set_placeholder_id(lp.mutable_id(), flyteidl::core::LAUNCH_PLAN, name);
  set_placeholder_id(lp.mutable_spec()->mutable_workflow_id(), flyteidl::core::WORKFLOW, name);
  lp.mutable_closure()->mutable_expected_inputs();  // must be dropped by the reader
  return lp.SerializeAsString();
}

// A minimal valid package plus `extra` entries.
inline std::vector<TarEntry> base_entries() {
  return {{"0_t_1.pb", task_pb("t")},
          {"1_wf_2.pb", workflow_pb("wf")},
          {"2_wf_3.pb", launch_plan_pb("wf")}};
}

inline std::string error_of(const flytecd::Result<Package>& r) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == flytecd::ErrorCode::invalid_input);
  return r.error().message;
}

}  // namespace package_test
