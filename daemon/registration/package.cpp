#include "daemon/registration/package.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "daemon/common/digest.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"
#include "daemon/registration/package_entity.hpp"

namespace flytecd::registration {

namespace {

constexpr std::string_view k_expected_members =
    "expected only entity files named NN_name_1.pb (task), NN_name_2.pb (workflow) or "
    "NN_name_3.pb (launch plan) and at most one fast*.tar.gz source archive, as pyflyte package "
    "writes them (macOS metadata .DS_Store, ._*, __MACOSX/ is ignored)";

struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveFree>;

std::string archive_message(archive* a) {
  const char* s = archive_error_string(a);
  return s != nullptr ? std::string(s) : std::string("unknown libarchive error");
}

std::string_view basename_of(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Splits on '/', drops empty and "." segments. Fails on ".." and absolute paths (the bare root
// directory entry "/" that real pyflyte archives carry is allowed for directories).
bool normalise_member_path(std::string_view raw, bool is_dir, std::string& out, std::string& why) {
  out.clear();
  bool absolute = !raw.empty() && raw.front() == '/';
  size_t pos = 0;
  while (pos <= raw.size()) {
    size_t next = raw.find('/', pos);
    if (next == std::string_view::npos) next = raw.size();
    std::string_view seg = raw.substr(pos, next - pos);
    pos = next + 1;
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      why = "path traversal (a \"..\" segment); expected a relative path inside the package";
      return false;
    }
    if (!out.empty()) out += '/';
    out += seg;
  }
  if (absolute && !(is_dir && out.empty())) {
    why = "absolute path; expected a relative path inside the package";
    return false;
  }
  if (out.empty() && !is_dir) {
    why = "empty file name; expected a relative path inside the package";
    return false;
  }
  return true;
}

bool is_macos_metadata(std::string_view path) {
  std::string_view base = basename_of(path);
  if (base == ".DS_Store" || base.starts_with("._")) return true;
  return path.starts_with("__MACOSX/") || path.find("/__MACOSX/") != std::string_view::npos;
}

bool is_fast_source(std::string_view path) {
  std::string_view base = basename_of(path);
  return base.starts_with("fast") && base.ends_with(".tar.gz");
}

// Reads the current entry into `out`, which must end up exactly `size` bytes (what its header
// declared and the first pass accounted for).
Status read_entry(archive* a, const std::string& name, const std::string& path, uint64_t size,
                  std::string& out) {
  // One allocation of the declared size: appending would briefly hold up to twice the member.
  out.assign(static_cast<size_t>(size), '\0');
  size_t got = 0;
  for (;;) {
    char extra = 0;
    const size_t room = out.size() - got;
    la_ssize_t n =
        room > 0 ? archive_read_data(a, out.data() + got, room) : archive_read_data(a, &extra, 1);
    if (n == 0) break;
    if (n < 0) {
      return invalid_member(name, path,
                            "cannot read (corrupt or truncated archive): " + archive_message(a) +
                                "; expected a complete tar / tar.gz archive");
    }
    if (room == 0) {
      return invalid_member(name, path,
                            "holds more data than its tar header declares (" +
                                std::to_string(size) +
                                " bytes); expected a well-formed tar archive");
    }
    got += static_cast<size_t>(n);
  }
  if (got != out.size()) {
    return invalid_member(name, path,
                          "holds " + std::to_string(got) +
                              " bytes, fewer than its tar header declares (" +
                              std::to_string(size) + "); expected a complete tar / tar.gz archive");
  }
  return ok_status();
}

// Inflates a fast source chunk by chunk (flytectl uploads the decompressed tar, and hashes that).
class Gunzip {
 public:
  Status open(std::string_view gz, const std::string& name, const std::string& path) {
    m_name = name;
    m_path = path;
    m_a.reset(archive_read_new());
    archive_read_support_filter_gzip(m_a.get());
    archive_read_support_format_raw(m_a.get());
    if (archive_read_open_memory(m_a.get(), gz.data(), gz.size()) != ARCHIVE_OK) {
      return invalid_member(name, path,
                            "fast-registration source is not gzip-compressed (" +
                                archive_message(m_a.get()) +
                                "); expected a fast*.tar.gz written by pyflyte package");
    }
    archive_entry* entry = nullptr;
    int r = archive_read_next_header(m_a.get(), &entry);
    if (r == ARCHIVE_EOF) {
      return invalid_member(name, path,
                            "fast-registration source is empty; expected a gzip-compressed tar");
    }
    if (r < ARCHIVE_WARN || archive_filter_code(m_a.get(), 0) != ARCHIVE_FILTER_GZIP) {
      return invalid_member(
          name, path,
          "fast-registration source is not gzip-compressed; expected a fast*.tar.gz "
          "written by pyflyte package");
    }
    return ok_status();
  }

  Result<size_t> read(char* buf, size_t n) {
    la_ssize_t got = archive_read_data(m_a.get(), buf, n);
    if (got < 0) {
      return invalid_member(
          m_name, m_path,
          "cannot decompress the fast-registration source (corrupt or truncated): " +
              archive_message(m_a.get()) + "; expected a complete gzip stream");
    }
    return static_cast<size_t>(got);
  }

 private:
  ArchivePtr m_a;
  std::string m_name, m_path;
};

constexpr size_t k_chunk = 64 * 1024;

struct DigestFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// Streams the fast source once: its decompressed size (at most `max`) and MD5, nothing kept.
Status measure_fast_source(Package& pkg, const std::string& name, const std::string& path,
                           uint64_t max, std::string_view limit) {
  Gunzip z;
  if (auto s = z.open(pkg.fast_source_gz, name, path); !s) return s;
  std::unique_ptr<EVP_MD_CTX, DigestFree> md(EVP_MD_CTX_new());
  if (!md || EVP_DigestInit_ex(md.get(), EVP_md5(), nullptr) != 1)
    return make_error(ErrorCode::internal, name + ": cannot initialise MD5");
  std::vector<char> buf(k_chunk);
  uint64_t size = 0;
  for (;;) {
    auto n = z.read(buf.data(), buf.size());
    if (!n) return n.error();
    if (*n == 0) break;
    if (size + *n > max) {
      return invalid_member(name, path,
                            "larger than the " + std::string(limit) + " limit of " +
                                std::to_string(max) +
                                " bytes after decompression; expected a smaller file");
    }
    size += *n;
    EVP_DigestUpdate(md.get(), buf.data(), *n);
  }
  unsigned int len = 0;
  EVP_DigestFinal_ex(md.get(), pkg.fast_source_md5.data(), &len);
  pkg.fast_source_size = size;
  return ok_status();
}

Result<ArchivePtr> open_archive(std::string_view bytes, const std::string& name) {
  ArchivePtr a(archive_read_new());
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    return invalid_member(name, "",
                          "not a tar archive (" + archive_message(a.get()) +
                              "); expected a .tar, .tar.gz or .tgz written by pyflyte package");
  }
  return a;
}

enum class Next { end, directory, file };

// Reads the next header and applies the per-entry checks both passes share (entry count, path,
// file type). On `file`, `path` is the normalised member path.
Result<Next> next_entry(archive* a, const std::string& name, const ReaderLimits& limits,
                        size_t& entries, archive_entry*& entry, std::string& path) {
  int r = archive_read_next_header(a, &entry);
  if (r == ARCHIVE_EOF) return Next::end;
  if (r < ARCHIVE_WARN) {
    std::string what = entries == 0 ? "not a tar archive" : "corrupt or truncated archive";
    return invalid_member(
        name, "",
        what + " after " + std::to_string(entries) + " entries (" + archive_message(a) +
            "); expected a complete .tar, .tar.gz or .tgz written by pyflyte package");
  }
  if (++entries > limits.max_entries) {
    return invalid_member(name, "",
                          "more than " + std::to_string(limits.max_entries) +
                              " entries; expected a package within the entry limit");
  }
  const char* raw_path = archive_entry_pathname(entry);
  if (raw_path == nullptr || *raw_path == '\0') {
    return invalid_member(name, "entry #" + std::to_string(entries),
                          "has no readable path; expected a file name");
  }
  const std::string raw(raw_path);
  const auto type = archive_entry_filetype(entry);
  if (archive_entry_hardlink(entry) != nullptr) {
    return invalid_member(name, raw,
                          "is a hard link to " + std::string(archive_entry_hardlink(entry)) +
                              "; expected regular files only");
  }
  if (type == AE_IFLNK) {
    const char* target = archive_entry_symlink(entry);
    return invalid_member(name, raw,
                          "is a symbolic link to " + std::string(target ? target : "?") +
                              "; expected regular files only");
  }
  if (type != AE_IFREG && type != AE_IFDIR) {
    std::string kind = type == AE_IFCHR    ? "a character device"
                       : type == AE_IFBLK  ? "a block device"
                       : type == AE_IFIFO  ? "a FIFO"
                       : type == AE_IFSOCK ? "a socket"
                                           : "a special file";
    return invalid_member(name, raw, "is " + kind + "; expected regular files only");
  }
  std::string why;
  if (!normalise_member_path(raw, type == AE_IFDIR, path, why))
    return invalid_member(name, raw, why);
  return type == AE_IFDIR ? Next::directory : Next::file;
}

// A member the second pass reads: an entity file or a fast source, with its declared size.
struct Member {
  std::string path;
  uint64_t size = 0;
  bool fast = false;
};

// The first pass: headers only (member data is skipped, never held).
struct Scan {
  std::vector<Member> members;  // archive order
  std::vector<std::string> ignored;
  std::vector<std::string> stray;
  std::vector<std::string> fast;  // paths of fast sources
  uint64_t total = 0;             // declared bytes of every regular file
  uint64_t entity_bytes = 0, largest_entity = 0, fast_bytes = 0;
  size_t entity_count = 0;
};

// Called by scan() for each entity member (not a fast source) instead of skipping its data: it
// may read the member from `a` (the summary reads what it decodes in the same pass).
using MemberHook = std::function<Status(archive* a, const std::string& path, uint64_t declared)>;

Status scan(std::string_view bytes, const std::string& name, const ReaderLimits& limits, Scan& c,
            const MemberHook& hook = {}) {
  auto a = open_archive(bytes, name);
  if (!a) return a.error();
  std::set<std::string> seen;
  size_t entries = 0;
  for (;;) {
    archive_entry* entry = nullptr;
    std::string path;
    auto next = next_entry(a->get(), name, limits, entries, entry, path);
    if (!next) return next.error();
    if (*next == Next::end) break;
    if (*next == Next::directory) continue;

    const uint64_t declared =
        archive_entry_size_is_set(entry) ? static_cast<uint64_t>(archive_entry_size(entry)) : 0;
    if (declared > limits.max_entry_bytes) {
      return invalid_member(
          name, path,
          std::to_string(declared) + " bytes is larger than the per-entry limit of " +
              std::to_string(limits.max_entry_bytes) + " bytes; expected a smaller file");
    }
    if (c.total + declared > limits.max_total_bytes) {
      return invalid_member(name, path,
                            "the package exceeds the total limit of " +
                                std::to_string(limits.max_total_bytes) + " decompressed bytes (" +
                                limits.total_key + ") here, after " + std::to_string(c.total) +
                                " bytes; expected a smaller package, or raise " + limits.total_key);
    }
    c.total += declared;
    const bool entity = path.ends_with(".pb") && !is_fast_source(path) &&
                        !is_macos_metadata(path) && !seen.count(path);
    if (hook && entity) {
      if (auto s = hook(a->get(), path, declared); !s) return s;
    } else {
      archive_read_data_skip(a->get());
    }
    if (is_macos_metadata(path)) {
      c.ignored.push_back(path);
      continue;
    }
    if (!seen.insert(path).second) {
      return invalid_member(name, path,
                            "appears twice in the archive (ambiguous); expected each file once");
    }
    const bool fast = is_fast_source(path);
    if (!fast && !path.ends_with(".pb")) {
      c.stray.push_back(path);
      continue;
    }
    if (fast) {
      c.fast.push_back(path);
      c.fast_bytes = std::max(c.fast_bytes, declared);
    } else {
      c.entity_bytes += declared;
      c.largest_entity = std::max(c.largest_entity, declared);
      ++c.entity_count;
    }
    c.members.push_back(Member{path, declared, fast});
  }
  return ok_status();
}

// What a decoded entity occupies in memory.
uint64_t footprint(const Entity& e) {
  size_t message = 0;
  switch (e.kind) {
    case EntityKind::task:
      message = e.task.SpaceUsedLong();
      break;
    case EntityKind::workflow:
      message = e.workflow.SpaceUsedLong();
      break;
    case EntityKind::launch_plan:
      message = e.launch_plan.SpaceUsedLong();
      break;
  }
  return sizeof(Entity) + e.file.capacity() + message;
}

// Memory to lease before the second pass: the fast source as stored, the one raw member being
// decoded, and every entity decoded. A decoded message takes more room than its wire form: about
// the same for a large string, ~5x for pyflyte's small entities (flytesnacks: 53 KB of .pb hold
// 310 KB decoded), hence twice the bytes plus a fixed allowance per entity. What is actually
// held is measured as each entity is decoded; the lease grows past this (if the budget has the
// bytes free) or is trimmed down to it.
uint64_t estimate_memory(const Scan& c) {
  return c.fast_bytes + c.largest_entity + 2 * c.entity_bytes +
         (sizeof(Entity) + 8 * 1024) * c.entity_count;
}

// Grows `pkg.memory` to `bytes` (never waits: the lease was taken whole up front).
Status hold(Package& pkg, uint64_t bytes, const std::string& name, const ReaderLimits& limits) {
  if (limits.budget == nullptr) {
    if (bytes <= limits.max_decoded_bytes) {
      if (bytes > pkg.memory.bytes()) pkg.memory.try_grow(bytes - pkg.memory.bytes());
      return ok_status();
    }
    return invalid_member(
        name, "",
        "decoding needs " + std::to_string(bytes) + " bytes of memory, more than " +
            std::to_string(limits.max_decoded_bytes) +
            " (the default of packages.memoryBudgetBytes); expected a smaller package");
  }
  if (bytes <= pkg.memory.bytes() || pkg.memory.try_grow(bytes - pkg.memory.bytes()))
    return ok_status();
  const MemoryBudget& b = *limits.budget;
  const bool never = bytes > b.capacity();
  return make_error(
      never ? ErrorCode::invalid_input : ErrorCode::unavailable,
      name + ": decoding needs " + std::to_string(bytes) + " bytes of memory, more than " +
          (never ? "the package memory budget of " + std::to_string(b.capacity()) + " bytes (" +
                       b.key() + "); expected a smaller package, or raise " + b.key()
                 : "the package memory budget (" + b.key() +
                       ") has free while other registrations hold it; retried "
                       "next reconcile"));
}

// The second pass: reads, decodes and drops one entity file at a time, and keeps the fast source
// as stored.
Status read_members(std::string_view bytes, const std::string& name, const ReaderLimits& limits,
                    const Scan& c, Package& pkg) {
  if (limits.budget != nullptr) {
    auto lease =
        limits.budget->acquire(estimate_memory(c), name, limits.budget_wait, limits.cancel);
    if (!lease) return lease.error();
    pkg.memory = std::move(*lease);
  }
  auto a = open_archive(bytes, name);
  if (!a) return a.error();
  pkg.entities.reserve(c.entity_count);
  uint64_t held = sizeof(Entity) * c.entity_count;
  size_t entries = 0, next_member = 0;
  for (;;) {
    archive_entry* entry = nullptr;
    std::string path;
    auto next = next_entry(a->get(), name, limits, entries, entry, path);
    if (!next) return next.error();
    if (*next == Next::end) break;
    if (*next == Next::directory || next_member == c.members.size() ||
        c.members[next_member].path != path)
      continue;  // not a member the first pass chose (metadata)
    const Member& m = c.members[next_member++];
    if (auto s = hold(pkg, held + m.size, name, limits); !s) return s;
    if (m.fast) {
      if (auto s = read_entry(a->get(), name, path, m.size, pkg.fast_source_gz); !s) return s;
      held += m.size;
      continue;
    }
    std::string raw;
    if (auto s = read_entry(a->get(), name, path, m.size, raw); !s) return s;
    DecodeGuard guard = guard_for(limits);
    guard.reserve = [&](uint64_t estimate) {
      return hold(pkg, held + m.size + estimate, name, limits);
    };
    auto e = decode_entity(name, path, raw, guard);
    if (!e) return e.error();
    const uint64_t decoded = footprint(*e) - sizeof(Entity);
    if (auto s = hold(pkg, held + m.size + decoded, name, limits); !s) return s;
    held += decoded;
    pkg.entities.push_back(std::move(*e));
  }
  if (next_member != c.members.size())
    return make_error(ErrorCode::internal, name + ": the archive changed between two reads");
  pkg.memory.shrink_to(held);
  return ok_status();
}

Error stray_error(const std::string& name, const std::vector<std::string>& stray) {
  std::string msg = name + ": ";
  msg += stray.size() == 1
             ? "a file that is not part of a pyflyte package: "
             : std::to_string(stray.size()) + " files that are not part of a pyflyte package: ";
  for (size_t i = 0; i < stray.size(); ++i) {
    if (i > 0) msg += ", ";
    msg += scan::printable(stray[i], 4096);
    if (basename_of(stray[i]).starts_with("fast")) {
      msg += " (looks like a fast-registration source archive, but its name must end in .tar.gz)";
    }
  }
  msg += "; ";
  msg += k_expected_members;
  return make_error(ErrorCode::invalid_input, std::move(msg));
}

}  // namespace

std::string_view to_string(EntityKind kind) {
  switch (kind) {
    case EntityKind::task:
      return "task";
    case EntityKind::workflow:
      return "workflow";
    case EntityKind::launch_plan:
      return "launch plan";
  }
  return "?";
}

const flyteidl::core::Identifier& Entity::id() const {
  switch (kind) {
    case EntityKind::task:
      return task.template_().id();
    case EntityKind::workflow:
      return workflow.template_().id();
    case EntityKind::launch_plan:
      return launch_plan.id();
  }
  return launch_plan.id();
}

flyteidl::core::Identifier* Entity::mutable_id() {
  switch (kind) {
    case EntityKind::task:
      return task.mutable_template_()->mutable_id();
    case EntityKind::workflow:
      return workflow.mutable_template_()->mutable_id();
    case EntityKind::launch_plan:
      return launch_plan.mutable_id();
  }
  return launch_plan.mutable_id();
}

size_t Package::count(EntityKind kind) const {
  return static_cast<size_t>(std::count_if(entities.begin(), entities.end(),
                                           [kind](const Entity& e) { return e.kind == kind; }));
}

std::string md5_hex(const std::array<unsigned char, 16>& md5) { return digest::to_hex(md5); }

namespace {

// What both readers require of an archive's members once scanned: no stray files, at most one
// fast-registration source, at least one entity.
Status check_members(const std::string& name, const Scan& c) {
  if (!c.stray.empty()) return stray_error(name, c.stray);
  if (c.fast.size() > 1) {
    return invalid_member(
        name, "",
        "more than one fast-registration source archive (" + c.fast[0] + ", " + c.fast[1] +
            (c.fast.size() > 2 ? ", …" : "") +
            "); expected at most one fast*.tar.gz (flytectl would silently take the "
            "last in sorted order)");
  }
  if (c.entity_count == 0) {
    return invalid_member(name, "",
                          "contains no entity files; expected NN_name_{1,2,3}.pb files written by "
                          "pyflyte package");
  }
  return ok_status();
}

}  // namespace

Result<Package> read_package(std::string_view bytes, const std::string& name,
                             const ReaderLimits& limits) {
  if (bytes.empty()) {
    return invalid_member(name, "", "is empty (0 bytes); expected a .tar, .tar.gz or .tgz package");
  }
  Scan c;
  if (auto st = scan(bytes, name, limits, c); !st) return st.error();
  if (auto st = check_members(name, c); !st) return st.error();

  Package pkg;
  if (auto st = read_members(bytes, name, limits, c, pkg); !st) return st.error();
  std::sort(pkg.entities.begin(), pkg.entities.end(),
            [](const Entity& x, const Entity& y) { return x.file < y.file; });
  if (!c.fast.empty()) {
    const std::string& path = c.fast.front();
    const uint64_t left = limits.max_total_bytes - c.total;
    const bool entry_bound = limits.max_entry_bytes <= left;
    if (auto st = measure_fast_source(
            pkg, name, path, entry_bound ? limits.max_entry_bytes : left,
            entry_bound ? std::string("decompressed fast source")
                        : "total package (" + limits.total_key + ", what is left of it)");
        !st)
      return st.error();
    pkg.fast_source_name = std::string(basename_of(path));
  }
  std::sort(c.ignored.begin(), c.ignored.end());
  pkg.ignored = std::move(c.ignored);
  return pkg;
}

Result<PackageSummary> summarize_package(std::string_view bytes, const std::string& name,
                                         const ReaderLimits& limits) {
  if (bytes.empty()) {
    return invalid_member(name, "", "is empty (0 bytes); expected a .tar, .tar.gz or .tgz package");
  }
  PackageSummary out;
  std::vector<std::pair<std::string, LaunchPlanSummary>> plans;  // by member path
  // One pass: tasks and workflows counted by suffix, launch plans and files without a type
  // suffix read and decoded as they come (one at a time, each within the per-entry bound).
  auto decode = [&](archive* a, const std::string& path, uint64_t declared) -> Status {
    auto kind = kind_from_suffix(path);
    if (kind == EntityKind::task || kind == EntityKind::workflow) {
      ++(kind == EntityKind::task ? out.tasks : out.workflows);
      archive_read_data_skip(a);
      return ok_status();
    }
    BudgetLease lease;
    if (limits.budget != nullptr) {
      auto l = limits.budget->acquire(2 * declared + sizeof(Entity) + 8 * 1024, name,
                                      limits.budget_wait, limits.cancel);
      if (!l) return l.error();
      lease = std::move(*l);
    }
    std::string raw;
    if (auto s = read_entry(a, name, path, declared, raw); !s) return s;
    DecodeGuard guard = guard_for(limits);
    guard.reserve = [&](uint64_t estimate) -> Status {
      const uint64_t want = declared + estimate;
      if (want <= lease.bytes() || lease.try_grow(want - lease.bytes())) return ok_status();
      return make_error(ErrorCode::unavailable,
                        name + ": " + path + ": decoding needs about " + std::to_string(want) +
                            " bytes of memory, more than the package memory budget (" +
                            limits.budget->key() +
                            ") has free while other registrations hold it; retried next reconcile");
    };
    auto e = decode_entity(name, path, raw, guard);
    if (!e) return e.error();
    if (e->kind == EntityKind::launch_plan)
      plans.push_back(
          {path, LaunchPlanSummary{e->id().name(),
                                   e->launch_plan.spec().entity_metadata().has_schedule()}});
    else
      ++(e->kind == EntityKind::task ? out.tasks : out.workflows);
    return ok_status();
  };
  Scan c;
  if (auto st = scan(bytes, name, limits, c, decode); !st) return st.error();
  if (auto st = check_members(name, c); !st) return st.error();
  if (!c.fast.empty()) out.fast_source_name = std::string(basename_of(c.fast.front()));
  std::sort(plans.begin(), plans.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [path, lp] : plans) out.launch_plans.push_back(std::move(lp));
  return out;
}

ChunkReader open_fast_source(const Package& pkg) {
  auto z = std::make_shared<Gunzip>();
  auto opened = std::make_shared<std::optional<Status>>();
  return [&pkg, z, opened](char* buf, size_t n) -> Result<size_t> {
    if (!*opened) *opened = z->open(pkg.fast_source_gz, pkg.fast_source_name, "fast source");
    if (!**opened) return (*opened)->error();
    return z->read(buf, n);
  };
}

Result<std::string> read_fast_source(const Package& pkg, uint64_t max) {
  auto read = open_fast_source(pkg);
  std::string out;
  std::vector<char> buf(k_chunk);
  for (;;) {
    auto n = read(buf.data(), buf.size());
    if (!n) return n.error();
    if (*n == 0) return out;
    if (out.size() + *n > max)
      return make_error(ErrorCode::invalid_input,
                        pkg.fast_source_name + ": larger than " + std::to_string(max) + " bytes");
    out.append(buf.data(), *n);
  }
}

}  // namespace flytecd::registration
