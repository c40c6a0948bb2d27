#include "daemon/common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace flytecd {
namespace {

Error io_error(const std::string& what, const std::filesystem::path& file, const std::string& op) {
  return make_error(ErrorCode::unavailable,
                    what + " " + file.string() + ": " + op + ": " + std::strerror(errno));
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

// A rename is only durable once the directory entry is on disk.
void fsync_dir(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

Status write_file_atomically(const std::filesystem::path& file, const std::string& data,
                             const std::string& what) {
  const auto dir = file.parent_path();
  if (!dir.empty())
    if (auto s = create_private_directory(dir, what + " directory"); !s) return s;
  const std::filesystem::path tmp = file.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return io_error(what, tmp, "cannot create");
  // An earlier .tmp (or a umask such as 0277) may have other bits: exactly 0600.
  if (!write_all(fd, data) || ::fchmod(fd, 0600) != 0 || ::fsync(fd) != 0) {
    auto e = io_error(what, tmp, "cannot write");
    ::close(fd);
    ::unlink(tmp.c_str());
    return e;
  }
  if (::close(fd) != 0) {
    auto e = io_error(what, tmp, "cannot close");
    ::unlink(tmp.c_str());
    return e;
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    auto e = io_error(what, file, "cannot replace");
    ::unlink(tmp.c_str());
    return e;
  }
  fsync_dir(dir);
  return ok_status();
}

Status create_private_directory(const std::filesystem::path& dir, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return ok_status();
  ec.clear();  // the probe's "no such file" is not create_directories' error
  const auto parent = dir.parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec)
    return make_error(ErrorCode::unavailable, what + " " + dir.string() + ": cannot create " +
                                                  parent.string() + ": " + ec.message());
  if (::mkdir(dir.c_str(), 0700) != 0) {
    if (errno == EEXIST && std::filesystem::is_directory(dir, ec)) return ok_status();  // a race
    return io_error(what, dir, "cannot create");
  }
  // mkdir's mode is masked by the umask; the directory must not be wider, nor narrower, than 0700.
  if (::chmod(dir.c_str(), 0700) != 0) return io_error(what, dir, "cannot set mode 0700");
  return ok_status();
}

Status remove_file_durably(const std::filesystem::path& file, const std::string& what) {
  std::error_code ec;
  std::filesystem::remove(file, ec);
  if (ec)
    return make_error(ErrorCode::unavailable,
                      what + " " + file.string() + ": cannot remove: " + ec.message());
  fsync_dir(file.parent_path());
  return ok_status();
}

Result<std::optional<std::string>> read_small_file(const std::filesystem::path& file,
                                                   size_t max_bytes, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec) && !ec) return std::optional<std::string>();
  std::ifstream in(file, std::ios::binary);
  if (!in) return io_error(what, file, "cannot be read");
  std::string text;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes)
      return make_error(ErrorCode::invalid_input, what + " " + file.string() + ": larger than " +
                                                      std::to_string(max_bytes) + " bytes");
  }
  return std::optional<std::string>(std::move(text));
}

}  // namespace flytecd
