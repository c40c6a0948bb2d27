#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
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
  std::string where;   // "registrations/x.yaml:12" or "config packages.verify[0]", for messages
  int line = 0;        // the line of `verify:` in its document (0: from the configuration)
  std::string prefix;  // packages.verify entries: the package addresses it covers ("oci://h/r/")
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

// What is wrong in a `verify:` mapping, and where (1-based line of the offending node).
struct VerifySpecProblem {
  int line = 0;
  std::string field;  // "verify.matchOIDCIdentity[0].subject"
  std::string what, expected;
};

// Reads a `verify:` mapping (provider, key, keyFile, matchOIDCIdentity: [{issuer, subject}]; with
// `with_prefix`, also the required `prefix` of a packages.verify entry) and checks it
// (check_verify_spec). `field` names the mapping in problems ("verify", "packages.verify[0]").
// Pure.
std::optional<VerifySpecProblem> parse_verify_spec(const YAML::Node& node, const std::string& field,
                                                   bool with_prefix, VerifySpec& out);

// What a verification is given: the spec with its key and trusted root read.
struct VerifyPolicy {
  std::string public_key_pem;  // keyed: a PEM public key (ECDSA P-256, Ed25519 or RSA)
  std::string key_name;        // where the key came from, for messages ("keys/cosign.pub")
  std::vector<IdentityMatch> identities;  // keyless: any one must match
  std::string trusted_root_json;          // keyless: a sigstore trusted_root.json
  std::string trusted_root_name;          // its path, for messages
  bool keyless() const { return public_key_pem.empty(); }
  std::string describe() const;  // "key keys/cosign.pub" or "identity S via I"
};

// Who signed, once verified.
struct Signer {
  std::string digest;     // the manifest digest the signature names (== the one registered)
  std::string method;     // "key" or "keyless"
  std::string identity;   // key: "key keys/cosign.pub (SHA256:…)"; keyless: the certificate SAN
  std::string issuer;     // keyless: the OIDC issuer
  int64_t signed_at = 0;  // unix seconds: the transparency log's integrated time (0: not known)
  std::string describe() const;  // "signed by X via Y" / "signed with key …"
};

}  // namespace flytecd::sources
