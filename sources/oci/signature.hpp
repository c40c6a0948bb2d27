#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "sources/verify_policy.hpp"

namespace flytecd::sources::oci {

// cosign's signature formats, as found next to a package in its repository.
inline constexpr const char* k_simple_signing_type = "application/vnd.dev.cosign.simplesigning.v1+json";
inline constexpr const char* k_cosign_signature_annotation = "dev.cosignproject.cosign/signature";
inline constexpr const char* k_cosign_certificate_annotation = "dev.sigstore.cosign/certificate";
inline constexpr const char* k_cosign_chain_annotation = "dev.sigstore.cosign/chain";
inline constexpr const char* k_cosign_bundle_annotation = "dev.sigstore.cosign/bundle";
inline constexpr const char* k_sigstore_bundle_type = "application/vnd.dev.sigstore.bundle.v0.3+json";

using sources::IdentityMatch;

// What must have signed a package: a VerifySpec with its key and trusted root read.
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
  std::string digest;    // the manifest digest the signature names (== the one registered)
  std::string method;    // "key" or "keyless"
  std::string identity;  // key: "key keys/cosign.pub (SHA256:…)"; keyless: the certificate SAN
  std::string issuer;    // keyless: the OIDC issuer
  int64_t signed_at = 0;  // unix seconds: the transparency log's integrated time (0: not known)
  std::string describe() const;  // "signed by X via Y" / "signed with key …"
};

// One signature found in the registry.
struct SignatureCandidate {
  std::string where;  // "sha256-….sig layer 0", "referrer sha256:…", for messages
  std::string media_type;
  std::string payload;  // simple signing: the payload blob; bundle: the bundle JSON
  std::map<std::string, std::string> annotations;
};

// What the registry holds for a manifest.
struct SignatureEvidence {
  std::vector<SignatureCandidate> candidates;
  std::vector<std::string> looked_at;  // "tag sha256-….sig", "referrers of sha256:…"
};

// Verifies that one candidate signs `manifest_digest` of `repository` ("host/repo") as `policy`
// asks. `now` (unix seconds) bounds certificate validity when no timestamp is available. The
// first candidate that verifies wins; otherwise the error lists why each one failed ("unsigned"
// when there is none). Pure (OpenSSL and RE2 only).
Result<Signer> verify_signatures(const SignatureEvidence& evidence,
                                 const std::string& manifest_digest,
                                 const std::string& repository, const VerifyPolicy& policy,
                                 int64_t now);

// One simple-signing payload and its annotations (the cosign tag scheme). Pure.
Result<Signer> verify_simple_signing(const SignatureCandidate& candidate,
                                     const std::string& manifest_digest,
                                     const std::string& repository, const VerifyPolicy& policy,
                                     int64_t now);

// A sigstore bundle (v0.1–v0.3 JSON). Pure.
Result<Signer> verify_bundle(const std::string& bundle_json, const std::string& manifest_digest,
                             const VerifyPolicy& policy, int64_t now);

// SHA256:<base64 of the DER public key's hash, unpadded> as `ssh-keygen -l` prints fingerprints.
Result<std::string> public_key_fingerprint(const std::string& pem);

}  // namespace flytecd::sources::oci
