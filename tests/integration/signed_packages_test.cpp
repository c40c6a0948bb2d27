// Signed packages (issue 28): cosign key signatures pushed next to a real `pyflyte package`
// archive in Debian's docker-registry, verified before anything is registered into the FlyteAdmin
// emulator over real gRPC; and Docker credential helpers run as real executables.
#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/common/json_dump.hpp"
#include "daemon/ledger/ledger.hpp"
#include "daemon/registration/registrar.hpp"
#include "flytecd_service.grpc.pb.h"
#include "sinks/emulator/emulator.hpp"
#include "sinks/flyteadmin/admin_sink.hpp"
#include "sources/oci/auth.hpp"
#include "sources/oci/fetcher.hpp"
#include "test_paths.hpp"
#include "tests/oci/oci_test_support.hpp"
#include "tests/support/admin_client.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/sigstore_standin.hpp"
#include "tests/support/tools.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace fs = std::filesystem;
namespace fa = flyteidl::admin;

using flytecd::testing::package_fixtures;
using flytecd::testing::read_bytes;

// The emulator, a ledger, a repository directory (keys live in it) and a registry.
struct Signed {
  git_test::TempDir dir;
  oci_test::Registry registry{{}};
  oci_test::Pusher pusher{registry};
  std::unique_ptr<sinks::emulator::Emulator> emu;
  std::unique_ptr<sinks::flyteadmin::AdminSink> sink;
  std::unique_ptr<ledger::Ledger> ledger;

  Signed() {
    fs::create_directories(dir.path() / "repo" / "keys");
    auto e = sinks::emulator::Emulator::start({});
    REQUIRE(e.ok());
    emu = std::move(*e);
    sinks::flyteadmin::AdminConfig cfg;
    cfg.endpoint = emu->address();
    cfg.insecure = true;
    auto s = sinks::flyteadmin::AdminSink::connect(cfg, "test");
    REQUIRE(s.ok());
    sink = std::move(*s);
    auto l = ledger::Ledger::open((dir.path() / "ledger.db").string());
    REQUIRE(l.ok());
    ledger = std::move(*l);
    flytecd_test::register_project(*flytecd_test::admin_stub(emu->address()), "flytesnacks");
  }

  // A P-256 key pair made with openssl, as `cosign generate-key-pair` makes one; the public half
  // at repo/keys/<name>.pub.
  std::string make_key(const std::string& name) {
    const std::string priv = (dir.path() / (name + ".key")).string();
    oci_test::openssl({"ecparam", "-genkey", "-name", "prime256v1", "-noout", "-out", priv},
                      dir.str());
    oci_test::openssl({"ec", "-in", priv, "-pubout", "-out",
                       (dir.path() / "repo" / "keys" / (name + ".pub")).string()},
                      dir.str());
    return priv;
  }

  // cosign's simple-signing payload for `digest` in `reference`, signed with `key` (openssl
  // dgst: ASN.1 ECDSA over SHA-256, what cosign puts in its signature annotation), pushed under
  // cosign's tag sha256-<hex>.sig of `repo`.
  void push_signature(const std::string& repo, const std::string& digest,
                      const std::string& reference, const std::string& key) {
    const std::string payload = R"({"critical":{"identity":{"docker-reference":")" + reference +
                                R"("},"image":{"docker-manifest-digest":")" + digest +
                                R"("},"type":"cosign container image signature"},"optional":null})";
    const fs::path p = dir.path() / "payload.json", sig = dir.path() / "payload.sig";
    git_test::spit(p, payload);
    oci_test::openssl({"dgst", "-sha256", "-sign", key, "-out", sig.string(), p.string()},
                      dir.str());
    const std::string config = "{}";
    const std::string config_digest = pusher.push_blob(repo, config);
    const std::string layer_digest = pusher.push_blob(repo, payload);
    nlohmann::json m = {{"schemaVersion", 2},
                        {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                        {"config",
                         {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                          {"digest", config_digest},
                          {"size", config.size()}}},
                        {"layers",
                         {{{"mediaType", "application/vnd.dev.cosign.simplesigning.v1+json"},
                           {"digest", layer_digest},
                           {"size", payload.size()},
                           {"annotations",
                            {{"dev.cosignproject.cosign/signature",
                              sources::oci::base64_encode(read_bytes(sig))}}}}}}};
    pusher.push_manifest(repo, "sha256-" + digest.substr(7) + ".sig", dump_json(m),
                         "application/vnd.oci.image.manifest.v1+json");
  }

  // A keyless cosign signature (payload and annotations) pushed under sha256-<hex>.sig.
  void push_candidate(const std::string& repo, const std::string& digest,
                      const sources::oci::SignatureCandidate& c) {
    const std::string config_digest = pusher.push_blob(repo, "{}");
    const std::string layer_digest = pusher.push_blob(repo, c.payload);
    nlohmann::json m = {{"schemaVersion", 2},
                        {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                        {"config",
                         {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                          {"digest", config_digest},
                          {"size", 2}}},
                        {"layers",
                         {{{"mediaType", c.media_type},
                           {"digest", layer_digest},
                           {"size", c.payload.size()},
                           {"annotations", c.annotations}}}}};
    pusher.push_manifest(repo, "sha256-" + digest.substr(7) + ".sig", dump_json(m),
                         "application/vnd.oci.image.manifest.v1+json");
  }

  // A sigstore bundle as a referrer of `subject` (the OCI 1.1 layout cosign uses), listed in
  // the referrers tag fallback sha256-<hex>: docker-registry 2.8 has no referrers API.
  void push_bundle_referrer(const std::string& repo, const oci_test::Pusher::Pushed& subject,
                            const std::string& bundle) {
    const std::string empty_digest = pusher.push_blob(repo, "{}");
    const std::string layer_digest = pusher.push_blob(repo, bundle);
    nlohmann::json m = {{"schemaVersion", 2},
                        {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                        {"artifactType", "application/vnd.dev.sigstore.bundle.v0.3+json"},
                        {"config",
                         {{"mediaType", "application/vnd.oci.empty.v1+json"},
                          {"digest", empty_digest},
                          {"size", 2}}},
                        {"layers",
                         {{{"mediaType", "application/vnd.dev.sigstore.bundle.v0.3+json"},
                           {"digest", layer_digest},
                           {"size", bundle.size()}}}},
                        {"subject",
                         {{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                          {"digest", subject.manifest_digest},
                          {"size", subject.manifest.size()}}}};
    const std::string text = dump_json(m);
    const std::string digest =
        pusher.push_manifest(repo, "bundle-" + subject.manifest_digest.substr(7, 12), text,
                             "application/vnd.oci.image.manifest.v1+json");
    nlohmann::json index = {
        {"schemaVersion", 2},
        {"mediaType", "application/vnd.oci.image.index.v1+json"},
        {"manifests",
         {{{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
           {"digest", digest},
           {"size", text.size()},
           {"artifactType", "application/vnd.dev.sigstore.bundle.v0.3+json"}}}}};
    pusher.push_manifest(repo, "sha256-" + subject.manifest_digest.substr(7), dump_json(index),
                         "application/vnd.oci.image.index.v1+json");
  }

  registration::DefaultPackageResolver packages(registration::Verification v = {}) {
    sources::oci::FetchOptions fo;
    fo.cache_dir = dir.path() / "cache";
    fo.plain_http_registries = {registry.host()};
    fo.max_attempts = 1;
    v.read_repo_file = registration::directory_reader((dir.path() / "repo").string());
    return registration::DefaultPackageResolver(fo, "", v.read_repo_file, std::move(v));
  }

  model::Registration reg(const std::string& name, const std::string& repo,
                          std::optional<sources::VerifySpec> verify) {
    model::Registration r;
    r.name = name;
    r.project = "flytesnacks";
    r.domain = "development";
    r.version = "v1";
    r.package = "oci://" + registry.host() + "/" + repo + ":v1";
    r.source_kind = "WorkflowRegistration";
    r.where = {"registrations/" + name + ".yaml", 3, 0};
    r.verify = std::move(verify);
    return r;
  }

  registration::RegistrationReport run(const std::vector<model::Registration>& regs,
                                       registration::PackageResolver& packages, bool dry = false) {
    registration::RegistrarOptions o;
    o.revision = "test";
    o.dry_run = dry;
    return registration::reconcile_registrations(regs, *sink, packages, *ledger, o);
  }
};

sources::VerifySpec key_spec(const std::string& key) {
  sources::VerifySpec s;
  s.key = key;
  s.where = "registrations/x.yaml:12";
  return s;
}

const registration::RegistrationOutcome& item(const registration::RegistrationReport& rep,
                                              const std::string& name) {
  for (const auto& i : rep.items)
    if (i.name == name) return i;
  FAIL("no item " << name);
  return rep.items.front();
}

TEST_CASE(
    "a package signed with the policy's key registers, and the signer is in the outcome, the "
    "ledger and the plan",
    "[registration][integration][oci][signature]") {
  FLYTECD_REQUIRE_TOOL(!oci_test::registry_binary().empty(),
                       "docker-registry is not installed (packaging/setup-debian.sh --tests)");
  Signed h;
  const std::string key = h.make_key("cosign");
  auto pushed = h.pusher.push_package("flyte/pkg", "v1",
                                      read_bytes(package_fixtures() / "valid-register.tgz"));
  h.push_signature("flyte/pkg", pushed.manifest_digest, h.registry.host() + "/flyte/pkg", key);
  auto packages = h.packages();
  const auto r = h.reg("pkg", "flyte/pkg", key_spec("keys/cosign.pub"));

  auto plan = h.run({r}, packages, true);
  INFO(registration::describe(plan.items.at(0)));
  REQUIRE(plan.ok());
  CHECK(plan.items[0].state == flytecd::registration::RegistrationState::register_);
  CHECK(plan.items[0].signed_by.rfind("signed with key keys/cosign.pub (SHA256:", 0) == 0);
  CHECK(registration::describe(plan.items[0]).find("; signed with key keys/cosign.pub") !=
        std::string::npos);

  auto rep = h.run({r}, packages);
  INFO(registration::describe(rep.items.at(0)));
  REQUIRE(rep.ok());
  CHECK(rep.items[0].state == flytecd::registration::RegistrationState::registered);
  const auto json = registration::to_json(rep.items[0]);
  CHECK(json["signature"]["digest"] == pushed.manifest_digest);
  CHECK(json["signature"]["by"].get<std::string>().rfind("signed with key keys/cosign.pub", 0) ==
        0);
  const auto rec = h.ledger->registrations()->at("registration/flytesnacks/development/pkg");
  auto signer = nlohmann::json::parse(rec.signer);
  CHECK(signer["digest"] == pushed.manifest_digest);
  CHECK(signer["method"] == "key");
  CHECK(signer["verifiedAt"].get<int64_t>() > 0);

  // A new version signed with another key is called out against the recorded signer.
  const std::string other = h.make_key("other");
  auto v2 = h.pusher.push_package("flyte/pkg", "v2",
                                  read_bytes(package_fixtures() / "flyte-package.tgz"));
  h.push_signature("flyte/pkg", v2.manifest_digest, h.registry.host() + "/flyte/pkg", other);
  auto r2 = h.reg("pkg", "flyte/pkg", key_spec("keys/other.pub"));
  r2.version = "v2";
  r2.package = "oci://" + h.registry.host() + "/flyte/pkg:v2";
  auto changed = h.run({r2}, packages, true);
  INFO(registration::describe(changed.items.at(0)));
  REQUIRE(changed.ok());
  CHECK(changed.items[0].signer_changed);
  CHECK(registration::describe(changed.items[0])
            .find("SIGNER CHANGED (the recorded version was "
                  "signed with key keys/cosign.pub") != std::string::npos);
}

TEST_CASE(
    "refused signatures fail only their registration: unsigned, wrong key, another digest, "
    "another repository",
    "[registration][integration][oci][signature]") {
  FLYTECD_REQUIRE_TOOL(!oci_test::registry_binary().empty(),
                       "docker-registry is not installed (packaging/setup-debian.sh --tests)");
  Signed h;
  const std::string key = h.make_key("cosign");
  const std::string wrong = h.make_key("wrong");
  const std::string pkg = read_bytes(package_fixtures() / "valid-register.tgz");
  const std::string host = h.registry.host();
  // Unsigned.
  h.pusher.push_package("flyte/unsigned", "v1", pkg);
  // Signed with another key than the policy's.
  auto w = h.pusher.push_package("flyte/wrongkey", "v1", pkg);
  h.push_signature("flyte/wrongkey", w.manifest_digest, host + "/flyte/wrongkey", wrong);
  // The right key over another manifest's digest.
  auto o = h.pusher.push_package("flyte/otherdigest", "v1", pkg);
  auto decoy = h.pusher.push_package("flyte/otherdigest", "decoy",
                                     read_bytes(package_fixtures() / "flyte-package.tgz"));
  REQUIRE(decoy.manifest_digest != o.manifest_digest);
  {
    // The signature of the decoy, copied under the tag of the package's digest.
    h.push_signature("flyte/otherdigest", decoy.manifest_digest, host + "/flyte/otherdigest", key);
    oci_test::Pusher& p = h.pusher;
    httplib::Client c(h.registry.base_url());
    auto m =
        c.Get(("/v2/flyte/otherdigest/manifests/sha256-" + decoy.manifest_digest.substr(7) + ".sig")
                  .c_str(),
              {{"Accept", "application/vnd.oci.image.manifest.v1+json"}});
    REQUIRE(m);
    p.push_manifest("flyte/otherdigest", "sha256-" + o.manifest_digest.substr(7) + ".sig", m->body,
                    "application/vnd.oci.image.manifest.v1+json");
  }
  // A signature made for the same manifest in another repository, copied here.
  auto x = h.pusher.push_package("flyte/copied", "v1", pkg);
  h.push_signature("flyte/copied", x.manifest_digest, host + "/evil/elsewhere", key);
  // And one good registration in the same pass.
  auto g = h.pusher.push_package("flyte/good", "v1",
                                 read_bytes(package_fixtures() / "flyte-package.tgz"));
  h.push_signature("flyte/good", g.manifest_digest, host + "/flyte/good", key);

  auto packages = h.packages();
  const auto policy = key_spec("keys/cosign.pub");
  auto rep = h.run(
      {h.reg("unsigned", "flyte/unsigned", policy), h.reg("wrongkey", "flyte/wrongkey", policy),
       h.reg("otherdigest", "flyte/otherdigest", policy), h.reg("copied", "flyte/copied", policy),
       h.reg("good", "flyte/good", policy)},
      packages);
  for (const auto& i : rep.items) INFO(registration::describe(i));
  CHECK(item(rep, "good").state == flytecd::registration::RegistrationState::registered);
  for (const char* n : {"unsigned", "wrongkey", "otherdigest", "copied"}) {
    CAPTURE(n);
    CHECK(item(rep, n).state == flytecd::registration::RegistrationState::failed);
    CHECK(registration::describe(item(rep, n))
              .find("(registrations/" + std::string(n) + ".yaml:3)") != std::string::npos);
  }
  CHECK(item(rep, "unsigned").message.rfind("unsigned: no signature for sha256:", 0) == 0);
  CHECK(item(rep, "wrongkey").message.find("signature does not match key keys/cosign.pub") !=
        std::string::npos);
  CHECK(item(rep, "otherdigest")
            .message.find("is over " + decoy.manifest_digest + ", not " + o.manifest_digest) !=
        std::string::npos);
  CHECK(item(rep, "copied").message.find("is for repository " + host + "/evil/elsewhere") !=
        std::string::npos);
  // Nothing of the refused ones reached FlyteAdmin or the ledger.
  auto recs = h.ledger->registrations();
  REQUIRE(recs);
  CHECK(recs->size() == 1);
  CHECK(recs->count("registration/flytesnacks/development/good") == 1);
}

TEST_CASE(
    "packages.verify: the longest prefix's keyFile applies to registrations without their "
    "own policy",
    "[registration][integration][oci][signature]") {
  FLYTECD_REQUIRE_TOOL(!oci_test::registry_binary().empty(),
                       "docker-registry is not installed (packaging/setup-debian.sh --tests)");
  Signed h;
  const std::string key = h.make_key("cosign");
  const std::string host = h.registry.host();
  auto a = h.pusher.push_package("team/signed", "v1",
                                 read_bytes(package_fixtures() / "valid-register.tgz"));
  h.push_signature("team/signed", a.manifest_digest, host + "/team/signed", key);
  h.pusher.push_package("team/unsigned", "v1",
                        read_bytes(package_fixtures() / "flyte-package.tgz"));
  h.pusher.push_package("free/pkg", "v1", read_bytes(package_fixtures() / "flyte-package.tgz"));

  registration::Verification v;
  sources::VerifySpec broad;  // a broader prefix whose key signs nothing: the longer one wins
  broad.prefix = "oci://" + host + "/";
  broad.key_file = (h.dir.path() / "repo" / "keys" / "missing.pub").string();
  broad.where = "config packages.verify[0]";
  sources::VerifySpec team;
  team.prefix = "oci://" + host + "/team/";
  team.key_file = (h.dir.path() / "repo" / "keys" / "cosign.pub").string();
  team.where = "config packages.verify[1]";
  v.defaults = {broad, team};
  auto packages = h.packages(v);
  auto rep = h.run({h.reg("signed", "team/signed", std::nullopt),
                    h.reg("unsigned", "team/unsigned", std::nullopt)},
                   packages);
  for (const auto& i : rep.items) INFO(registration::describe(i));
  CHECK(item(rep, "signed").state == flytecd::registration::RegistrationState::registered);
  CHECK(item(rep, "signed").signed_by.find("cosign.pub") != std::string::npos);
  CHECK(item(rep, "unsigned").state == flytecd::registration::RegistrationState::failed);
  CHECK(item(rep, "unsigned")
            .message.find("(policy config packages.verify[1], prefix oci://" + host + "/team/)") !=
        std::string::npos);
  // free/pkg falls under the broad prefix, whose key file does not exist: a clear error.
  auto free = h.run({h.reg("free", "free/pkg", std::nullopt)}, packages);
  CHECK(free.items.at(0).state == flytecd::registration::RegistrationState::failed);
  CHECK(free.items[0].message.find("verify.keyFile (verify at config packages.verify[0])") !=
        std::string::npos);
}

TEST_CASE(
    "keyless: a cosign keyless signature and a sigstore bundle referrer, found in the "
    "registry, verify against packages.trustedRoot and the identity",
    "[registration][integration][oci][signature][keyless]") {
  FLYTECD_REQUIRE_TOOL(!oci_test::registry_binary().empty(),
                       "docker-registry is not installed (packaging/setup-debian.sh --tests)");
  Signed h;
  sigstore_test::Sigstore sig;
  const int64_t now = static_cast<int64_t>(std::time(nullptr)) + 60;
  const std::string host = h.registry.host();
  auto tag_scheme = h.pusher.push_package("acme/tag", "v1",
                                          read_bytes(package_fixtures() / "valid-register.tgz"));
  h.push_candidate(
      "acme/tag", tag_scheme.manifest_digest,
      sigstore_test::cosign_keyless(sig, tag_scheme.manifest_digest, now, "", host + "/acme/tag"));
  auto referred = h.pusher.push_package("acme/bundle", "v1",
                                        read_bytes(package_fixtures() / "flyte-package.tgz"));
  h.push_bundle_referrer("acme/bundle", referred,
                         dump_json(sigstore_test::bundle_v03(sig, referred.manifest, now)));
  h.pusher.push_package("acme/unsigned", "v1",
                        read_bytes(package_fixtures() / "flyte-package.tgz"));
  git_test::spit(h.dir.path() / "trusted_root.json", sig.trusted_root);

  registration::Verification v;
  v.trusted_root_file = (h.dir.path() / "trusted_root.json").string();
  auto packages = h.packages(v);
  sources::VerifySpec who;
  who.identities = {
      {"^https://token\\.actions\\.githubusercontent\\.com$",
       "^https://github\\.com/acme/flows/\\.github/workflows/release\\.yaml@refs/tags/v.*$"}};
  who.where = "registrations/x.yaml:9";
  sources::VerifySpec stranger = who;
  stranger.identities[0].subject = "^https://github\\.com/acme/other/.*$";
  auto rep = h.run({h.reg("tag", "acme/tag", who), h.reg("bundle", "acme/bundle", who),
                    h.reg("unsigned", "acme/unsigned", who)},
                   packages);
  for (const auto& i : rep.items) INFO(registration::describe(i));
  CHECK(item(rep, "tag").state == flytecd::registration::RegistrationState::registered);
  CHECK(item(rep, "tag").signed_by ==
        "signed by " + sigstore_test::k_subject + " via " + sigstore_test::k_issuer);
  CHECK(item(rep, "tag").signed_at == now);
  CHECK(item(rep, "bundle").state == flytecd::registration::RegistrationState::registered);
  CHECK(item(rep, "bundle").signer_identity == sigstore_test::k_subject);
  CHECK(item(rep, "unsigned").state == flytecd::registration::RegistrationState::failed);
  CHECK(item(rep, "unsigned").message.find("looked at tag sha256-") != std::string::npos);
  CHECK(item(rep, "unsigned").message.find(" (referrers)") != std::string::npos);

  // The same signatures, another identity required: refused, naming who did sign.
  auto other = h.run({h.reg("bundle", "acme/bundle", stranger)}, packages, true);
  CHECK(item(other, "bundle").state == flytecd::registration::RegistrationState::failed);
  CHECK(item(other, "bundle").message.find("signed by " + sigstore_test::k_subject) !=
        std::string::npos);

  // Without a trusted root, a keyless policy is an error that says what to set.
  auto no_root = h.packages();
  auto unset = h.run({h.reg("tag", "acme/tag", who)}, no_root, true);
  CHECK(item(unset, "tag").message.find("set packages.trustedRoot") != std::string::npos);
}

// sigstore's own client (@sigstore/sign) signs the package's manifest against sigstore's own mock
// Fulcio and Rekor (@sigstore/mock), pinned in tests/support/sigstore/package-lock.json and
// installed by packaging/setup-debian.sh --tests: what flytecd verifies is what sigstore writes.
TEST_CASE(
    "keyless interop: a bundle made by @sigstore/sign with @sigstore/mock's Fulcio and Rekor "
    "verifies from the registry, and refuses another identity",
    "[registration][integration][oci][signature][keyless]") {
  const fs::path tool = fs::path(FLYTECD_SOURCE_DIR) / "tests" / "support" / "sigstore";
  FLYTECD_REQUIRE_TOOL(fs::exists(tool / "node_modules" / "@sigstore" / "sign"),
                       "the pinned sigstore test packages are not installed (npm ci in "
                       "tests/support/sigstore; packaging/setup-debian.sh --tests does it)");
  FLYTECD_REQUIRE_TOOL(!oci_test::registry_binary().empty(),
                       "docker-registry is not installed (packaging/setup-debian.sh --tests)");
  Signed h;
  auto pushed = h.pusher.push_package("acme/interop", "v1",
                                      read_bytes(package_fixtures() / "flyte-package.tgz"));
  git_test::spit(h.dir.path() / "manifest.json", pushed.manifest);
  const fs::path out = h.dir.path() / "sigstore";
  auto r = git_test::run(
      {"node", (tool / "sign.cjs").string(), (h.dir.path() / "manifest.json").string(),
       out.string(), sigstore_test::k_subject, sigstore_test::k_issuer},
      h.dir.str());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  h.push_bundle_referrer("acme/interop", pushed, read_bytes(out / "bundle.json"));

  registration::Verification v;
  v.trusted_root_file = (out / "trusted_root.json").string();
  auto packages = h.packages(v);
  sources::VerifySpec who;
  who.identities = {
      {"^https://token\\.actions\\.githubusercontent\\.com$",
       "^https://github\\.com/acme/flows/\\.github/workflows/release\\.yaml@refs/tags/v.*$"}};
  who.where = "registrations/interop.yaml:9";
  auto rep = h.run({h.reg("interop", "acme/interop", who)}, packages);
  INFO(registration::describe(rep.items.at(0)));
  REQUIRE(rep.items.size() == 1);
  CHECK(rep.items[0].state == flytecd::registration::RegistrationState::registered);
  CHECK(rep.items[0].signer_identity == sigstore_test::k_subject);
  CHECK(rep.items[0].signer_issuer == sigstore_test::k_issuer);
  CHECK(rep.items[0].signed_at > 0);

  // Without the signed entry timestamp nothing vouches for the integrated time: refused.
  auto proof_only = nlohmann::json::parse(read_bytes(out / "bundle.json"));
  proof_only["verificationMaterial"]["tlogEntries"][0].erase("inclusionPromise");
  sources::VerifyPolicy policy;
  policy.identities = who.identities;
  policy.trusted_root_json = read_bytes(out / "trusted_root.json");
  policy.trusted_root_name = "trusted_root.json";
  auto by_proof =
      sources::oci::verify_bundle(dump_json(proof_only), pushed.manifest_digest, policy);
  REQUIRE_FALSE(by_proof);
  CHECK(by_proof.error().message.find("no signed entry timestamp") != std::string::npos);

  sources::VerifySpec prefix = who;  // the identity's prefix, unanchored: not a whole match
  prefix.identities[0].subject = "https://github.com/acme/flows";
  auto again = h.packages(v);
  auto refused = h.run({h.reg("interop", "acme/interop", prefix)}, again, true);
  CHECK(item(refused, "interop").state == flytecd::registration::RegistrationState::failed);
  CHECK(item(refused, "interop").message.find("signature does not match identity") !=
        std::string::npos);
}

// cosign's new bundle format as sign.mjs makes it with sigstore's own client and mock services: a
// DSSE envelope over an in-toto statement naming the manifest digest, a Rekor dsse entry. The
// refusals are sigstore's own refusals too (tests/support/sigstore/verify.mjs, @sigstore/verify).
TEST_CASE(
    "keyless interop: cosign's DSSE bundle from @sigstore/sign verifies, and is refused when "
    "expired, logged for another artifact, or backdated without a signed timestamp",
    "[integration][signature][keyless]") {
  const fs::path tool = fs::path(FLYTECD_SOURCE_DIR) / "tests" / "support" / "sigstore";
  FLYTECD_REQUIRE_TOOL(fs::exists(tool / "node_modules" / "@sigstore" / "sign"),
                       "the pinned sigstore test packages are not installed (npm ci in "
                       "tests/support/sigstore; packaging/setup-debian.sh --tests does it)");
  git_test::TempDir dir;
  const std::string digest = "sha256:" + std::string(64, '7');
  auto make = [&](const std::string& name, std::vector<std::string> extra) {
    const fs::path out = dir.path() / name;
    std::vector<std::string> argv = {"node",       (tool / "sign.mjs").string(),
                                     "--digest",   digest,
                                     "--identity", sigstore_test::k_subject,
                                     "--issuer",   sigstore_test::k_issuer,
                                     "--out",      out.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = git_test::run(argv, dir.str());
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    return out;
  };
  auto verify = [&](const fs::path& out) {
    sources::VerifyPolicy p;
    p.identities = {{"^https://token\\.actions\\.githubusercontent\\.com$",
                     "^https://github\\.com/acme/flows/.*$"}};
    p.trusted_root_json = read_bytes(out / "trusted_root.json");
    p.trusted_root_name = "trusted_root.json";
    return sources::oci::verify_bundle(read_bytes(out / "bundle.json"), digest, p);
  };
  auto good = verify(make("good", {}));
  INFO((good ? std::string() : good.error().message));
  REQUIRE(good);
  CHECK(good->identity == sigstore_test::k_subject);
  auto expired = verify(make("expired", {"--expired"}));
  REQUIRE_FALSE(expired);
  CHECK(expired.error().message.find("expired") != std::string::npos);
  auto other = verify(make("other", {"--other-artifact", "sha256:" + std::string(64, '8')}));
  REQUIRE_FALSE(other);
  CHECK(other.error().message.find("another payload") != std::string::npos);
  auto backdated = verify(make("backdated", {"--expired", "--no-set", "--backdate"}));
  REQUIRE_FALSE(backdated);
  CHECK(backdated.error().message.find("no signed entry timestamp") != std::string::npos);
}

TEST_CASE("a credential helper named by credHelpers gives the registry's Basic credentials",
          "[oci][integration][credentials]") {
  FLYTECD_REQUIRE_TOOL(!oci_test::registry_binary().empty(),
                       "docker-registry is not installed (packaging/setup-debian.sh --tests)");
  oci_test::RegistryOptions ro;
  ro.basic = true;
  oci_test::Registry registry(ro);
  oci_test::Pusher pusher(registry, true);
  auto pushed = pusher.push_package("flyte/private", "v1",
                                    read_bytes(package_fixtures() / "flyte-package.tgz"));
  git_test::TempDir dir;
  const fs::path bin = dir.path() / "bin";
  fs::create_directories(bin);
  // The helper logs what it was asked (never the secret) and answers for this registry only.
  git_test::spit(bin / "docker-credential-test",
                 "#!/bin/sh\n"
                 "read host\n"
                 "echo \"$1 $host\" >> \"" +
                     (dir.path() / "asked").string() +
                     "\"\n"
                     "if [ \"$host\" = \"" +
                     registry.host() +
                     "\" ]; then\n"
                     "  printf '{\"ServerURL\":\"%s\",\"Username\":\"" +
                     oci_test::k_user + "\",\"Secret\":\"" + oci_test::k_password +
                     "\"}' \"$host\"\n"
                     "else echo 'credentials not found in native keychain'; exit 1; fi\n");
  fs::permissions(bin / "docker-credential-test", fs::perms::owner_all);
  git_test::spit(dir.path() / "config.json",
                 R"({"credHelpers": {")" + registry.host() + R"(": "test"}})");
  const std::string saved = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (bin.string() + ":" + saved).c_str(), 1);
  sources::oci::FetchOptions fo;
  fo.cache_dir = dir.path() / "cache";
  fo.plain_http_registries = {registry.host()};
  fo.docker_config = (dir.path() / "config.json").string();
  sources::oci::PackageFetcher fetcher(fo);
  std::string error;
  auto ref = sources::parse_package_ref("oci://" + registry.host() + "/flyte/private:v1", error);
  REQUIRE(ref);
  auto got = fetcher.fetch(*ref);
  ::setenv("PATH", saved.c_str(), 1);
  INFO((got ? std::string() : got.error().message));
  REQUIRE(got);
  CHECK(got->manifest_digest == pushed.manifest_digest);
  CHECK(read_bytes(dir.path() / "asked") == "get " + registry.host() + "\n");

  // Without the helper on PATH the error names it and where it was configured.
  sources::oci::PackageFetcher missing(fo);
  auto no = missing.fetch(*ref);
  REQUIRE_FALSE(no);
  CHECK(no.error().message.find("credential helper docker-credential-test (credHelpers[\"" +
                                registry.host() + "\"] in " + fo.docker_config +
                                ") is not on PATH") != std::string::npos);
  CHECK(no.error().message.find(oci_test::k_password) == std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
