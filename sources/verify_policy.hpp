#pragma once

#include <string>
#include <vector>

#include "daemon/common/result.hpp"

namespace flytecd::sources {

// An identity a keyless signature must carry: both patterns are RE2 expressions that must match
// the whole value (RE2::FullMatch), so "https://github.com/acme/flows" is never satisfied by
// "https://github.com/acme/flows-evil/…" (stricter than cosign's and Flux's substring match).
struct IdentityMatch {
  std::string issuer;   // the OIDC issuer in the Fulcio certificate
  std::string subject;  // the certificate's identity (its SAN: a URI or an e-mail address)
};

// What must have signed a package, as written in a registration's `verify:` or a
// `packages.verify` entry of the configuration (Flux's OCIRepository.spec.verify spelling).
struct VerifySpec {
  std::string provider = "cosign";
  std::string key;       // a repository path of the revision (keys/cosign.pub)
  std::string key_file;  // a file on the daemon's machine (/etc/flytecd/cosign.pub)
  std::vector<IdentityMatch> identities;  // matchOIDCIdentity: keyless, any one must match
  std::string where;  // "registrations/x.yaml:12" or "config packages.verify[0]", for messages
  bool keyless() const { return key.empty() && key_file.empty(); }
  // "key keys/cosign.pub" or "identity <subject> via <issuer>[ or …]".
  std::string describe() const;
};

// An identity pattern compiles as RE2. Errors: invalid_input naming the pattern, with RE2's
// reason. Pure.
Status check_identity_pattern(const std::string& pattern);

// One policy is coherent: provider cosign; exactly one of key, keyFile or matchOIDCIdentity;
// every pattern compiles. Errors: invalid_input saying what was wrong and what was expected
// (the caller adds file:line). Pure.
Status check_verify_spec(const VerifySpec& spec);

}  // namespace flytecd::sources
