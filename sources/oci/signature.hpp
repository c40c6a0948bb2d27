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
inline constexpr const char* k_simple_signing_type =
    "application/vnd.dev.cosign.simplesigning.v1+json";
inline constexpr const char* k_cosign_signature_annotation = "dev.cosignproject.cosign/signature";
inline constexpr const char* k_cosign_certificate_annotation = "dev.sigstore.cosign/certificate";
inline constexpr const char* k_cosign_chain_annotation = "dev.sigstore.cosign/chain";
inline constexpr const char* k_cosign_bundle_annotation = "dev.sigstore.cosign/bundle";
inline constexpr const char* k_sigstore_bundle_type =
    "application/vnd.dev.sigstore.bundle.v0.3+json";

using sources::IdentityMatch;
using sources::Signer;
using sources::VerifyPolicy;

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
// asks; a keyless certificate must be valid at the transparency log's signed time. The first
// candidate that verifies wins; otherwise the error lists why each one failed ("unsigned"
// when there is none). Pure (OpenSSL and RE2 only).
Result<Signer> verify_signatures(const SignatureEvidence& evidence,
                                 const std::string& manifest_digest, const std::string& repository,
                                 const VerifyPolicy& policy);

// One simple-signing payload and its annotations (the cosign tag scheme). Pure.
Result<Signer> verify_simple_signing(const SignatureCandidate& candidate,
                                     const std::string& manifest_digest,
                                     const std::string& repository, const VerifyPolicy& policy);

// A sigstore bundle (v0.1–v0.3 JSON). Pure.
Result<Signer> verify_bundle(const std::string& bundle_json, const std::string& manifest_digest,
                             const VerifyPolicy& policy);

// "SHA256:" and the first 16 hex digits of the SHA-256 of the DER public key, to tell keys apart
// in messages.
Result<std::string> public_key_fingerprint(const std::string& pem);

}  // namespace flytecd::sources::oci
