#pragma once

// libgit2 handles and helpers the Git source's files share: owning pointers for libgit2 objects,
// its last error as an Error, object ids as hex, commit text as UTF-8.

#include <git2.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>

#include "daemon/common/result.hpp"
#include "daemon/common/text.hpp"

namespace flytecd::sources::git {

// Commit text (subject, author) as UTF-8 for the ledger, status and JSON. Git stores it in the
// commit's `encoding` header (i18n.commitEncoding), UTF-8 when absent; Latin-1 is decoded, any
// other encoding or ill-formed UTF-8 keeps its valid characters and shows U+FFFD for the rest.
inline std::string commit_text(const git_commit* commit, const char* raw) {
  if (!raw) return {};
  const char* enc = git_commit_message_encoding(commit);
  std::string e = enc ? enc : "";
  std::transform(e.begin(), e.end(), e.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (e == "iso-8859-1" || e == "iso8859-1" || e == "latin1" || e == "latin-1")
    return text::latin1_to_utf8(raw);
  return text::to_utf8_lossy(raw);
}

template <auto Free>
struct FreeFn {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
template <typename T, auto Free>
using Owned = std::unique_ptr<T, FreeFn<Free>>;
using RepoPtr = Owned<git_repository, git_repository_free>;
using RemotePtr = Owned<git_remote, git_remote_free>;
using ObjectPtr = Owned<git_object, git_object_free>;
using CommitPtr = Owned<git_commit, git_commit_free>;
using TreePtr = Owned<git_tree, git_tree_free>;
using EntryPtr = Owned<git_tree_entry, git_tree_entry_free>;
using BlobPtr = Owned<git_blob, git_blob_free>;
using OdbPtr = Owned<git_odb, git_odb_free>;
using RefPtr = Owned<git_reference, git_reference_free>;

struct Buf {
  git_buf b = GIT_BUF_INIT;
  Buf() = default;
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() { git_buf_dispose(&b); }
  std::string str() const { return b.ptr ? std::string(b.ptr, b.size) : std::string(); }
};

inline std::string last_git_message() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

inline Error git_failure(int rc, const std::string& what) {
  return make_error(rc == GIT_ENOTFOUND ? ErrorCode::not_found : ErrorCode::internal,
                    what + ": " + last_git_message());
}

inline std::string oid_hex(const git_oid& oid) {
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &oid);
  return hex;
}

inline std::string short_id(const std::string& id) {
  return id.empty() ? "(none)" : id.substr(0, 12);
}

}  // namespace flytecd::sources::git
