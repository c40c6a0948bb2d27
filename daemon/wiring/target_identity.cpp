#include "daemon/wiring/target_identity.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "daemon/common/atomic_file.hpp"
#include "daemon/common/digest.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/pass/applied_record.hpp"
#include "daemon/wiring/wiring.hpp"

namespace flytecd::wiring {

namespace fs = std::filesystem;

std::string normalize_endpoint(std::string_view e) {
  std::string s(e);
  for (std::string_view prefix : {"dns:///", "dns://", "dns:", "grpcs://", "grpc://", "https://",
                                  "http://", "ipv4:", "ipv6:"})
    if (s.rfind(prefix, 0) == 0) {
      s.erase(0, prefix.size());
      break;
    }
  while (!s.empty() && s.back() == '/') s.pop_back();
  if (s.rfind("unix:", 0) == 0) return s;  // a socket path: case matters
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // host:port, [v6]:port, or a bare host (gRPC's default port).
  const bool bracketed = !s.empty() && s.front() == '[';
  const size_t close = bracketed ? s.find(']') : std::string::npos;
  const size_t colon = bracketed
                           ? (close == std::string::npos ? std::string::npos : s.find(':', close))
                           : s.rfind(':');
  const bool bare_v6 = !bracketed && std::count(s.begin(), s.end(), ':') > 1;
  if (bare_v6) return "[" + s + "]:443";
  if (colon == std::string::npos || colon + 1 == s.size()) {
    if (colon != std::string::npos) s.pop_back();
    s += ":443";
  }
  return s;
}

namespace {

std::string slug_of(const std::string& id, const std::string& readable) {
  std::string out;
  for (char c : readable) {
    const bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
    if (safe)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
    if (out.size() >= 64) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out + "-" + digest::sha256_hex(id).substr(0, 12);
}

constexpr size_t k_max_small = 64 * 1024;

std::string read_text(const fs::path& p) {
  auto r = read_small_file(p, k_max_small, p.string());
  return r && *r ? **r : std::string();
}

std::string target_of(const fs::path& dir) {
  const std::string text = read_text(dir / "target.json");
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("target") || !j["target"].is_string()) return "";
  return j["target"].get<std::string>();
}

// An earlier flytecd kept one ledger at the top of the state directory, for whatever target it
// was run against. It belongs to this target only if its record says so.
bool legacy_ledger_is_ours(const config::Config& cfg) {
  std::error_code ec;
  if (!fs::exists(fs::path(cfg.state_dir) / "ledger.db", ec)) return false;
  const std::string text = read_text(pass::record_file(cfg.state_dir));
  if (text.empty()) return false;
  auto record = pass::parse_applied_record(text, "applied-revision record");
  return record && record->config_fingerprint == ownership_fingerprint(cfg);
}

void adopt_legacy_ledger(const config::Config& cfg, const fs::path& dir,
                         std::vector<std::string>& notices) {
  const fs::path top(cfg.state_dir);
  std::error_code ec;
  if (!fs::exists(top / "ledger.db", ec) || fs::exists(dir / "ledger.db", ec)) return;
  if (legacy_ledger_is_ours(cfg)) {
    for (const char* name :
         {"ledger.db", "ledger.db-wal", "ledger.db-shm", "applied-revision.json"}) {
      if (!fs::exists(top / name, ec)) continue;
      fs::rename(top / name, dir / name, ec);
      if (ec) {
        notices.push_back("could not move " + (top / name).string() + " to " + dir.string() + ": " +
                          ec.message());
        return;
      }
    }
    notices.push_back("the ledger of " + target_identity(cfg).id + " moved from " +
                      (top / "ledger.db").string() + " to " + (dir / "ledger.db").string() +
                      " (ownership is kept per target)");
    return;
  }
  notices.push_back(
      (top / "ledger.db").string() +
      " is a ledger from an earlier flytecd that does not say which target it describes (its "
      "applied-revision record is missing or was written for another target, repository or "
      "domains): it is not used for " +
      target_identity(cfg).id +
      ". If it is this target's, move ledger.db and applied-revision.json into " + dir.string());
}

}  // namespace

TargetIdentity target_identity(const config::Config& cfg) {
  TargetIdentity t;
  std::string readable;
  for (const SinkBackend* row : selected_sinks(cfg)) {
    const TargetPart part = row->part(cfg);
    t.id += (t.id.empty() ? "" : "; ") + part.id;
    readable += (readable.empty() ? "" : "-") + part.readable;
  }
  t.slug = slug_of(t.id, readable);
  return t;
}

fs::path target_dir(const config::Config& cfg) {
  return fs::path(cfg.state_dir) / "targets" / target_identity(cfg).slug;
}

Result<TargetStatePrep> prepare_target_state(const config::Config& cfg, bool write) {
  TargetStatePrep out;
  const TargetIdentity id = target_identity(cfg);
  out.dir = target_dir(cfg);
  std::error_code ec;
  fs::create_directories(out.dir, ec);
  if (ec)
    return make_error(ErrorCode::invalid_input,
                      "state directory " + out.dir.string() + ": " + ec.message());
  ::chmod(out.dir.parent_path().c_str(), 0700);
  ::chmod(out.dir.c_str(), 0700);
  if (target_of(out.dir) != id.id) {
    nlohmann::json j = {{"target", id.id}};
    if (auto s =
            write_file_atomically(out.dir / "target.json", dump_json(j) + "\n", "target identity");
        !s)
      return s.error();
  }
  out.ledger = out.dir / "ledger.db";
  if (!write) {
    // A reader moves nothing: it reads an earlier flytecd's ledger where it is, if it is ours.
    if (!fs::exists(out.ledger, ec) && legacy_ledger_is_ours(cfg))
      out.ledger = fs::path(cfg.state_dir) / "ledger.db";
    return out;
  }
  adopt_legacy_ledger(cfg, out.dir, out.notices);
  const fs::path last = fs::path(cfg.state_dir) / "last-target";
  std::string before = read_text(last);
  while (!before.empty() && (before.back() == '\n' || before.back() == '\r')) before.pop_back();
  if (before != id.id) {
    if (!before.empty())
      out.notices.push_back("state directory " + cfg.state_dir + " was last used with " + before +
                            "; " + id.id + " has ownership of its own (" + out.dir.string() +
                            "): nothing flytecd recorded for " + before + " is consulted for it");
    if (auto s = write_file_atomically(last, id.id + "\n", "last target"); !s) return s.error();
  }
  return out;
}

std::vector<std::pair<std::string, fs::path>> known_targets(const std::string& state_dir) {
  std::vector<std::pair<std::string, fs::path>> out;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(state_dir) / "targets", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    std::string id = target_of(it->path());
    if (!id.empty() && fs::exists(it->path() / "ledger.db", ec))
      out.emplace_back(std::move(id), it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace flytecd::wiring
