#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/registration/budget.hpp"
#include "flyteidl/admin/launch_plan.pb.h"
#include "flyteidl/admin/task.pb.h"
#include "flyteidl/admin/workflow.pb.h"
#include "flyteidl/core/identifier.pb.h"

// Reading a `pyflyte package` archive (flytectl `register files --archive`, reference §1.2–§1.3).
//
// What is accepted, and how it differs from flytectl on purpose:
// - The archive is a tar, optionally gzip-compressed, detected by content (not by name). Other
//   formats and compressions (zip, bzip2, xz, …) are rejected.
// - Regular files only. Directory entries are skipped. Symlinks, hardlinks, device files, FIFOs
//   and sockets are errors (flytectl silently skips them). Member paths are normalised ("./" and
//   empty segments dropped: "./core/_pb_output/x.pb" -> "core/_pb_output/x.pb"); a ".." segment
//   or an absolute path is an error (only the root directory entry "/" is tolerated, because
//   real pyflyte archives carry one). The same file path twice is an error (ambiguous).
// - Entity files: basename ends in ".pb". Type from the `_1` / `_2` / `_3` suffix (TaskSpec,
//   WorkflowSpec, LaunchPlan), which is authoritative; the decoded message's id.resource_type must
//   then be TASK / WORKFLOW / LAUNCH_PLAN, else an error naming the file. A ".pb" without a suffix
//   is tried as TaskSpec, WorkflowSpec, LaunchPlan (flytectl's order) and the first whose
//   resource_type matches wins. Every message must carry its identifier (and a launch plan its
//   spec.workflow_id). A launch plan's closure is dropped (flytectl never sends it).
// - Fast-registration source: basename starts with "fast" and ends with ".tar.gz". It must be
//   gzip; it is decompressed (streamed, never held) to compute its size and MD5 (what
//   CreateUploadLocation and the PUT need); the upload decompresses it again on the fly
//   (open_fast_source). More than one is an error naming both (flytectl silently takes the last
//   in sorted order).
// - Stray files: macOS metadata (basename ".DS_Store", basename starting with "._", anything under
//   a "__MACOSX/" folder) is ignored and listed in Package::ignored (flytectl aborts the run).
//   Any other file is an error that names every such file and says what a package may contain.
//   A file named "fast…" with another extension (e.g. invalid-fast.tgz's "….tagz.gz") gets a hint.
// - No ".pb" at all is an error. Limits (ReaderLimits) bound entries, per-entry and total
//   decompressed bytes; exceeding one is an error naming the member and the limit.
// Memory: a first pass reads only headers (every check above except decoding happens there, on
// the sizes the tar headers declare), so a package over a limit is refused before any member is
// held. The second pass reads one entity file at a time, decodes it and drops its raw bytes.
// What the package holds (decoded entities, the compressed fast source) is leased from
// ReaderLimits::budget for as long as the Package lives; the lease is taken whole, up front,
// from an estimate, then trimmed to what is actually held.
// All errors are ErrorCode::invalid_input with the message "<name>: <member>: <what was wrong>;
// expected <what>".

namespace flytecd::registration {

enum class EntityKind { task, workflow, launch_plan };
std::string_view to_string(EntityKind kind);  // "task", "workflow", "launch plan"

struct Entity {
  EntityKind kind = EntityKind::task;
  std::string file;                        // normalised member path, "core/_pb_output/049_…_1.pb"
  flyteidl::admin::TaskSpec task;          // kind == task
  flyteidl::admin::WorkflowSpec workflow;  // kind == workflow
  flyteidl::admin::LaunchPlan launch_plan;       // kind == launch_plan (id + spec; closure cleared)
  const flyteidl::core::Identifier& id() const;  // template.id / template.id / id
  flyteidl::core::Identifier* mutable_id();
};

struct Package {
  std::vector<Entity> entities;   // flytectl's order: sorted by member path (byte-wise)
  std::string fast_source_name;   // basename of the fast*.tar.gz member, empty if none
  std::string fast_source_gz;     // that member as stored (gzip); open_fast_source() inflates it
  uint64_t fast_source_size = 0;  // decompressed bytes (what is uploaded)
  std::array<unsigned char, 16> fast_source_md5{};  // MD5 of the decompressed tar
  std::vector<std::string> ignored;                 // macOS metadata skipped (sorted member paths)
  BudgetLease memory;  // what this package holds, leased from ReaderLimits::budget (if any)

  bool has_fast_source() const { return !fast_source_name.empty(); }
  size_t count(EntityKind kind) const;
};

// The default of packages.maxPackageBytes and of packages.memoryBudgetBytes: together with the
// daemon's own ~40 MiB they fit the Helm chart's 512Mi memory limit with room.
inline constexpr uint64_t k_default_max_package_bytes = 256ull << 20;
inline constexpr uint64_t k_default_memory_budget_bytes = 256ull << 20;

struct ReaderLimits {
  size_t max_entries = 10000;              // archive members of any type, directories included
  uint64_t max_entry_bytes = 64ull << 20;  // one member, or the fast source after decompression
  uint64_t max_total_bytes = k_default_max_package_bytes;  // everything decompressed
  std::string total_key = "packages.maxPackageBytes";      // the setting, named in its error
  // Shared by every reader in the process; null = nothing is accounted (tests, tools).
  MemoryBudget* budget = nullptr;
  // What a package may hold decoded when there is no budget (with one: its capacity). Checked,
  // like the budget, on an estimate from the wire format before each entity is decoded
  // (package_decode.hpp), as is a bound on decoded bytes per wire byte.
  uint64_t max_decoded_bytes = k_default_memory_budget_bytes;
  std::chrono::milliseconds budget_wait = std::chrono::minutes(5);  // while others hold it
  const std::atomic<bool>* cancel = nullptr;                        // stops that wait
};

// Reads a .tar / .tar.gz / .tgz package from memory (see the policy above). `name` prefixes every
// error message. No filesystem access; thread-safe. Errors: invalid_input (the package), or
// unavailable when the memory budget stayed busy for budget_wait.
Result<Package> read_package(std::string_view bytes, const std::string& name,
                             const ReaderLimits& limits = {});

struct LaunchPlanSummary {
  std::string name;
  bool scheduled = false;  // spec.entity_metadata has a schedule
};

// What planning needs to know about a package.
struct PackageSummary {
  size_t tasks = 0, workflows = 0;
  std::vector<LaunchPlanSummary> launch_plans;  // flytectl's order (by member path)
  std::string fast_source_name;                 // empty if none
};

// Reads a package as read_package() does for every check of its first pass (members, paths,
// limits, strays, several fast sources), decoding and checking only launch plans and files
// without a type suffix; tasks and workflows are counted by suffix and the fast source is not
// inflated, so a package summarized here may still fail read_package() (an undecodable task, a
// corrupt fast source). Holds one member at a time (leased from limits.budget). Thread-safe.
Result<PackageSummary> summarize_package(std::string_view bytes, const std::string& name,
                                         const ReaderLimits& limits = {});

// Reads up to `n` bytes into `buf`: the count, 0 at the end, or an error.
using ChunkReader = std::function<Result<size_t>(char* buf, size_t n)>;

// The decompressed fast source of `pkg`, from its first byte, as a stream of chunks (64 KiB of
// state; `pkg` must outlive the reader). Each call starts a new, independent stream.
ChunkReader open_fast_source(const Package& pkg);

// The whole decompressed fast source in memory (tests and small tools; at most `max` bytes).
Result<std::string> read_fast_source(const Package& pkg, uint64_t max = 64ull << 20);

// Lower-case hex of an MD5 digest (e.g. Package::fast_source_md5).
std::string md5_hex(const std::array<unsigned char, 16>& md5);

}  // namespace flytecd::registration
