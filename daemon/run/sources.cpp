#include <filesystem>

#include "daemon/run/daemon.hpp"
#include "sources/git/git_source.hpp"

namespace flytecd::run {
namespace {

// sources::Source over the libgit2 mirror.
class GitAdapter : public sources::Source {
 public:
  explicit GitAdapter(std::unique_ptr<sources::git::GitSource> git) : m_git(std::move(git)) {}
  Result<std::string> head() override { return m_git->remote_head(); }
  Result<sources::Snapshot> sync() override {
    auto s = m_git->sync();
    if (!s) return s.error();
    return sources::Snapshot{s->revision, s->subject, std::move(s->files), std::move(s->blob_ids)};
  }
  Result<sources::Snapshot> snapshot_at(const std::string& revision) override {
    auto s = m_git->snapshot(revision);
    if (!s) return s.error();
    return sources::Snapshot{s->revision, s->subject, std::move(s->files), std::move(s->blob_ids)};
  }
  Result<std::string> read_file(const std::string& revision, const std::string& path,
                                uint64_t max_bytes) override {
    return m_git->read_file(revision, path, max_bytes);
  }
  std::string describe() const override { return "git " + m_git->describe(); }

 private:
  std::unique_ptr<sources::git::GitSource> m_git;
};

}  // namespace

sources::git::GitOptions git_options(const config::Config& cfg) {
  sources::git::GitOptions o;
  o.url = cfg.git.url;
  o.ref = cfg.git.ref;
  o.subpath = cfg.git.path;
  o.cache_dir = cfg.state_dir + "/git";
  o.auth.username = cfg.git.username;
  o.auth.password_file = cfg.git.password_file;
  o.auth.password_env = cfg.git.password_env;
  o.auth.ssh_private_key_file = cfg.git.ssh_key_file;
  o.auth.ssh_known_hosts_file = cfg.git.ssh_known_hosts_file;
  o.auth.ssh_passphrase_env = cfg.git.ssh_passphrase_env;
  if (!cfg.git.allowed_signers_file.empty()) {
    o.signatures.mode = sources::git::SignaturePolicy::Mode::ssh;
    o.signatures.allowed_signers_file = cfg.git.allowed_signers_file;
  }
  return o;
}

Result<std::unique_ptr<sources::Source>> make_source(const config::Config& cfg) {
  if (cfg.git.url.empty())
    return sources::make_directory_source(cfg.repo, model::Limits{}.max_file_bytes);
  std::error_code ec;
  std::filesystem::create_directories(cfg.state_dir + "/git", ec);
  auto git = sources::git::GitSource::open(git_options(cfg));
  if (!git) return git.error();
  return std::unique_ptr<sources::Source>(std::make_unique<GitAdapter>(std::move(*git)));
}

}  // namespace flytecd::run
