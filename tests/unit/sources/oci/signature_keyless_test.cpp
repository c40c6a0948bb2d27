// Keyless (Fulcio + Rekor) verification against a local stand-in of sigstore made with openssl:
// a CA in the role of Fulcio issues a short-lived code-signing certificate carrying the identity
// (SAN URI) and the OIDC issuer (extension 1.3.6.1.4.1.57264.1.8), a P-256 key in the role of
// Rekor signs entry timestamps and checkpoints, and the test writes the trusted_root.json, the
// hashedrekord entries, cosign's annotations and sigstore bundles as their formats describe.
#include "tests/support/sigstore_standin.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace sigstore_test;

// A minute after the certificates are made (the leaf is valid from its making for one day).
const int64_t k_now = static_cast<int64_t>(std::time(nullptr)) + 60;
const std::string k_digest = "sha256:" + std::string(64, 'c');

TEST_CASE(
    "keyless: cosign's tag-scheme signature with a Fulcio certificate and a Rekor SET "
    "verifies, naming the identity and issuer",
    "[signature][keyless]") {
  Sigstore s;
  oci::SignatureEvidence e{{cosign_keyless(s, k_digest, k_now)}, {"tag"}};
  auto r = oci::verify_signatures(e, k_digest, k_repo, s.policy());
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r);
  CHECK(r->method == "keyless");
  CHECK(r->identity == k_subject);
  CHECK(r->issuer == k_issuer);
  CHECK(r->signed_at == k_now);
  CHECK(r->describe() == "signed by " + k_subject + " via " + k_issuer);
}

TEST_CASE(
    "keyless refusals: unanchored prefix, expired certificate, another artifact in the log, "
    "another CA, a forged timestamp, another issuer",
    "[signature][keyless]") {
  Sigstore s;
  auto refuse = [&](const oci::SignatureCandidate& c, const oci::VerifyPolicy& p) {
    oci::SignatureEvidence e{{c}, {"tag"}};
    auto r = oci::verify_signatures(e, k_digest, k_repo, p);
    REQUIRE_FALSE(r);
    return r.error().message;
  };
  SECTION("a pattern written as a prefix must match the whole identity") {
    CHECK(refuse(cosign_keyless(s, k_digest, k_now), s.policy("https://github.com/acme/flows"))
              .find("signature does not match identity") != std::string::npos);
    // …and a look-alike repository never matches an anchored pattern of the real one.
    Sigstore evil("https://github.com/acme/flows-evil/.github/workflows/release.yaml@refs/tags/v1");
    CHECK(refuse(cosign_keyless(evil, k_digest, k_now),
                 evil.policy("^https://github\\.com/acme/flows/.*$"))
              .find("signed by https://github.com/acme/flows-evil/") != std::string::npos);
  }
  SECTION("a certificate expired when the log recorded the signature, no other timestamp") {
    const int64_t later = k_now + 3 * 24 * 3600;  // the leaf is valid for one day
    CHECK(refuse(cosign_keyless(s, k_digest, later), s.policy()).find("expired") !=
          std::string::npos);
  }
  SECTION("the log entry is for another artifact") {
    CHECK(refuse(cosign_keyless(s, k_digest, k_now, std::string(64, 'e')), s.policy())
              .find("the transparency log entry is for another artifact") != std::string::npos);
  }
  SECTION("a certificate from a CA the trusted root does not hold") {
    Sigstore other;
    auto p = s.policy();
    CHECK(refuse(cosign_keyless(other, k_digest, k_now), p)
              .find("log the trusted root does not "
                    "list") != std::string::npos);
    // Same log key, other CA: the chain is what refuses it.
    Json root = Json::parse(p.trusted_root_json);
    root["tlogs"] = Json::parse(other.trusted_root)["tlogs"];
    p.trusted_root_json = root.dump();
    CHECK(refuse(cosign_keyless(other, k_digest, k_now), p)
              .find("does not chain to the trusted Fulcio root") != std::string::npos);
  }
  SECTION("a signed entry timestamp that does not cover the entry") {
    auto c = cosign_keyless(s, k_digest, k_now);
    Json b = Json::parse(c.annotations[oci::k_cosign_bundle_annotation]);
    b["Payload"]["integratedTime"] = k_now - 60;  // the time was changed after signing
    c.annotations[oci::k_cosign_bundle_annotation] = b.dump();
    CHECK(refuse(c, s.policy()).find("signed entry timestamp does not verify") !=
          std::string::npos);
  }
  SECTION("another OIDC issuer") {
    Sigstore google(k_subject, "https://accounts.google.com");
    CHECK(refuse(cosign_keyless(google, k_digest, k_now), google.policy())
              .find("via https://accounts.google.com") != std::string::npos);
  }
}

TEST_CASE(
    "keyless: a sigstore bundle v0.3 signing the manifest's bytes verifies, one for "
    "another manifest does not",
    "[signature][keyless]") {
  Sigstore s;
  const std::string manifest = R"({"schemaVersion":2,"layers":[]})";
  const std::string digest = oci::sha256_digest(manifest);
  auto ok =
      oci::verify_bundle(flytecd::dump_json(bundle_v03(s, manifest, k_now)), digest, s.policy());
  INFO((ok ? std::string() : ok.error().message));
  REQUIRE(ok);
  CHECK(ok->identity == k_subject);
  auto other = oci::verify_bundle(flytecd::dump_json(bundle_v03(s, manifest + " ", k_now)), digest,
                                  s.policy());
  REQUIRE_FALSE(other);
  CHECK(other.error().message.find("not " + digest) != std::string::npos);
  // The bundle signs the manifest, but its Rekor entry is for another artifact.
  auto logged = oci::verify_bundle(
      flytecd::dump_json(bundle_v03(s, manifest, k_now, std::string(64, 'd'))), digest, s.policy());
  REQUIRE_FALSE(logged);
  CHECK(logged.error().message.find("the transparency log entry is for another artifact") !=
        std::string::npos);
}

TEST_CASE(
    "keyless: an inclusion proof with a signed checkpoint is checked, and never stands in "
    "for the signed entry timestamp",
    "[signature][keyless]") {
  Sigstore s;
  const std::string manifest = R"({"schemaVersion":2,"layers":[{"size":1}]})";
  Json b = bundle_v03(s, manifest, k_now);
  Json& entry = b["verificationMaterial"]["tlogEntries"][0];
  // A tree of two leaves; the entry is leaf 1, leaf 0 is someone else's.
  const std::string body = *oci::base64_decode(entry["canonicalizedBody"].get<std::string>());
  const std::string h0 = raw_sha256(std::string(1, '\0') + "another entry");
  const std::string h1 = raw_sha256(std::string(1, '\0') + body);
  const std::string root = raw_sha256(std::string(1, '\x01') + h0 + h1);
  const std::string note = "rekor.test - 1\n2\n" + oci::base64_encode(root) + "\n";
  const std::string note_sig = sign_with(s.dir / "rekor.key", note);
  const std::string line =
      "\xe2\x80\x94 rekor.test " + oci::base64_encode(s.log_id.substr(0, 4) + note_sig) + "\n";
  entry["inclusionProof"] = {{"logIndex", "1"},
                             {"treeSize", "2"},
                             {"rootHash", oci::base64_encode(root)},
                             {"hashes", {oci::base64_encode(h0)}},
                             {"checkpoint", {{"envelope", note + "\n" + line}}}};
  const std::string digest = oci::sha256_digest(manifest);
  auto ok = oci::verify_bundle(b.dump(), digest, s.policy());
  INFO((ok ? std::string() : ok.error().message));
  CHECK(ok);
  // A proof that leads elsewhere is refused although the timestamp is good.
  Json bad = b;
  bad["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]["hashes"] = {
      oci::base64_encode(raw_sha256("x"))};
  auto elsewhere = oci::verify_bundle(bad.dump(), digest, s.policy());
  REQUIRE_FALSE(elsewhere);
  CHECK(elsewhere.error().message.find("inclusion proof does not lead to its root hash") !=
        std::string::npos);
  // Without the signed entry timestamp the integrated time is signed by nothing (the proof
  // covers the body only): refused, whatever the proof says.
  entry.erase("inclusionPromise");
  auto unsigned_time = oci::verify_bundle(b.dump(), digest, s.policy());
  REQUIRE_FALSE(unsigned_time);
  CHECK(unsigned_time.error().message.find("no signed entry timestamp") != std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
