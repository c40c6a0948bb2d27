#include "daemon/run/suspension.hpp"

#include <algorithm>

#include "daemon/common/atomic_file.hpp"
#include "daemon/common/json_dump.hpp"

namespace flytecd::run {
namespace {

constexpr size_t k_max_file_bytes = 64 * 1024;

}  // namespace

nlohmann::json to_json(const Suspension& s) {
  return {{"since", s.since}, {"reason", s.reason}, {"by", s.by}};
}

std::filesystem::path suspension_file(const std::filesystem::path& state_dir) {
  return state_dir / "suspended.json";
}

Result<std::optional<Suspension>> read_suspension(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec) && !ec) return std::optional<Suspension>();
  const auto corrupt = [&](const std::string& why) {
    return make_error(ErrorCode::invalid_input,
                      "suspension file " + file.string() + ": " + why +
                          " (fix or remove it; while it exists the daemon stays suspended)");
  };
  auto read = read_small_file(file, k_max_file_bytes, "suspension file");
  if (!read)
    return corrupt(read.error().code == ErrorCode::invalid_input ? "larger than 64 KiB"
                                                                 : "cannot be read");
  if (!*read) return std::optional<Suspension>();
  const std::string& text = **read;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return corrupt("not a JSON object");
  Suspension s;
  for (auto [key, out] :
       {std::pair{"since", &s.since}, std::pair{"reason", &s.reason}, std::pair{"by", &s.by}}) {
    auto it = j.find(key);
    if (it == j.end()) continue;
    if (!it->is_string()) return corrupt(std::string("'") + key + "' is not a string");
    *out = it->get<std::string>();
  }
  if (s.since.empty()) return corrupt("no 'since'");
  return std::optional<Suspension>(std::move(s));
}

Status write_suspension(const std::filesystem::path& file, const std::optional<Suspension>& s) {
  if (!s) return remove_file_durably(file, "suspension file");
  return write_file_atomically(file, dump_json(to_json(*s), 2) + "\n", "suspension file");
}

nlohmann::json to_json(const ProjectSuspensions& s) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [project, sp] : s) {
    auto j = to_json(sp);
    j["project"] = project;
    out.push_back(std::move(j));
  }
  return out;
}

std::filesystem::path project_suspension_file(const std::filesystem::path& state_dir) {
  return state_dir / "suspended-projects.json";
}

Result<ProjectSuspensions> read_project_suspensions(const std::filesystem::path& file) {
  const auto corrupt = [&](const std::string& why) {
    return make_error(ErrorCode::invalid_input,
                      "project suspension file " + file.string() + ": " + why +
                          " (fix or remove it; while it exists its projects stay suspended)");
  };
  auto read = read_small_file(file, k_max_file_bytes, "project suspension file");
  if (!read)
    return corrupt(read.error().code == ErrorCode::invalid_input ? "larger than 64 KiB"
                                                                 : "cannot be read");
  ProjectSuspensions out;
  if (!*read) return out;
  const nlohmann::json j = nlohmann::json::parse(**read, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("projects") || !j["projects"].is_array())
    return corrupt("not a JSON object with a 'projects' list");
  for (const auto& p : j["projects"]) {
    if (!p.is_object()) return corrupt("a project entry is not an object");
    Suspension s;
    std::string project;
    for (auto [key, dest] : {std::pair{"project", &project}, std::pair{"since", &s.since},
                             std::pair{"reason", &s.reason}, std::pair{"by", &s.by}}) {
      auto it = p.find(key);
      if (it == p.end()) continue;
      if (!it->is_string()) return corrupt(std::string("'") + key + "' is not a string");
      *dest = it->get<std::string>();
    }
    if (project.empty() || s.since.empty()) return corrupt("an entry without 'project' or 'since'");
    out[project] = std::move(s);
  }
  return out;
}

Status write_project_suspensions(const std::filesystem::path& file, const ProjectSuspensions& s) {
  if (s.empty()) return remove_file_durably(file, "project suspension file");
  return write_file_atomically(file, dump_json(nlohmann::json{{"projects", to_json(s)}}, 2) + "\n",
                               "project suspension file");
}

Result<ProjectSuspensions> change_project_suspension(ProjectSuspensions current, bool on,
                                                     const std::string& project,
                                                     const Suspension& asked) {
  const bool valid = !project.empty() && project.size() <= 63 &&
                     std::all_of(project.begin(), project.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                              (c >= '0' && c <= '9') || c == '-' || c == '_';
                     });
  if (!valid)
    return make_error(ErrorCode::invalid_input,
                      "project '" + project + "' is not a Flyte project id ([A-Za-z0-9_-])");
  auto it = current.find(project);
  if (on && it != current.end()) {
    if (!asked.reason.empty()) it->second.reason = asked.reason;  // keep since/by
  } else if (on) {
    current[project] = asked;
  } else {
    current.erase(project);
  }
  return current;
}

}  // namespace flytecd::run
