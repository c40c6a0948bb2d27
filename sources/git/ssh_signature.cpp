#include "sources/git/ssh_signature.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "daemon/common/subprocess.hpp"

namespace flytecd::sources::git {
namespace {

constexpr std::string_view k_ssh_armor = "-----BEGIN SSH SIGNATURE-----";

// The first non-empty line of ssh-keygen's diagnostics, bounded, for error messages.
std::string first_line(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) return line.size() > 200 ? line.substr(0, 200) + "…" : line;
    start = end + 1;
  }
  return "no diagnostics";
}

// A 0600 temp file removed on destruction; mkstemp never follows an attacker's symlink.
class TempFile {
 public:
  static Result<TempFile> create(const std::string& dir, const std::string& contents) {
    std::string path = dir + "/flytecd-sig-XXXXXX";
    int fd = ::mkstemp(path.data());
    if (fd < 0)
      return make_error(ErrorCode::internal,
                        "cannot create a temp file in " + dir + ": " + std::strerror(errno));
    TempFile file(path);
    size_t done = 0;
    while (done < contents.size()) {
      ssize_t w = ::write(fd, contents.data() + done, contents.size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        ::close(fd);
        return make_error(ErrorCode::internal, "cannot write " + path);
      }
      done += static_cast<size_t>(w);
    }
    ::close(fd);
    return file;
  }
  TempFile(TempFile&& other) noexcept : m_path(std::move(other.m_path)) { other.m_path.clear(); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  TempFile& operator=(TempFile&&) = delete;
  ~TempFile() {
    if (!m_path.empty()) ::unlink(m_path.c_str());
  }
  const std::string& path() const { return m_path; }

 private:
  explicit TempFile(std::string path) : m_path(std::move(path)) {}
  std::string m_path;
};

}  // namespace

Result<std::string> find_ssh_keygen() {
  if (auto path = find_executable("ssh-keygen")) return *path;
  return make_error(ErrorCode::invalid_input,
                    "SSH signature verification needs ssh-keygen, which is not installed "
                    "(Debian: apt-get install openssh-client)");
}

Status verify_ssh_commit_signature(const SignedCommit& commit,
                                   const std::string& allowed_signers_file,
                                   const std::string& tmp_dir) {
  const std::string what = "commit " + commit.commit_id;
  if (commit.signature.find(k_ssh_armor) == std::string::npos)
    return make_error(ErrorCode::invalid_input,
                      what +
                          " is signed, but not with an SSH key (OpenPGP or X.509); the "
                          "signature policy accepts only SSH signatures");
  if (commit.committer_email.empty())
    return make_error(ErrorCode::invalid_input,
                      what + " has no committer email to look up in allowed_signers");
  auto keygen = find_ssh_keygen();
  if (!keygen) return keygen.error();
  auto sigfile = TempFile::create(tmp_dir, commit.signature);
  if (!sigfile) return sigfile.error();
  // ssh-keygen is given no environment beyond PATH and a C locale: no secrets reach it, and its
  // messages stay parseable.
  auto out =
      run_process({*keygen, "-Y", "verify", "-f", allowed_signers_file, "-I",
                   commit.committer_email, "-n", "git", "-s", sigfile->path()},
                  commit.signed_data, {"PATH=/usr/bin:/bin", "LC_ALL=C"}, std::chrono::seconds(30));
  if (!out) return out.error().wrap("ssh-keygen -Y verify");
  if (out->exit_code != 0)
    return make_error(ErrorCode::invalid_input,
                      what + " has an SSH signature that is not valid for committer <" +
                          commit.committer_email + "> under " + allowed_signers_file +
                          " (ssh-keygen: " + first_line(out->err + out->out) + ")");
  return ok_status();
}

}  // namespace flytecd::sources::git
