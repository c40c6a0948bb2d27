#include "sources/oci/signature.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <re2/re2.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "sources/oci/auth.hpp"
#include "sources/oci/digest.hpp"

namespace flytecd::sources::oci {
namespace {

using Json = nlohmann::json;

// Owners of OpenSSL objects.
struct FreeKey {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct FreeCert {
  void operator()(X509* c) const { X509_free(c); }
};
struct FreeBio {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct FreeMdCtx {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct FreePkeyCtx {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
struct FreeStore {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct FreeStoreCtx {
  void operator()(X509_STORE_CTX* s) const { X509_STORE_CTX_free(s); }
};
struct FreeCertStack {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
struct FreeNames {
  void operator()(GENERAL_NAMES* n) const { GENERAL_NAMES_free(n); }
};
using Key = std::unique_ptr<EVP_PKEY, FreeKey>;
using Cert = std::unique_ptr<X509, FreeCert>;

Error refused(const std::string& message) {
  return make_error(ErrorCode::permission_denied, message);
}

Result<Key> read_public_key(const std::string& pem, const std::string& name) {
  std::unique_ptr<BIO, FreeBio> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Key key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!key)
    return make_error(ErrorCode::invalid_input,
                      name +
                          " is not a PEM public key; expected -----BEGIN PUBLIC KEY----- "
                          "(ECDSA P-256, Ed25519 or RSA, as `cosign generate-key-pair` writes)");
  const int id = EVP_PKEY_base_id(key.get());
  if (id != EVP_PKEY_EC && id != EVP_PKEY_ED25519 && id != EVP_PKEY_RSA)
    return make_error(ErrorCode::invalid_input,
                      name + " holds a key of another type; expected ECDSA, Ed25519 or RSA");
  return key;
}

Result<Cert> read_certificate_pem(const std::string& pem, const std::string& what) {
  std::unique_ptr<BIO, FreeBio> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return refused(what + " is not a PEM certificate");
  return cert;
}

Result<Cert> read_certificate_der(const std::string& der, const std::string& what) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  Cert cert(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
  if (!cert) return refused(what + " is not a DER certificate");
  return cert;
}

std::vector<Cert> read_certificates_pem(const std::string& pem) {
  std::vector<Cert> out;
  std::unique_ptr<BIO, FreeBio> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  while (X509* c = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) out.emplace_back(c);
  return out;
}

std::string cert_der(X509* cert) {
  unsigned char* der = nullptr;
  const int n = i2d_X509(cert, &der);
  if (n <= 0) return {};
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(n));
  OPENSSL_free(der);
  return out;
}

// A signature over `message` (hashed with SHA-256; Ed25519 signs the message itself).
bool verify_message(EVP_PKEY* key, const std::string& message, const std::string& signature) {
  std::unique_ptr<EVP_MD_CTX, FreeMdCtx> ctx(EVP_MD_CTX_new());
  const bool ed = EVP_PKEY_base_id(key) == EVP_PKEY_ED25519;
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, ed ? nullptr : EVP_sha256(), nullptr, key) != 1)
    return false;
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size(), reinterpret_cast<const unsigned char*>(message.data()),
                          message.size()) == 1;
}

// A signature over a SHA-256 digest already computed (a bundle's messageDigest).
bool verify_prehashed(EVP_PKEY* key, const std::string& digest, const std::string& signature) {
  if (EVP_PKEY_base_id(key) == EVP_PKEY_ED25519) return false;  // Ed25519 signs messages only
  std::unique_ptr<EVP_PKEY_CTX, FreePkeyCtx> ctx(EVP_PKEY_CTX_new(key, nullptr));
  if (!ctx || EVP_PKEY_verify_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_signature_md(ctx.get(), EVP_sha256()) != 1)
    return false;
  return EVP_PKEY_verify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                         signature.size(), reinterpret_cast<const unsigned char*>(digest.data()),
                         digest.size()) == 1;
}

std::string hex(std::string_view bytes) {
  static const char* k_hex = "0123456789abcdef";
  std::string out;
  for (unsigned char ch : bytes) {
    out.push_back(k_hex[ch >> 4]);
    out.push_back(k_hex[ch & 0xf]);
  }
  return out;
}

std::string raw_sha256(std::string_view bytes) {
  unsigned char md[32];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(md), n);
}

std::optional<std::string> b64(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return base64_decode(it->get<std::string>());
}

std::string str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// protojson writes int64 as strings; Rekor's own JSON as numbers.
std::optional<int64_t> int64_field(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_string()) {
    const std::string s = it->get<std::string>();
    if (s.empty() || s.size() > 19 || !std::all_of(s.begin(), s.end(), ::isdigit))
      return std::nullopt;
    return std::stoll(s);
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// The trusted root: Fulcio CAs and transparency-log keys (sigstore trusted_root.json).

struct TrustedRoot {
  std::vector<Cert> roots;          // self-signed CA certificates: trust anchors
  std::vector<Cert> intermediates;  // the rest of each CA's chain
  struct Log {
    std::string key_id;  // raw bytes
    Key key;
  };
  std::vector<Log> logs;
  const Log* log(const std::string& key_id) const {
    for (const auto& l : logs)
      if (l.key_id == key_id) return &l;
    return nullptr;
  }
};

Result<Key> read_der_public_key(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  Key key(d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size())));
  if (!key) return make_error(ErrorCode::invalid_input, "not a DER public key");
  return key;
}

Result<TrustedRoot> parse_trusted_root(const std::string& json, const std::string& name) {
  auto j = Json::parse(json, nullptr, false);
  auto bad = [&](const std::string& what) {
    return make_error(ErrorCode::invalid_input, name + ": " + what +
                                                    "; expected a sigstore trusted_root.json "
                                                    "(certificateAuthorities, tlogs)");
  };
  if (!j.is_object()) return bad("not a JSON object");
  TrustedRoot root;
  if (auto cas = j.find("certificateAuthorities"); cas != j.end() && cas->is_array())
    for (const auto& ca : *cas) {
      const Json* certs = nullptr;
      if (ca.is_object() && ca.contains("certChain") && ca["certChain"].is_object())
        if (auto c = ca["certChain"].find("certificates"); c != ca["certChain"].end()) certs = &*c;
      if (certs == nullptr || !certs->is_array()) return bad("a CA without certChain.certificates");
      for (const auto& c : *certs) {
        auto der = c.is_object() ? b64(c, "rawBytes") : std::nullopt;
        if (!der) return bad("a CA certificate without base64 rawBytes");
        auto cert = read_certificate_der(*der, "a CA certificate");
        if (!cert) return bad(cert.error().message);
        const bool self_signed = X509_check_issued(cert->get(), cert->get()) == X509_V_OK;
        (self_signed ? root.roots : root.intermediates).push_back(std::move(cert).value());
      }
    }
  if (auto logs = j.find("tlogs"); logs != j.end() && logs->is_array())
    for (const auto& l : *logs) {
      if (!l.is_object() || !l.contains("publicKey") || !l.contains("logId"))
        return bad("a tlog without publicKey and logId");
      auto der = b64(l["publicKey"], "rawBytes");
      auto id = b64(l["logId"], "keyId");
      if (!der || !id) return bad("a tlog whose publicKey.rawBytes or logId.keyId is not base64");
      auto key = read_der_public_key(*der);
      if (!key) return bad("a tlog public key: " + key.error().message);
      root.logs.push_back({*id, std::move(key).value()});
    }
  if (root.roots.empty()) return bad("no self-signed CA certificate");
  if (root.logs.empty()) return bad("no transparency log key");
  return root;
}

// ---------------------------------------------------------------------------------------------
// Fulcio certificates: chain, identity, issuer.

struct CertIdentity {
  std::string subject, issuer;
  int64_t not_before = 0, not_after = 0;
};

int64_t asn1_time_unix(const ASN1_TIME* t) {
  struct tm tm {};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return 0;
  return static_cast<int64_t>(timegm(&tm));
}

// The OIDC issuer: Fulcio's 1.3.6.1.4.1.57264.1.8 (a DER UTF8String), or the deprecated
// 1.3.6.1.4.1.57264.1.1 (the raw text).
std::string issuer_extension(X509* cert) {
  for (const auto& [oid, der] :
       {std::pair{"1.3.6.1.4.1.57264.1.8", true}, std::pair{"1.3.6.1.4.1.57264.1.1", false}}) {
    ASN1_OBJECT* obj = OBJ_txt2obj(oid, 1);
    const int at = X509_get_ext_by_OBJ(cert, obj, -1);
    ASN1_OBJECT_free(obj);
    if (at < 0) continue;
    const ASN1_OCTET_STRING* data = X509_EXTENSION_get_data(X509_get_ext(cert, at));
    const auto* p = ASN1_STRING_get0_data(data);
    const long n = ASN1_STRING_length(data);
    if (!der) return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
    ASN1_UTF8STRING* s = d2i_ASN1_UTF8STRING(nullptr, &p, n);
    if (s == nullptr) continue;
    std::string out(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                    static_cast<size_t>(ASN1_STRING_length(s)));
    ASN1_UTF8STRING_free(s);
    return out;
  }
  return {};
}

std::string san_identity(X509* cert) {
  std::unique_ptr<GENERAL_NAMES, FreeNames> names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return {};
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names.get(), i);
    if (n->type == GEN_URI || n->type == GEN_EMAIL) {
      const ASN1_IA5STRING* s =
          n->type == GEN_URI ? n->d.uniformResourceIdentifier : n->d.rfc822Name;
      return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                         static_cast<size_t>(ASN1_STRING_length(s)));
    }
  }
  return {};
}

// The leaf chains to a trusted Fulcio root at `at` (unix seconds); its identity and issuer.
Result<CertIdentity> verify_certificate(X509* leaf, const std::vector<Cert>& extra_chain,
                                        const TrustedRoot& root, int64_t at) {
  std::unique_ptr<X509_STORE, FreeStore> store(X509_STORE_new());
  for (const auto& r : root.roots) X509_STORE_add_cert(store.get(), r.get());
  std::unique_ptr<STACK_OF(X509), FreeCertStack> untrusted(sk_X509_new_null());
  for (const auto& c : root.intermediates) sk_X509_push(untrusted.get(), X509_dup(c.get()));
  for (const auto& c : extra_chain) sk_X509_push(untrusted.get(), X509_dup(c.get()));
  std::unique_ptr<X509_STORE_CTX, FreeStoreCtx> ctx(X509_STORE_CTX_new());
  X509_STORE_CTX_init(ctx.get(), store.get(), leaf, untrusted.get());
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(at));
  if (X509_verify_cert(ctx.get()) != 1)
    return refused("the signing certificate does not chain to the trusted Fulcio root (" +
                   std::string(X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()))) +
                   ")");
  CertIdentity id;
  id.subject = san_identity(leaf);
  id.issuer = issuer_extension(leaf);
  id.not_before = asn1_time_unix(X509_get0_notBefore(leaf));
  id.not_after = asn1_time_unix(X509_get0_notAfter(leaf));
  if (id.subject.empty()) return refused("the signing certificate names no URI or e-mail identity");
  if (id.issuer.empty()) return refused("the signing certificate names no OIDC issuer");
  return id;
}

Status match_identity(const CertIdentity& id, const VerifyPolicy& policy) {
  for (const auto& m : policy.identities) {
    RE2 issuer(m.issuer, RE2::Quiet), subject(m.subject, RE2::Quiet);
    if (issuer.ok() && subject.ok() && RE2::FullMatch(id.issuer, issuer) &&
        RE2::FullMatch(id.subject, subject))
      return ok_status();
  }
  return refused("signature does not match identity " + policy.describe() + ": signed by " +
                 id.subject + " via " + id.issuer);
}

// ---------------------------------------------------------------------------------------------
// Rekor: the signed entry timestamp and the inclusion proof.

std::string canonical_set_payload(const std::string& body_b64, int64_t integrated_time,
                                  const std::string& log_id_hex, int64_t log_index) {
  // What Rekor signs: the entry's JSON with sorted keys and no whitespace (RFC 8785 for these
  // types). nlohmann's json sorts object keys and dump(-1) adds no whitespace.
  Json j = {{"body", body_b64},
            {"integratedTime", integrated_time},
            {"logID", log_id_hex},
            {"logIndex", log_index}};
  return dump_json(j);
}

// RFC 6962 / RFC 9162 inclusion: the root computed from the leaf and the proof's hashes.
std::optional<std::string> root_from_proof(const std::string& leaf_hash, int64_t index,
                                           int64_t size, const std::vector<std::string>& hashes) {
  if (index < 0 || index >= size) return std::nullopt;
  int64_t fn = index, sn = size - 1;
  std::string r = leaf_hash;
  for (const auto& p : hashes) {
    if (sn == 0) return std::nullopt;
    if ((fn & 1) == 1 || fn == sn) {
      r = raw_sha256(std::string(1, '\x01') + p + r);
      if ((fn & 1) == 0)
        while (fn != 0 && (fn & 1) == 0) {
          fn >>= 1;
          sn >>= 1;
        }
    } else {
      r = raw_sha256(std::string(1, '\x01') + r + p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) return std::nullopt;
  return r;
}

struct LogEntry {
  std::string body;  // the canonicalized entry (decoded)
  std::string body_b64;
  int64_t integrated_time = 0, log_index = 0;
  std::string log_id;  // raw bytes
  std::string set;     // signed entry timestamp (DER signature), may be empty
  const Json* proof = nullptr;
};

// The log's inclusion proof: the entry's leaf leads to the root hash of a checkpoint the log's key
// signed.
Status verify_inclusion_proof(const LogEntry& e, const TrustedRoot::Log& log);

// The log vouches for the entry and for its time: a valid signed entry timestamp is required —
// the integrated time the certificate is checked at is signed by nothing else (an inclusion proof
// covers the entry's body only; RFC 3161 timestamps are not supported). An inclusion proof, when
// present, must hold too.
Status verify_log_entry(const LogEntry& e, const TrustedRoot& root) {
  const TrustedRoot::Log* log = root.log(e.log_id);
  if (log == nullptr)
    return refused("the transparency log entry is from a log the trusted root does not list (" +
                   hex(e.log_id) + ")");
  if (e.set.empty())
    return refused(
        "the transparency log entry has no signed entry timestamp: nothing vouches for the time "
        "the certificate must be valid at (RFC 3161 timestamps are not supported)");
  if (!verify_message(
          log->key.get(),
          canonical_set_payload(e.body_b64, e.integrated_time, hex(e.log_id), e.log_index), e.set))
    return refused("the transparency log's signed entry timestamp does not verify");
  if (e.proof == nullptr) return ok_status();
  return verify_inclusion_proof(e, *log);
}

Status verify_inclusion_proof(const LogEntry& e, const TrustedRoot::Log& log) {
  if (!e.proof->is_object()) return refused("the inclusion proof is not an object");
  const Json& p = *e.proof;
  // protojson leaves out fields at their default: a missing logIndex is 0.
  auto index = p.contains("logIndex") ? int64_field(p, "logIndex") : std::optional<int64_t>(0);
  auto size = int64_field(p, "treeSize");
  auto root_hash = b64(p, "rootHash");
  std::vector<std::string> hashes;
  if (auto h = p.find("hashes"); h != p.end() && h->is_array())
    for (const auto& x : *h)
      if (auto d = x.is_string() ? base64_decode(x.get<std::string>()) : std::nullopt)
        hashes.push_back(*d);
  if (!index || !size || !root_hash)
    return refused("the inclusion proof lacks logIndex, treeSize or rootHash");
  auto computed = root_from_proof(raw_sha256(std::string(1, '\0') + e.body), *index, *size, hashes);
  if (!computed || *computed != *root_hash)
    return refused("the inclusion proof does not lead to its root hash");
  // The checkpoint (a signed note): its second line is the tree size, its third the root hash;
  // the log's key signs the note's text up to the blank line.
  const std::string note = p.contains("checkpoint") && p["checkpoint"].is_object()
                               ? str(p["checkpoint"], "envelope")
                               : std::string();
  const auto blank = note.find("\n\n");
  if (blank == std::string::npos) return refused("the inclusion proof has no signed checkpoint");
  const std::string text = note.substr(0, blank + 1);
  std::vector<std::string> lines;
  for (size_t b = 0, n; b < text.size(); b = n + 1) {
    n = text.find('\n', b);
    lines.push_back(text.substr(b, n - b));
  }
  if (lines.size() < 3 || lines[1] != std::to_string(*size) ||
      base64_decode(lines[2]) != *root_hash)
    return refused("the checkpoint is for another tree than the inclusion proof");
  // Signature lines: "— <name> <base64(4-byte key hint || signature)>".
  for (size_t b = blank + 2, n; b < note.size(); b = n + 1) {
    n = note.find('\n', b);
    if (n == std::string::npos) n = note.size();
    const std::string line = note.substr(b, n - b);
    const auto sp = line.rfind(' ');
    if (line.rfind("\xe2\x80\x94 ", 0) != 0 || sp == std::string::npos) continue;
    auto sig = base64_decode(line.substr(sp + 1));
    if (sig && sig->size() > 4 && verify_message(log.key.get(), text, sig->substr(4)))
      return ok_status();
  }
  return refused("the checkpoint's signature does not verify with the log's key");
}

// The entry records this signature over this artifact (hashedrekord, dsse or intoto).
Status check_entry_binds(const LogEntry& e, const std::string& artifact_sha256_hex,
                         const std::string& signature, X509* cert) {
  auto body = Json::parse(e.body, nullptr, false);
  if (!body.is_object() || !body.contains("spec"))
    return refused("the transparency log entry's body is not a Rekor entry");
  const std::string kind = str(body, "kind");
  const Json& spec = body["spec"];
  const std::string der = cert_der(cert);
  auto same_cert = [&](const std::string& b64_pem) {
    auto pem = base64_decode(b64_pem);
    if (!pem) return false;
    auto c = read_certificate_pem(*pem, "entry certificate");
    return c && cert_der(c->get()) == der;
  };
  if (kind == "hashedrekord") {
    const std::string value = spec.value("/data/hash/value"_json_pointer, std::string());
    const std::string sig = spec.value("/signature/content"_json_pointer, std::string());
    const std::string key = spec.value("/signature/publicKey/content"_json_pointer, std::string());
    if (value != artifact_sha256_hex)
      return refused("the transparency log entry is for another artifact (sha256:" +
                     scan::printable(value, 80) + ")");
    if (base64_decode(sig) != signature)
      return refused("the transparency log entry records another signature");
    if (!same_cert(key)) return refused("the transparency log entry records another certificate");
    return ok_status();
  }
  if (kind == "dsse") {
    const std::string value = spec.value("/payloadHash/value"_json_pointer, std::string());
    if (value != artifact_sha256_hex)
      return refused("the transparency log entry is for another payload (sha256:" +
                     scan::printable(value, 80) + ")");
    if (auto sigs = spec.find("signatures"); sigs != spec.end() && sigs->is_array())
      for (const auto& s : *sigs)
        if (s.is_object() && base64_decode(str(s, "signature")) == signature &&
            same_cert(str(s, "verifier")))
          return ok_status();
    return refused("the transparency log entry records another signature or certificate");
  }
  return refused("the transparency log entry is of kind '" + scan::printable(kind, 40) +
                 "'; expected hashedrekord or dsse");
}

// ---------------------------------------------------------------------------------------------

Result<std::string> payload_digest(const std::string& payload, const std::string& repository) {
  auto j = Json::parse(payload, nullptr, false);
  if (!j.is_object() || !j.contains("critical") || !j["critical"].is_object())
    return refused("the simple-signing payload is not cosign's JSON ({\"critical\": …})");
  const Json& c = j["critical"];
  const std::string type =
      c.contains("type") && c["type"].is_string() ? c["type"].get<std::string>() : "";
  if (type != "cosign container image signature" && type != "atomic container signature")
    return refused("the simple-signing payload's type is '" + scan::printable(type, 60) +
                   "'; expected 'cosign container image signature'");
  const std::string digest = c.value("/image/docker-manifest-digest"_json_pointer, std::string());
  const std::string ref = c.value("/identity/docker-reference"_json_pointer, std::string());
  if (!ref.empty() && ref != repository && ref.rfind(repository + ":", 0) != 0 &&
      ref.rfind(repository + "@", 0) != 0)
    return refused("the signature is for repository " + scan::printable(ref, 200) + ", not " +
                   repository);
  return digest;
}

}  // namespace

Result<std::string> public_key_fingerprint(const std::string& pem) {
  auto key = read_public_key(pem, "the public key");
  if (!key) return key.error();
  unsigned char* der = nullptr;
  const int n = i2d_PUBKEY(key->get(), &der);
  if (n <= 0) return make_error(ErrorCode::internal, "cannot encode the public key");
  std::string bytes(reinterpret_cast<char*>(der), static_cast<size_t>(n));
  OPENSSL_free(der);
  return "SHA256:" + hex(raw_sha256(bytes)).substr(0, 16);
}

Result<Signer> verify_simple_signing(const SignatureCandidate& candidate,
                                     const std::string& manifest_digest,
                                     const std::string& repository, const VerifyPolicy& policy,
                                     int64_t now) {
  auto annotation = [&](const char* name) {
    auto it = candidate.annotations.find(name);
    return it == candidate.annotations.end() ? std::string() : it->second;
  };
  auto signature = base64_decode(annotation(k_cosign_signature_annotation));
  if (!signature || signature->empty())
    return refused(std::string("no ") + k_cosign_signature_annotation + " annotation");
  auto named = payload_digest(candidate.payload, repository);
  if (!named) return named.error();
  if (*named != manifest_digest)
    return refused("the signature is over " + scan::printable(*named, 80) + ", not " +
                   manifest_digest);
  Signer s;
  s.digest = manifest_digest;
  if (!policy.keyless()) {
    auto key = read_public_key(policy.public_key_pem, policy.key_name);
    if (!key) return key.error();
    if (!verify_message(key->get(), candidate.payload, *signature))
      return refused("signature does not match key " + policy.key_name);
    s.method = "key";
    auto fp = public_key_fingerprint(policy.public_key_pem);
    s.identity = "key " + policy.key_name + (fp ? " (" + *fp + ")" : "");
    return s;
  }
  // Keyless: a Fulcio certificate, the log's bundle (its SET), the identity.
  const std::string cert_text = annotation(k_cosign_certificate_annotation);
  if (cert_text.empty())
    return refused("the signature carries no certificate (signed with a key?)");
  auto root = parse_trusted_root(policy.trusted_root_json, policy.trusted_root_name);
  if (!root) return root.error();
  auto leaf = read_certificate_pem(cert_text, "the signature's certificate");
  if (!leaf) return leaf.error();
  auto bundle = Json::parse(annotation(k_cosign_bundle_annotation), nullptr, false);
  if (!bundle.is_object() || !bundle.contains("Payload") || !bundle["Payload"].is_object())
    return refused("the signature carries no transparency log bundle (" +
                   std::string(k_cosign_bundle_annotation) + ")");
  const Json& p = bundle["Payload"];
  LogEntry e;
  e.body_b64 = str(p, "body");
  e.body = base64_decode(e.body_b64).value_or("");
  e.integrated_time = int64_field(p, "integratedTime").value_or(0);
  e.log_index = int64_field(p, "logIndex").value_or(0);
  std::string log_id_hex = str(p, "logID");
  for (size_t i = 0; i + 1 < log_id_hex.size(); i += 2)
    e.log_id.push_back(static_cast<char>(std::stoi(log_id_hex.substr(i, 2), nullptr, 16)));
  e.set = b64(bundle, "SignedEntryTimestamp").value_or("");
  if (auto st = verify_log_entry(e, *root); !st) return st.error();
  auto id =
      verify_certificate(leaf->get(), read_certificates_pem(annotation(k_cosign_chain_annotation)),
                         *root, e.integrated_time);
  if (!id) return id.error();
  (void)now;
  if (auto st = check_entry_binds(e, hex(raw_sha256(candidate.payload)), *signature, leaf->get());
      !st)
    return st.error();
  if (!verify_message(X509_get0_pubkey(leaf->get()), candidate.payload, *signature))
    return refused("the signature does not verify with its certificate's key");
  if (auto st = match_identity(*id, policy); !st) return st.error();
  s.method = "keyless";
  s.identity = id->subject;
  s.issuer = id->issuer;
  s.signed_at = e.integrated_time;
  return s;
}

namespace {

struct SignedContent {
  std::string signature;     // the raw signature bytes
  std::string artifact_hex;  // what the log entry must record: sha256 of what was signed
};

// What a bundle signs, checked against `key`: a message signature over the manifest's bytes
// (their SHA-256 is the manifest digest) or a DSSE envelope whose in-toto statement names it.
Result<SignedContent> signed_content(const Json& b, EVP_PKEY* key,
                                     const std::string& manifest_digest, const std::string& whose) {
  SignedContent out;
  const std::string want_hex = manifest_digest.substr(manifest_digest.find(':') + 1);
  if (auto ms = b.find("messageSignature"); ms != b.end() && ms->is_object()) {
    auto digest = ms->contains("messageDigest") ? b64((*ms)["messageDigest"], "digest")
                                                : std::optional<std::string>();
    out.signature = b64(*ms, "signature").value_or("");
    if (!digest || hex(*digest) != want_hex)
      return refused("the bundle signs " +
                     (digest ? "sha256:" + hex(*digest) : std::string("no digest")) + ", not " +
                     manifest_digest);
    if (!verify_prehashed(key, *digest, out.signature))
      return refused("the bundle's signature does not verify with " + whose);
    out.artifact_hex = want_hex;
    return out;
  }
  if (auto env = b.find("dsseEnvelope"); env != b.end() && env->is_object()) {
    const std::string type = str(*env, "payloadType");
    const std::string payload = b64(*env, "payload").value_or("");
    if (auto sigs = env->find("signatures");
        sigs != env->end() && sigs->is_array() && !sigs->empty())
      out.signature = (*sigs)[0].is_object() ? b64((*sigs)[0], "sig").value_or("") : "";
    const std::string pae = "DSSEv1 " + std::to_string(type.size()) + " " + type + " " +
                            std::to_string(payload.size()) + " " + payload;
    if (!verify_message(key, pae, out.signature))
      return refused("the bundle's DSSE signature does not verify with " + whose);
    auto statement = Json::parse(payload, nullptr, false);
    bool names = false;
    if (statement.is_object() && statement.contains("subject") && statement["subject"].is_array())
      for (const auto& s : statement["subject"])
        if (s.is_object() && s.value("/digest/sha256"_json_pointer, std::string()) == want_hex)
          names = true;
    if (!names) return refused("the bundle's statement does not name " + manifest_digest);
    out.artifact_hex = hex(raw_sha256(payload));
    return out;
  }
  return refused("the bundle has neither messageSignature nor dsseEnvelope");
}

}  // namespace

Result<Signer> verify_bundle(const std::string& bundle_json, const std::string& manifest_digest,
                             const VerifyPolicy& policy, int64_t now) {
  auto b = Json::parse(bundle_json, nullptr, false);
  if (!b.is_object() || !b.contains("verificationMaterial") ||
      !b["verificationMaterial"].is_object())
    return refused("not a sigstore bundle (no verificationMaterial)");
  if (!policy.keyless()) {
    // A bundle made with a key (cosign sign --key --new-bundle-format): the policy's key must
    // verify what it signs; its log entry, if any, is not needed to trust a key.
    auto key = read_public_key(policy.public_key_pem, policy.key_name);
    if (!key) return key.error();
    auto content = signed_content(b, key->get(), manifest_digest, "key " + policy.key_name);
    if (!content) return content.error();
    Signer s;
    s.digest = manifest_digest;
    s.method = "key";
    auto fp = public_key_fingerprint(policy.public_key_pem);
    s.identity = "key " + policy.key_name + (fp ? " (" + *fp + ")" : "");
    return s;
  }
  auto root = parse_trusted_root(policy.trusted_root_json, policy.trusted_root_name);
  if (!root) return root.error();
  const Json& vm = b["verificationMaterial"];
  std::optional<std::string> leaf_der;
  std::vector<Cert> chain;
  if (vm.contains("certificate") && vm["certificate"].is_object())
    leaf_der = b64(vm["certificate"], "rawBytes");
  else if (auto c = vm.find("x509CertificateChain"); c != vm.end() && c->is_object())
    if (auto certs = c->find("certificates"); certs != c->end() && certs->is_array()) {
      for (size_t i = 0; i < certs->size(); ++i) {
        auto der = (*certs)[i].is_object() ? b64((*certs)[i], "rawBytes") : std::nullopt;
        if (!der) continue;
        if (i == 0) {
          leaf_der = der;
        } else if (auto cert = read_certificate_der(*der, "a chain certificate")) {
          chain.push_back(std::move(cert).value());
        }
      }
    }
  if (!leaf_der) return refused("the bundle carries no signing certificate");
  auto leaf = read_certificate_der(*leaf_der, "the bundle's certificate");
  if (!leaf) return leaf.error();
  auto content =
      signed_content(b, X509_get0_pubkey(leaf->get()), manifest_digest, "its certificate's key");
  if (!content) return content.error();
  const std::string& signature = content->signature;
  const std::string& artifact_hex = content->artifact_hex;

  // The log: an entry that binds this signature, vouched for by the trusted log key.
  const Json* entries = vm.contains("tlogEntries") ? &vm["tlogEntries"] : nullptr;
  if (entries == nullptr || !entries->is_array() || entries->empty())
    return refused("the bundle has no transparency log entry");
  std::string why;
  for (const auto& t : *entries) {
    if (!t.is_object()) continue;
    LogEntry e;
    e.body_b64 = str(t, "canonicalizedBody");
    e.body = base64_decode(e.body_b64).value_or("");
    e.integrated_time = int64_field(t, "integratedTime").value_or(0);
    e.log_index = int64_field(t, "logIndex").value_or(0);
    if (t.contains("logId") && t["logId"].is_object())
      e.log_id = b64(t["logId"], "keyId").value_or("");
    if (t.contains("inclusionPromise") && t["inclusionPromise"].is_object())
      e.set = b64(t["inclusionPromise"], "signedEntryTimestamp").value_or("");
    if (t.contains("inclusionProof")) e.proof = &t["inclusionProof"];
    Status st = verify_log_entry(e, *root);
    if (st) st = check_entry_binds(e, artifact_hex, signature, leaf->get());
    if (!st) {
      why = st.error().message;
      continue;
    }
    // Time: the certificate was valid when the log integrated the entry.
    const int64_t at = e.integrated_time;
    auto id = verify_certificate(leaf->get(), chain, *root, at > 0 ? at : now);
    if (!id) return id.error();
    if (at <= 0 || at < id->not_before || at > id->not_after)
      return refused("the certificate was not valid when the log recorded the signature");
    if (auto m = match_identity(*id, policy); !m) return m.error();
    Signer s;
    s.digest = manifest_digest;
    s.method = "keyless";
    s.identity = id->subject;
    s.issuer = id->issuer;
    s.signed_at = at;
    return s;
  }
  return refused(why);
}

Result<Signer> verify_signatures(const SignatureEvidence& evidence,
                                 const std::string& manifest_digest, const std::string& repository,
                                 const VerifyPolicy& policy, int64_t now) {
  std::string looked;
  for (const auto& l : evidence.looked_at) looked += (looked.empty() ? "" : ", ") + l;
  if (evidence.candidates.empty())
    return refused("unsigned: no signature for " + manifest_digest + " (looked at " + looked +
                   "); the policy requires " + policy.describe());
  std::string reasons;
  std::optional<Error> invalid_policy;
  for (const auto& c : evidence.candidates) {
    auto r = c.media_type == k_sigstore_bundle_type
                 ? verify_bundle(c.payload, manifest_digest, policy, now)
                 : verify_simple_signing(c, manifest_digest, repository, policy, now);
    if (r) return r;
    if (r.error().code == ErrorCode::invalid_input) invalid_policy = r.error();
    reasons += (reasons.empty() ? "" : "; ") + c.where + ": " + r.error().message;
  }
  if (invalid_policy) return *invalid_policy;  // the policy itself is broken: say that
  return refused("no valid signature for " + manifest_digest + ": " + reasons);
}

}  // namespace flytecd::sources::oci
