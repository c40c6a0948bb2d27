#include "daemon/pass/applied_record.hpp"

#include <nlohmann/json.hpp>

#include "daemon/common/atomic_file.hpp"
#include "daemon/common/digest.hpp"
#include "daemon/common/json_dump.hpp"

namespace flytecd::pass {
namespace {

constexpr size_t k_max_record_bytes = 64 * 1024;

}  // namespace

std::string to_json(const AppliedRecord& r) {
  nlohmann::ordered_json j;
  j["converged"] = r.converged;
  j["inFlight"] = r.in_flight;
  j["configFingerprint"] = r.config_fingerprint;
  j["version"] = r.version;
  j["writer"] = r.writer;
  j["updatedAt"] = r.updated_at;
  return dump_json(j);
}

Result<AppliedRecord> parse_applied_record(std::string_view text, const std::string& where) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::invalid_input,
                      "applied-revision record " + where + ": " + why +
                          " (expected a JSON object with converged, inFlight, "
                          "configFingerprint, version, writer, updatedAt)");
  };
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  AppliedRecord r;
  for (auto [key, out] : {std::pair{"converged", &r.converged}, std::pair{"inFlight", &r.in_flight},
                          std::pair{"configFingerprint", &r.config_fingerprint},
                          std::pair{"version", &r.version}, std::pair{"writer", &r.writer}}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string()) return bad(std::string("'") + key + "' is not a string");
    *out = it->get<std::string>();
  }
  if (auto it = j.find("updatedAt"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer()) return bad("'updatedAt' is not an integer");
    r.updated_at = it->get<int64_t>();
  }
  return r;
}

FileRecordStore::FileRecordStore(std::filesystem::path path) : m_path(std::move(path)) {}

std::string FileRecordStore::describe() const { return "file " + m_path.string(); }

Result<std::optional<StoredRecord>> FileRecordStore::read() {
  auto text = read_small_file(m_path, k_max_record_bytes, "applied-revision record");
  if (!text) return text.error();
  if (!*text) return std::optional<StoredRecord>();
  auto rec = parse_applied_record(**text, m_path.string());
  if (!rec) return rec.error();
  return std::optional<StoredRecord>(StoredRecord{std::move(*rec), digest::sha256_hex(**text)});
}

Result<std::string> FileRecordStore::write(const AppliedRecord& record,
                                           const std::string& expected_token) {
  auto current = read();
  // A record that cannot be parsed (a torn or hand-edited file) is replaced by any writer.
  const std::string have = current && *current ? (*current)->token : "";
  if (current && have != expected_token)
    return make_error(ErrorCode::conflict, "applied-revision record " + m_path.string() +
                                               " was changed by another writer since it was read");
  const std::string text = to_json(record) + "\n";
  if (auto s = write_file_atomically(m_path, text, "applied-revision record"); !s) return s.error();
  return digest::sha256_hex(text);
}

std::filesystem::path record_file(const std::string& state_dir) {
  return std::filesystem::path(state_dir) / "applied-revision.json";
}

}  // namespace flytecd::pass
