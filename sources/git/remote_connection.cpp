#include "sources/git/remote_connection.hpp"

#include <chrono>

namespace flytecd::sources::git {

Connection::Connection(git_repository* repo, const GitOptions& opts, const RemoteUrl& remote,
                       const std::string& url, const std::string& redacted)
    : m_repo(repo),
      m_opts(opts),
      m_url(url),
      m_redacted(redacted),
      m_deadline(std::chrono::seconds(opts.timeout_seconds)) {
  m_ctx.auth = &opts.auth;
  m_ctx.url = remote;
}

Connection::~Connection() {
  if (m_remote) git_remote_disconnect(m_remote.get());
}

Result<std::vector<RemoteRef>> Connection::list() {
  git_remote* raw = nullptr;
  if (int rc = git_remote_create_anonymous(&raw, m_repo, m_url.c_str()); rc < 0)
    return make_error(ErrorCode::invalid_input, "remote URL: " + last_git_message());
  m_remote.reset(raw);
  // The init functions, not the *_INIT macros: those leave fields to zero-initialization,
  // which clang's -Wmissing-field-initializers names.
  git_remote_connect_options connect_opts;
  git_remote_connect_options_init(&connect_opts, GIT_REMOTE_CONNECT_OPTIONS_VERSION);
  connect_opts.callbacks = make_remote_callbacks(m_ctx);
  connect_opts.proxy_opts.type = GIT_PROXY_AUTO;
  connect_opts.follow_redirects = GIT_REMOTE_REDIRECT_INITIAL;
  if (int rc = git_remote_connect_ext(m_remote.get(), GIT_DIRECTION_FETCH, &connect_opts); rc < 0)
    return mapped(rc);
  const git_remote_head** heads = nullptr;
  size_t count = 0;
  if (int rc = git_remote_ls(&heads, &count, m_remote.get()); rc < 0) return mapped(rc);
  std::vector<RemoteRef> refs;
  refs.reserve(count);
  for (size_t i = 0; i < count; ++i) refs.push_back({heads[i]->name, oid_hex(heads[i]->oid)});
  return refs;
}

std::string Connection::default_branch() {
  Buf name;
  if (!m_remote || git_remote_default_branch(&name.b, m_remote.get()) < 0) return {};
  return name.str();
}

Status Connection::fetch(const std::vector<std::string>& refspecs) {
  std::vector<char*> specs;
  for (const auto& s : refspecs) specs.push_back(const_cast<char*>(s.c_str()));
  git_strarray array{specs.data(), specs.size()};
  git_fetch_options fetch_opts;
  git_fetch_options_init(&fetch_opts, GIT_FETCH_OPTIONS_VERSION);
  fetch_opts.callbacks = make_remote_callbacks(m_ctx);
  fetch_opts.proxy_opts.type = GIT_PROXY_AUTO;
  fetch_opts.follow_redirects = GIT_REMOTE_REDIRECT_INITIAL;
  fetch_opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
  fetch_opts.update_fetchhead = 0;
  if (int rc = git_remote_download(m_remote.get(), &array, &fetch_opts); rc < 0) return mapped(rc);
  if (int rc = git_remote_update_tips(m_remote.get(), &fetch_opts.callbacks, 0,
                                      GIT_REMOTE_DOWNLOAD_TAGS_NONE, "flytecd: fetch");
      rc < 0)
    return git_failure(rc, "update refs");
  return ok_status();
}

Error Connection::mapped(int rc) const {
  return map_remote_error(rc, m_ctx, m_deadline.expired(), m_opts.timeout_seconds, m_url,
                          m_redacted);
}

}  // namespace flytecd::sources::git
