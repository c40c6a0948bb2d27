#include "sources/oci/sigstore.hpp"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "daemon/common/digest.hpp"
#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "sources/oci/auth.hpp"

namespace flytecd::sources::oci::sigstore {
namespace {

using Bio = std::unique_ptr<BIO, Freer<BIO_free>>;

void free_cert_stack(STACK_OF(X509) * s) { sk_X509_pop_free(s, X509_free); }

}  // namespace

Error refused(const std::string& message) {
  return make_error(ErrorCode::permission_denied, message);
}

Result<Key> read_public_key(const std::string& pem, const std::string& name) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
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
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
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
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
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
  std::unique_ptr<EVP_MD_CTX, Freer<EVP_MD_CTX_free>> ctx(EVP_MD_CTX_new());
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
  std::unique_ptr<EVP_PKEY_CTX, Freer<EVP_PKEY_CTX_free>> ctx(EVP_PKEY_CTX_new(key, nullptr));
  if (!ctx || EVP_PKEY_verify_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_signature_md(ctx.get(), EVP_sha256()) != 1)
    return false;
  return EVP_PKEY_verify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                         signature.size(), reinterpret_cast<const unsigned char*>(digest.data()),
                         digest.size()) == 1;
}

std::string to_hex(std::string_view bytes) {
  return digest::to_hex({reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()});
}

std::string sha256_bytes(std::string_view bytes) {
  const auto d = digest::sha256(bytes);
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

std::optional<std::string> b64(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return base64_decode(it->get<std::string>());
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

const TrustedRoot::Log* TrustedRoot::log(const std::string& key_id) const {
  for (const auto& l : logs)
    if (l.key_id == key_id) return &l;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// The trusted root: Fulcio CAs and transparency-log keys (sigstore trusted_root.json).

namespace {

Result<Key> read_der_public_key(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  Key key(d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size())));
  if (!key) return make_error(ErrorCode::invalid_input, "not a DER public key");
  return key;
}

}  // namespace

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

namespace {

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
  std::unique_ptr<GENERAL_NAMES, Freer<GENERAL_NAMES_free>> names(
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

}  // namespace

Result<CertIdentity> verify_certificate(X509* leaf, const std::vector<Cert>& extra_chain,
                                        const TrustedRoot& root, int64_t at) {
  std::unique_ptr<X509_STORE, Freer<X509_STORE_free>> store(X509_STORE_new());
  for (const auto& r : root.roots) X509_STORE_add_cert(store.get(), r.get());
  std::unique_ptr<STACK_OF(X509), Freer<free_cert_stack>> untrusted(sk_X509_new_null());
  for (const auto& c : root.intermediates) sk_X509_push(untrusted.get(), X509_dup(c.get()));
  for (const auto& c : extra_chain) sk_X509_push(untrusted.get(), X509_dup(c.get()));
  std::unique_ptr<X509_STORE_CTX, Freer<X509_STORE_CTX_free>> ctx(X509_STORE_CTX_new());
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

namespace {

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
      r = sha256_bytes(std::string(1, '\x01') + p + r);
      if ((fn & 1) == 0)
        while (fn != 0 && (fn & 1) == 0) {
          fn >>= 1;
          sn >>= 1;
        }
    } else {
      r = sha256_bytes(std::string(1, '\x01') + r + p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) return std::nullopt;
  return r;
}

// The log's inclusion proof: the entry's leaf leads to the root hash of a checkpoint the log's key
// signed.
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
  auto computed =
      root_from_proof(sha256_bytes(std::string(1, '\0') + e.body), *index, *size, hashes);
  if (!computed || *computed != *root_hash)
    return refused("the inclusion proof does not lead to its root hash");
  // The checkpoint (a signed note): its second line is the tree size, its third the root hash;
  // the log's key signs the note's text up to the blank line.
  const std::string note = p.contains("checkpoint") && p["checkpoint"].is_object()
                               ? json_string(p["checkpoint"], "envelope")
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

}  // namespace

// The log vouches for the entry and for its time: a valid signed entry timestamp is required —
// the integrated time the certificate is checked at is signed by nothing else (an inclusion proof
// covers the entry's body only; RFC 3161 timestamps are not supported). An inclusion proof, when
// present, must hold too.
Status verify_log_entry(const LogEntry& e, const TrustedRoot& root) {
  const TrustedRoot::Log* log = root.log(e.log_id);
  if (log == nullptr)
    return refused("the transparency log entry is from a log the trusted root does not list (" +
                   to_hex(e.log_id) + ")");
  if (e.set.empty())
    return refused(
        "the transparency log entry has no signed entry timestamp: nothing vouches for the time "
        "the certificate must be valid at (RFC 3161 timestamps are not supported)");
  if (!verify_message(
          log->key.get(),
          canonical_set_payload(e.body_b64, e.integrated_time, to_hex(e.log_id), e.log_index),
          e.set))
    return refused("the transparency log's signed entry timestamp does not verify");
  if (e.proof == nullptr) return ok_status();
  return verify_inclusion_proof(e, *log);
}

Status check_entry_binds(const LogEntry& e, const std::string& artifact_sha256_hex,
                         const std::string& signature, X509* cert) {
  auto body = Json::parse(e.body, nullptr, false);
  if (!body.is_object() || !body.contains("spec"))
    return refused("the transparency log entry's body is not a Rekor entry");
  const std::string kind = json_string(body, "kind");
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
        if (s.is_object() && base64_decode(json_string(s, "signature")) == signature &&
            same_cert(json_string(s, "verifier")))
          return ok_status();
    return refused("the transparency log entry records another signature or certificate");
  }
  return refused("the transparency log entry is of kind '" + scan::printable(kind, 40) +
                 "'; expected hashedrekord or dsse");
}

}  // namespace flytecd::sources::oci::sigstore
