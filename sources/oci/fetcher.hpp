#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "sources/oci/signature.hpp"
#include "sources/package_ref.hpp"

namespace flytecd::sources::oci {

struct FetchOptions {
  std::filesystem::path cache_dir;        // content-addressed store: <cache_dir>/blobs/sha256/<hex>
  uint64_t cache_max_bytes = 1ull << 30;  // evict least-recently-used blobs above this
  std::string docker_config;  // config.json path; empty = $DOCKER_CONFIG/config.json, then
                              // ~/.docker/config.json (see auth.hpp for the full order)
  std::string ca_file;        // extra PEM CA bundle; empty = system CAs
  std::vector<std::string> plain_http_registries;  // "host:port" spoken to over http://
  uint64_t max_manifest_bytes = 4ull << 20;
  uint64_t max_blob_bytes = 512ull << 20;
  int max_attempts = 4;  // 429 (Retry-After honoured), 5xx, transport errors
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds total_timeout{300000};  // one request, its retries included
  // One resolve() or fetch() in all (manifests, tokens, the blob, every retry): a registry that
  // accepts and never answers fails that package after this, not the pass (packages.fetchTimeout).
  std::chrono::milliseconds package_timeout{300000};
  // A transfer that moves no byte for this long is aborted and retried within package_timeout
  // (packages.stallTimeout; 0 = off).
  std::chrono::milliseconds stall_timeout{30000};
};

struct Resolved {               // what a reference points at now (tag lookup only; cheap)
  std::string manifest_digest;  // "sha256:…": what the tag names (an index's own digest if so)
  std::string layer_digest;     // the package layer, "sha256:…" (for https: sha256 of the bytes)
  uint64_t layer_size = 0;
  std::string media_type;  // layer media type
};

struct Fetched {
  std::string digest;           // sha256 of the package bytes (== Resolved::layer_digest for OCI)
  std::string manifest_digest;  // OCI only
  std::filesystem::path path;   // the verified bytes in the cache
  uint64_t size = 0;
  bool from_cache = false;
};

// Fetches workflow packages from OCI registries (oci://host[:port]/repo:tag|@sha256:…) and
// https:// URLs into a verified, size-bounded, content-addressed cache.
//
// Credentials: $FLYTECD_REGISTRY_AUTH_<HOST> ("user:password"; HOST upper-cased with every other
// character as '_'), then FetchOptions::docker_config, $REGISTRY_AUTH_FILE, $DOCKER_CONFIG/
// config.json, ~/.docker/config.json. They are sent only to the registry's origin and its token
// realm; never logged or put in errors.
//
// Bounds: connect_timeout, stall_timeout per transfer, package_timeout over everything one call
// sends, and the caller's `cancel` (aborts the transfer in flight within about a second).
//
// Thread-safe: the reconciler fetches several packages concurrently.
class PackageFetcher {
 public:
  explicit PackageFetcher(FetchOptions options);
  ~PackageFetcher();
  PackageFetcher(const PackageFetcher&) = delete;
  PackageFetcher& operator=(const PackageFetcher&) = delete;

  // What the reference points at now. oci: manifests only (no network when pinned and the
  // manifest is cached); https: needs the bytes (pinned and cached: no network). Errors:
  // not_found, unauthenticated, permission_denied, unavailable/timeout/resource_exhausted
  // (retryable), invalid_input (integrity, size, ambiguity, Kind::path).
  Result<Resolved> resolve(const PackageRef& ref, const std::atomic<bool>* cancel = nullptr);

  // The verified package bytes in the cache; a pinned digest already cached makes no request.
  // Errors as resolve(); timeout names the registry and packages.fetchTimeout when the package's
  // deadline passed; unavailable "cancelled" when `cancel` became true.
  Result<Fetched> fetch(const PackageRef& ref, const std::atomic<bool>* cancel = nullptr);

  // The signatures the registry holds for `manifest_digest` in ref's repository: cosign's
  // "sha256-<hex>.sig" tag (its simple-signing layers, payload and annotations) and sigstore
  // bundles among the manifest's referrers (the OCI 1.1 referrers API, else its
  // "sha256-<hex>" tag fallback). A tag or API that is absent is no signature, not an error.
  // Errors: the registry's (unreachable, unauthenticated, tampered content).
  Result<SignatureEvidence> signatures(const PackageRef& ref, const std::string& manifest_digest,
                                       const std::atomic<bool>* cancel = nullptr);

  // HTTP requests sent so far (including retries, redirects and token requests).
  uint64_t requests_sent() const;

 private:
  struct State;
  std::unique_ptr<State> m_state;
};

}  // namespace flytecd::sources::oci
