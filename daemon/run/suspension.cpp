#include "daemon/run/suspension.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace flytecd::run {
namespace {

constexpr size_t k_max_file_bytes = 64 * 1024;

Error io_error(const std::filesystem::path& file, const std::string& what) {
  return make_error(ErrorCode::unavailable,
                    "suspension file " + file.string() + ": " + what + ": " + std::strerror(errno));
}

// Writes all of `data` to fd; false on error (errno set).
bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// The rename is only durable once the directory entry is on disk.
void fsync_dir(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

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
  std::ifstream in(file, std::ios::binary);
  if (!in) return corrupt("cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.size() > k_max_file_bytes) return corrupt("larger than 64 KiB");
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
  const auto dir = file.parent_path();
  if (!s) {
    std::error_code ec;
    std::filesystem::remove(file, ec);
    if (ec)
      return make_error(ErrorCode::unavailable,
                        "suspension file " + file.string() + ": cannot remove: " + ec.message());
    fsync_dir(dir);
    return ok_status();
  }
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  const std::filesystem::path tmp = file.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(tmp, "cannot create");
  const std::string data = to_json(*s).dump(2) + "\n";
  if (!write_all(fd, data) || ::fsync(fd) != 0) {
    auto e = io_error(tmp, "cannot write");
    ::close(fd);
    ::unlink(tmp.c_str());
    return e;
  }
  if (::close(fd) != 0) {
    auto e = io_error(tmp, "cannot close");
    ::unlink(tmp.c_str());
    return e;
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    auto e = io_error(file, "cannot replace");
    ::unlink(tmp.c_str());
    return e;
  }
  fsync_dir(dir);
  return ok_status();
}

}  // namespace flytecd::run
