// A local stand-in of sigstore made with openssl, for keyless verification tests: a CA in the
// role of Fulcio issues a one-day code-signing certificate carrying the identity (SAN URI) and
// the OIDC issuer (extension 1.3.6.1.4.1.57264.1.8); a P-256 key in the role of Rekor signs entry
// timestamps and checkpoints. The test writes trusted_root.json, hashedrekord entries, cosign's
// annotations and sigstore bundles as their formats describe.
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon/common/json_dump.hpp"
#include "sources/oci/auth.hpp"
#include "sources/oci/digest.hpp"
#include "sources/oci/signature.hpp"

namespace sigstore_test {

namespace oci = flytecd::sources::oci;
namespace fs = std::filesystem;
using Json = nlohmann::json;

inline const std::string k_subject =
    "https://github.com/acme/flows/.github/workflows/release.yaml@refs/tags/v1";
inline const std::string k_issuer = "https://token.actions.githubusercontent.com";
inline const std::string k_repo = "127.0.0.1:5000/acme/flows";

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void sh(const std::string& cmd) {
  INFO(cmd);
  REQUIRE(std::system((cmd + " > /dev/null 2>&1").c_str()) == 0);
}

inline std::string raw_sha256(const std::string& s) {
  unsigned char md[32];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), md, &n, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(md), n);
}

inline std::string hex(const std::string& s) {
  static const char* k = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(k[c >> 4]);
    out.push_back(k[c & 15]);
  }
  return out;
}

inline std::string sign_with(const fs::path& key_pem, const std::string& message) {
  const std::string pem = slurp(key_pem);
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  REQUIRE(key != nullptr);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  REQUIRE(EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1);
  size_t n = 0;
  const auto* m = reinterpret_cast<const unsigned char*>(message.data());
  REQUIRE(EVP_DigestSign(ctx, nullptr, &n, m, message.size()) == 1);
  std::string sig(n, '\0');
  REQUIRE(EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &n, m,
                         message.size()) == 1);
  sig.resize(n);
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return sig;
}

inline std::string pem_to_der(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* c = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  REQUIRE(c != nullptr);
  unsigned char* der = nullptr;
  const int n = i2d_X509(c, &der);
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(n));
  OPENSSL_free(der);
  X509_free(c);
  return out;
}

// The stand-in: a Fulcio CA, a leaf for k_subject / k_issuer (valid one day from now), a Rekor key.
struct Sigstore {
  fs::path dir;
  std::string leaf_pem, trusted_root;
  std::string log_id;  // raw sha256 of the log's DER public key

  explicit Sigstore(const std::string& san = k_subject, const std::string& issuer = k_issuer) {
    dir = fs::temp_directory_path() /
          ("flytecd-sigstore-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    fs::create_directories(dir);
    const std::string d = dir.string();
    sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + d +
       "/ca.key -out " + d +
       "/ca.pem -subj /CN=fulcio-test -days 3650 -addext "
       "basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign");
    sh("openssl ecparam -genkey -name prime256v1 -noout -out " + d + "/leaf.key");
    sh("openssl req -new -key " + d + "/leaf.key -subj /CN=sigstore -out " + d + "/leaf.csr");
    std::ofstream(dir / "ext.cnf") << "subjectAltName=URI:" << san << "\n"
                                   << "1.3.6.1.4.1.57264.1.8=ASN1:UTF8String:" << issuer << "\n"
                                   << "extendedKeyUsage=codeSigning\n";
    sh("openssl x509 -req -in " + d + "/leaf.csr -CA " + d + "/ca.pem -CAkey " + d +
       "/ca.key -CAcreateserial -days 1 -extfile " + d + "/ext.cnf -out " + d + "/leaf.pem");
    sh("openssl ecparam -genkey -name prime256v1 -noout -out " + d + "/rekor.key");
    sh("openssl ec -in " + d + "/rekor.key -pubout -outform DER -out " + d + "/rekor.der");
    leaf_pem = slurp(dir / "leaf.pem");
    const std::string rekor_der = slurp(dir / "rekor.der");
    log_id = raw_sha256(rekor_der);
    Json root = {
        {"mediaType", "application/vnd.dev.sigstore.trustedroot+json;version=0.1"},
        {"certificateAuthorities",
         {{{"subject", {{"commonName", "fulcio-test"}}},
           {"certChain",
            {{"certificates",
              {{{"rawBytes", oci::base64_encode(pem_to_der(slurp(dir / "ca.pem")))}}}}}}}}},
        {"tlogs",
         {{{"baseUrl", "http://rekor.test"},
           {"hashAlgorithm", "SHA2_256"},
           {"publicKey",
            {{"rawBytes", oci::base64_encode(rekor_der)},
             {"keyDetails", "PKIX_ECDSA_P256_SHA_256"}}},
           {"logId", {{"keyId", oci::base64_encode(log_id)}}}}}}};
    trusted_root = root.dump();
  }
  ~Sigstore() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }

  // A hashedrekord entry for `artifact_hex` signed by `sig` with the leaf.
  std::string hashedrekord(const std::string& artifact_hex, const std::string& sig) const {
    Json body = {{"apiVersion", "0.0.1"},
                 {"kind", "hashedrekord"},
                 {"spec",
                  {{"data", {{"hash", {{"algorithm", "sha256"}, {"value", artifact_hex}}}}},
                   {"signature",
                    {{"content", oci::base64_encode(sig)},
                     {"publicKey", {{"content", oci::base64_encode(leaf_pem)}}}}}}}};
    return body.dump();
  }
  // Rekor's signed entry timestamp over the canonical entry.
  std::string set(const std::string& body, int64_t time, int64_t index) const {
    Json p = {{"body", oci::base64_encode(body)},
              {"integratedTime", time},
              {"logID", hex(log_id)},
              {"logIndex", index}};
    return sign_with(dir / "rekor.key", p.dump());
  }
  oci::VerifyPolicy policy(
      const std::string& subject = "^https://github\\.com/acme/flows/.*$") const {
    oci::VerifyPolicy p;
    p.identities = {{"^https://token\\.actions\\.githubusercontent\\.com$", subject}};
    p.trusted_root_json = trusted_root;
    p.trusted_root_name = "trusted_root.json";
    return p;
  }
};

inline std::string payload(const std::string& digest, const std::string& repo = k_repo) {
  return R"({"critical":{"identity":{"docker-reference":")" + repo +
         R"("},"image":{"docker-manifest-digest":")" + digest +
         R"("},"type":"cosign container image signature"},"optional":null})";
}

// What `cosign sign` (keyless) pushes under sha256-<hex>.sig: the payload and its annotations.
inline oci::SignatureCandidate cosign_keyless(const Sigstore& s, const std::string& digest,
                                              int64_t time, const std::string& logged_artifact = "",
                                              const std::string& repo = k_repo) {
  const std::string p = payload(digest, repo);
  const std::string sig = sign_with(s.dir / "leaf.key", p);
  const std::string body =
      s.hashedrekord(logged_artifact.empty() ? hex(raw_sha256(p)) : logged_artifact, sig);
  Json bundle = {{"SignedEntryTimestamp", oci::base64_encode(s.set(body, time, 7))},
                 {"Payload",
                  {{"body", oci::base64_encode(body)},
                   {"integratedTime", time},
                   {"logIndex", 7},
                   {"logID", hex(s.log_id)}}}};
  oci::SignatureCandidate c;
  c.where = "sha256-….sig layer 0";
  c.media_type = oci::k_simple_signing_type;
  c.payload = p;
  c.annotations[oci::k_cosign_signature_annotation] = oci::base64_encode(sig);
  c.annotations[oci::k_cosign_certificate_annotation] = s.leaf_pem;
  c.annotations[oci::k_cosign_bundle_annotation] = bundle.dump();
  return c;
}

// A sigstore bundle v0.3: a message signature over the manifest's bytes (their SHA-256 is the
// manifest digest), the leaf certificate, one tlog entry with its promise.
// `logged_artifact` (hex): the log entry records another artifact than the one signed.
inline Json bundle_v03(const Sigstore& s, const std::string& manifest, int64_t time,
                       const std::string& logged_artifact = "") {
  const std::string digest = raw_sha256(manifest);
  const std::string sig = sign_with(s.dir / "leaf.key", manifest);
  const std::string body =
      s.hashedrekord(logged_artifact.empty() ? hex(digest) : logged_artifact, sig);
  return Json{
      {"mediaType", oci::k_sigstore_bundle_type},
      {"verificationMaterial",
       {{"certificate", {{"rawBytes", oci::base64_encode(pem_to_der(s.leaf_pem))}}},
        {"tlogEntries",
         {{{"logIndex", "7"},
           {"logId", {{"keyId", oci::base64_encode(s.log_id)}}},
           {"kindVersion", {{"kind", "hashedrekord"}, {"version", "0.0.1"}}},
           {"integratedTime", std::to_string(time)},
           {"inclusionPromise",
            {{"signedEntryTimestamp", oci::base64_encode(s.set(body, time, 7))}}},
           {"canonicalizedBody", oci::base64_encode(body)}}}}}},
      {"messageSignature",
       {{"messageDigest", {{"algorithm", "SHA2_256"}, {"digest", oci::base64_encode(digest)}}},
        {"signature", oci::base64_encode(sig)}}}};
}

}  // namespace sigstore_test
