#include "sources/oci/signature.hpp"

#include <nlohmann/json.hpp>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "sources/oci/auth.hpp"
#include "sources/oci/digest.hpp"
#include "sources/oci/sigstore.hpp"

namespace flytecd::sources::oci {

using namespace sigstore;  // the verification material (sources/oci/sigstore.hpp)

namespace {

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
  return "SHA256:" + to_hex(sha256_bytes(bytes)).substr(0, 16);
}

Result<Signer> verify_simple_signing(const SignatureCandidate& candidate,
                                     const std::string& manifest_digest,
                                     const std::string& repository, const VerifyPolicy& policy) {
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
  e.body_b64 = json_string(p, "body");
  e.body = base64_decode(e.body_b64).value_or("");
  e.integrated_time = int64_field(p, "integratedTime").value_or(0);
  e.log_index = int64_field(p, "logIndex").value_or(0);
  std::string log_id_hex = json_string(p, "logID");
  for (size_t i = 0; i + 1 < log_id_hex.size(); i += 2)
    e.log_id.push_back(static_cast<char>(std::stoi(log_id_hex.substr(i, 2), nullptr, 16)));
  e.set = b64(bundle, "SignedEntryTimestamp").value_or("");
  if (auto st = verify_log_entry(e, *root); !st) return st.error();
  auto id =
      verify_certificate(leaf->get(), read_certificates_pem(annotation(k_cosign_chain_annotation)),
                         *root, e.integrated_time);
  if (!id) return id.error();
  if (auto st =
          check_entry_binds(e, to_hex(sha256_bytes(candidate.payload)), *signature, leaf->get());
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
    if (!digest || to_hex(*digest) != want_hex)
      return refused("the bundle signs " +
                     (digest ? "sha256:" + to_hex(*digest) : std::string("no digest")) + ", not " +
                     manifest_digest);
    if (!verify_prehashed(key, *digest, out.signature))
      return refused("the bundle's signature does not verify with " + whose);
    out.artifact_hex = want_hex;
    return out;
  }
  if (auto env = b.find("dsseEnvelope"); env != b.end() && env->is_object()) {
    const std::string type = json_string(*env, "payloadType");
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
    out.artifact_hex = to_hex(sha256_bytes(payload));
    return out;
  }
  return refused("the bundle has neither messageSignature nor dsseEnvelope");
}

}  // namespace

Result<Signer> verify_bundle(const std::string& bundle_json, const std::string& manifest_digest,
                             const VerifyPolicy& policy) {
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
    e.body_b64 = json_string(t, "canonicalizedBody");
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
    // Time: the certificate was valid when the log integrated the entry (the signed entry
    // timestamp vouches for that time).
    const int64_t at = e.integrated_time;
    if (at <= 0) return refused("the transparency log entry has no integrated time");
    auto id = verify_certificate(leaf->get(), chain, *root, at);
    if (!id) return id.error();
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
                                 const VerifyPolicy& policy) {
  std::string looked;
  for (const auto& l : evidence.looked_at) looked += (looked.empty() ? "" : ", ") + l;
  if (evidence.candidates.empty())
    return refused("unsigned: no signature for " + manifest_digest + " (looked at " + looked +
                   "); the policy requires " + policy.describe());
  std::string reasons;
  std::optional<Error> invalid_policy;
  for (const auto& c : evidence.candidates) {
    auto r = c.media_type == k_sigstore_bundle_type
                 ? verify_bundle(c.payload, manifest_digest, policy)
                 : verify_simple_signing(c, manifest_digest, repository, policy);
    if (r) return r;
    if (r.error().code == ErrorCode::invalid_input) invalid_policy = r.error();
    reasons += (reasons.empty() ? "" : "; ") + c.where + ": " + r.error().message;
  }
  if (invalid_policy) return *invalid_policy;  // the policy itself is broken: say that
  return refused("no valid signature for " + manifest_digest + ": " + reasons);
}

}  // namespace flytecd::sources::oci
