#pragma once

// Sigstore's verification material, for signature.cpp: OpenSSL keys and certificates, the
// trusted root (Fulcio CAs, transparency-log keys), Fulcio certificate identities and Rekor
// entries. Internal to sources/oci. OpenSSL and RE2 only; pure.

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/common/result.hpp"
#include "sources/verify_policy.hpp"

namespace flytecd::sources::oci::sigstore {

using Json = nlohmann::json;

// Owns an OpenSSL object with its free function.
template <auto Free>
struct Freer {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};
using Key = std::unique_ptr<EVP_PKEY, Freer<EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Freer<X509_free>>;

// A refusal: permission_denied with `message`.
Error refused(const std::string& message);

// A PEM public key (ECDSA, Ed25519 or RSA); invalid_input naming `name` otherwise.
Result<Key> read_public_key(const std::string& pem, const std::string& name);
Result<Cert> read_certificate_pem(const std::string& pem, const std::string& what);
Result<Cert> read_certificate_der(const std::string& der, const std::string& what);
std::vector<Cert> read_certificates_pem(const std::string& pem);
std::string cert_der(X509* cert);

// A signature over `message` (SHA-256; Ed25519 signs the message itself).
bool verify_message(EVP_PKEY* key, const std::string& message, const std::string& signature);
// A signature over a SHA-256 digest already computed.
bool verify_prehashed(EVP_PKEY* key, const std::string& digest, const std::string& signature);

// Lower-case hex of raw bytes, and the raw SHA-256 of bytes (digest::to_hex / digest::sha256).
std::string to_hex(std::string_view bytes);
std::string sha256_bytes(std::string_view bytes);

// JSON fields: base64 bytes, a string ("" if absent), an int64 (protojson writes strings).
std::optional<std::string> b64(const Json& j, const char* key);
std::string str(const Json& j, const char* key);
std::optional<int64_t> int64_field(const Json& j, const char* key);

// The trusted root: Fulcio CAs and transparency-log keys (sigstore trusted_root.json).
struct TrustedRoot {
  std::vector<Cert> roots;          // self-signed CA certificates: trust anchors
  std::vector<Cert> intermediates;  // the rest of each CA's chain
  struct Log {
    std::string key_id;  // raw bytes
    Key key;
  };
  std::vector<Log> logs;
  const Log* log(const std::string& key_id) const;
};
Result<TrustedRoot> parse_trusted_root(const std::string& json, const std::string& name);

// A Fulcio certificate's identity.
struct CertIdentity {
  std::string subject, issuer;
  int64_t not_before = 0, not_after = 0;
};
// The leaf chains to a trusted Fulcio root at `at` (unix seconds); its identity and issuer.
Result<CertIdentity> verify_certificate(X509* leaf, const std::vector<Cert>& extra_chain,
                                        const TrustedRoot& root, int64_t at);
// Some identity of the policy matches (RE2 FullMatch of issuer and subject).
Status match_identity(const CertIdentity& id, const VerifyPolicy& policy);

// One Rekor entry as a bundle or cosign's annotation carries it.
struct LogEntry {
  std::string body;  // the canonicalized entry (decoded)
  std::string body_b64;
  int64_t integrated_time = 0, log_index = 0;
  std::string log_id;  // raw bytes
  std::string set;     // signed entry timestamp (DER signature), may be empty
  const Json* proof = nullptr;
};
// The log vouches for the entry and its time: a signed entry timestamp is required (an inclusion
// proof covers the body only); an inclusion proof, when present, must hold too.
Status verify_log_entry(const LogEntry& e, const TrustedRoot& root);
// The entry records this signature over this artifact (hashedrekord or dsse) with this
// certificate.
Status check_entry_binds(const LogEntry& e, const std::string& artifact_sha256_hex,
                         const std::string& signature, X509* cert);

}  // namespace flytecd::sources::oci::sigstore
