#pragma once

#include <string>

#include "daemon/common/result.hpp"

namespace flytecd::sources::git {

// Where `ssh-keygen` is, or an invalid_input error telling how to install it (openssh-client).
Result<std::string> find_ssh_keygen();

// What a commit carries for signature checks (from git_commit_extract_signature).
struct SignedCommit {
  std::string commit_id;
  std::string signature;    // the "gpgsig" header, armored
  std::string signed_data;  // the commit object without that header
  std::string committer_email;
};

// Verifies an SSH commit signature the way `git verify-commit` does with gpg.format=ssh:
// `ssh-keygen -Y verify -f <allowed_signers> -I <committer email> -n git -s <sigfile>` with the
// signed data on stdin (no shell; the signature goes to a private temp file under `tmp_dir`).
// Errors: invalid_input naming the commit when the signature is not SSH, is invalid, or is not
// from a key allowed for the committer; internal/timeout when ssh-keygen cannot be run.
Status verify_ssh_commit_signature(const SignedCommit& commit,
                                   const std::string& allowed_signers_file,
                                   const std::string& tmp_dir);

}  // namespace flytecd::sources::git
