#include "sources/oci/signature.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <catch2/catch.hpp>
#include <memory>

#include "sources/oci/auth.hpp"
#include "sources/oci/digest.hpp"
#include "sources/verify_policy.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

namespace oci = flytecd::sources::oci;
using flytecd::ErrorCode;

// A key pair made here with OpenSSL, as `cosign generate-key-pair` would (P-256 by default).
struct KeyPair {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{nullptr, EVP_PKEY_free};
  explicit KeyPair(const char* type) {
    if (std::string(type) == "EC")
      key.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
    else if (std::string(type) == "RSA")
      key.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048}));
    else
      key.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, type));
    REQUIRE(key);
  }
  std::string public_pem() const {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    REQUIRE(PEM_write_bio_PUBKEY(bio.get(), key.get()) == 1);
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<size_t>(n));
  }
  std::string sign(const std::string& message) const {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    const bool ed = EVP_PKEY_base_id(key.get()) == EVP_PKEY_ED25519;
    REQUIRE(EVP_DigestSignInit(ctx.get(), nullptr, ed ? nullptr : EVP_sha256(), nullptr,
                               key.get()) == 1);
    size_t n = 0;
    const auto* m = reinterpret_cast<const unsigned char*>(message.data());
    REQUIRE(EVP_DigestSign(ctx.get(), nullptr, &n, m, message.size()) == 1);
    std::string sig(n, '\0');
    REQUIRE(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &n, m,
                           message.size()) == 1);
    sig.resize(n);
    return sig;
  }
};

const std::string k_digest = "sha256:" + std::string(64, 'a');
const std::string k_repo = "127.0.0.1:5000/flyte/core-examples";

// cosign's simple-signing payload, as `cosign sign --key` writes it.
std::string payload(const std::string& digest, const std::string& reference = k_repo) {
  return R"({"critical":{"identity":{"docker-reference":")" + reference +
         R"("},"image":{"docker-manifest-digest":")" + digest +
         R"("},"type":"cosign container image signature"},"optional":null})";
}

oci::SignatureCandidate candidate(const KeyPair& k, const std::string& p) {
  oci::SignatureCandidate c;
  c.where = "sha256-aaaa.sig layer 0";
  c.media_type = oci::k_simple_signing_type;
  c.payload = p;
  c.annotations[oci::k_cosign_signature_annotation] = oci::base64_encode(k.sign(p));
  return c;
}

oci::VerifyPolicy key_policy(const KeyPair& k) {
  oci::VerifyPolicy p;
  p.public_key_pem = k.public_pem();
  p.key_name = "keys/cosign.pub";
  return p;
}

TEST_CASE(
    "signature: a cosign key signature over the registered digest verifies (P-256, "
    "Ed25519, RSA)",
    "[signature]") {
  for (const char* type : {"EC", "ED25519", "RSA"}) {
    CAPTURE(type);
    KeyPair k(type);
    oci::SignatureEvidence e{{candidate(k, payload(k_digest))}, {"tag sha256-aaaa.sig"}};
    auto s = oci::verify_signatures(e, k_digest, k_repo, key_policy(k));
    REQUIRE(s);
    CHECK(s->method == "key");
    CHECK(s->digest == k_digest);
    CHECK(s->describe().rfind("signed with key keys/cosign.pub (SHA256:", 0) == 0);
  }
}

TEST_CASE("signature: refusals: wrong key, another digest, another repository, unsigned",
          "[signature]") {
  KeyPair signer("EC"), other("EC");
  SECTION("wrong key") {
    oci::SignatureEvidence e{{candidate(other, payload(k_digest))}, {"tag sha256-aaaa.sig"}};
    auto s = oci::verify_signatures(e, k_digest, k_repo, key_policy(signer));
    REQUIRE_FALSE(s);
    CHECK(s.error().code == ErrorCode::permission_denied);
    CHECK(s.error().message.find("signature does not match key keys/cosign.pub") !=
          std::string::npos);
  }
  SECTION("the right key over another digest") {
    const std::string another = "sha256:" + std::string(64, 'b');
    oci::SignatureEvidence e{{candidate(signer, payload(another))}, {"tag sha256-aaaa.sig"}};
    auto s = oci::verify_signatures(e, k_digest, k_repo, key_policy(signer));
    REQUIRE_FALSE(s);
    CHECK(s.error().message.find("is over " + another + ", not " + k_digest) != std::string::npos);
  }
  SECTION("a signature for a manifest of another repository") {
    oci::SignatureEvidence e{{candidate(signer, payload(k_digest, "127.0.0.1:5000/evil/pkg"))},
                             {"tag sha256-aaaa.sig"}};
    auto s = oci::verify_signatures(e, k_digest, k_repo, key_policy(signer));
    REQUIRE_FALSE(s);
    CHECK(s.error().message.find("is for repository 127.0.0.1:5000/evil/pkg, not " + k_repo) !=
          std::string::npos);
  }
  SECTION("a payload changed after signing") {
    auto c = candidate(signer, payload(k_digest));
    c.payload = payload(k_digest, k_repo + ":v2");  // same digest, other bytes
    oci::SignatureEvidence e{{c}, {"tag sha256-aaaa.sig"}};
    CHECK_FALSE(oci::verify_signatures(e, k_digest, k_repo, key_policy(signer)));
  }
  SECTION("unsigned") {
    oci::SignatureEvidence e{{}, {"tag sha256-aaaa.sig", "tag sha256-aaaa (referrers)"}};
    auto s = oci::verify_signatures(e, k_digest, k_repo, key_policy(signer));
    REQUIRE_FALSE(s);
    CHECK(s.error().message.rfind("unsigned: no signature for " + k_digest +
                                      " (looked at tag sha256-aaaa.sig, tag sha256-aaaa "
                                      "(referrers)); the policy requires key keys/cosign.pub",
                                  0) == 0);
  }
  SECTION("one good signature among bad ones is enough") {
    oci::SignatureEvidence e{
        {candidate(other, payload(k_digest)), candidate(signer, payload(k_digest))},
        {"tag sha256-aaaa.sig"}};
    CHECK(oci::verify_signatures(e, k_digest, k_repo, key_policy(signer)));
  }
  SECTION("a key file that is not a key is the policy's error, not a refusal") {
    auto policy = key_policy(signer);
    policy.public_key_pem = "not a key";
    oci::SignatureEvidence e{{candidate(signer, payload(k_digest))}, {"tag sha256-aaaa.sig"}};
    auto s = oci::verify_signatures(e, k_digest, k_repo, policy);
    REQUIRE_FALSE(s);
    CHECK(s.error().code == ErrorCode::invalid_input);
    CHECK(s.error().message.find("keys/cosign.pub is not a PEM public key") != std::string::npos);
  }
}

TEST_CASE("signature: a sigstore bundle made with a key verifies with the policy's key only",
          "[signature]") {
  KeyPair signer("EC"), other("EC");
  const std::string manifest = R"({"schemaVersion":2,"layers":[]})";
  const std::string digest = oci::sha256_digest(manifest);
  std::string raw(32, '\0');
  for (size_t i = 0; i < 32; ++i)
    raw[i] = static_cast<char>(std::stoi(digest.substr(7 + 2 * i, 2), nullptr, 16));
  const std::string bundle =
      R"({"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json",)"
      R"("verificationMaterial":{"publicKey":{"hint":"cosign"}},)"
      R"("messageSignature":{"messageDigest":{"algorithm":"SHA2_256","digest":")" +
      oci::base64_encode(raw) + R"("},"signature":")" + oci::base64_encode(signer.sign(manifest)) +
      R"("}})";
  auto ok = oci::verify_bundle(bundle, digest, key_policy(signer));
  INFO((ok ? std::string() : ok.error().message));
  REQUIRE(ok);
  CHECK(ok->method == "key");
  CHECK(ok->describe().rfind("signed with key keys/cosign.pub (SHA256:", 0) == 0);
  auto wrong = oci::verify_bundle(bundle, digest, key_policy(other));
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message.find("does not verify with key keys/cosign.pub") !=
        std::string::npos);
  auto elsewhere = oci::verify_bundle(bundle, "sha256:" + std::string(64, 'f'), key_policy(signer));
  REQUIRE_FALSE(elsewhere);
  CHECK(elsewhere.error().message.find("the bundle signs " + digest) != std::string::npos);
}

TEST_CASE("signature: policy syntax: one signer, RE2 patterns that compile", "[signature]") {
  using flytecd::sources::VerifySpec;
  VerifySpec key;
  key.key = "keys/cosign.pub";
  CHECK(flytecd::sources::check_verify_spec(key));
  VerifySpec none;
  CHECK(flytecd::sources::check_verify_spec(none).error().message.find("no signer named") !=
        std::string::npos);
  VerifySpec both = key;
  both.identities.push_back({"^https://issuer$", "^x$"});
  CHECK(flytecd::sources::check_verify_spec(both).error().message.find("more than one") !=
        std::string::npos);
  VerifySpec bad;
  bad.identities.push_back({"^https://token\\.actions\\.githubusercontent\\.com$", "^(unclosed$"});
  auto st = flytecd::sources::check_verify_spec(bad);
  REQUIRE_FALSE(st);
  CHECK(st.error().message.find("matchOIDCIdentity[0].subject") != std::string::npos);
  CHECK(st.error().message.find("is not an RE2 expression") != std::string::npos);
  VerifySpec notation = key;
  notation.provider = "notation";
  CHECK(flytecd::sources::check_verify_spec(notation).error().message.find("expected cosign") !=
        std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
