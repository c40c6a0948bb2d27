#include "sources/oci/fetcher.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "daemon/common/http/client.hpp"
#include "daemon/common/log.hpp"
#include "sources/oci/auth.hpp"
#include "sources/oci/cache.hpp"
#include "sources/oci/digest.hpp"
#include "sources/oci/manifest.hpp"
#include "sources/oci/registry.hpp"

namespace flytecd::sources::oci {
namespace {

// Registries: redirects to blob storage (credentials dropped off-origin) and retries of
// 408/429/5xx and transport errors, every attempt within the one total deadline.
http::ClientOptions client_options(const FetchOptions& o) {
  http::ClientOptions c;
  c.ca_file = o.ca_file;
  c.connect_timeout = o.connect_timeout;
  c.attempt_timeout = o.total_timeout;
  c.total_timeout = o.total_timeout;
  c.max_attempts = o.max_attempts;
  c.max_redirects = 5;
  c.stall_timeout = o.stall_timeout;
  return c;
}

std::string seconds_text(std::chrono::milliseconds ms) {
  const auto s = ms.count() / 1000;
  return s * 1000 == ms.count() ? std::to_string(s) + " s" : std::to_string(ms.count()) + " ms";
}

constexpr size_t k_max_index_probes = 16;

std::optional<std::string> getenv_opt(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace

struct PackageFetcher::State {
  FetchOptions options;
  std::shared_ptr<http::Client> http;
  BlobCache cache;
  CredentialStore credentials;
  std::shared_ptr<TokenCache> tokens = std::make_shared<TokenCache>();
  std::atomic<uint64_t> https_requests{0};
  std::mutex mu;
  std::map<std::string, std::shared_ptr<RegistryClient>> registries;

  explicit State(FetchOptions o)
      : options(std::move(o)),
        http(std::make_shared<http::Client>(client_options(options))),
        cache(options.cache_dir, options.cache_max_bytes),
        credentials(options.docker_config, getenv_opt) {
    for (const auto& w : credentials.warnings())
      log::get("oci")->warn("ignoring credentials file: {}", w);
  }

  // The client of a registry, made once; a credential helper that fails is asked again the next
  // time (no client is kept without the credentials it should have).
  Result<std::shared_ptr<RegistryClient>> registry(const std::string& host) {
    std::lock_guard<std::mutex> g(mu);
    auto& slot = registries[host];
    if (!slot) {
      const auto& plain = options.plain_http_registries;
      const bool plain_http = std::find(plain.begin(), plain.end(), host) != plain.end();
      auto creds = credentials.lookup(host);
      if (!creds) {
        registries.erase(host);
        return creds.error().wrap("oci: credentials for " + host);
      }
      log::get("oci:" + host)
          ->debug("using {}{}", plain_http ? "plain http" : "https",
                  *creds ? ", credentials from " + (*creds)->source : ", anonymous");
      slot = std::make_shared<RegistryClient>(host, plain_http, http, std::move(*creds), tokens);
    }
    return slot;
  }

  FetchBounds bounds(const std::atomic<bool>* cancel) const {
    return FetchBounds{std::chrono::steady_clock::now() + options.package_timeout, cancel};
  }

  // A timeout once the package's deadline passed says which bound it was.
  Error bounded(Error e, const FetchBounds& b) const {
    if (e.code == ErrorCode::timeout && std::chrono::steady_clock::now() >= b.deadline)
      e.message += " (no package within " + seconds_text(options.package_timeout) +
                   ": packages.fetchTimeout)";
    return e;
  }

  // Manifest bytes by digest from the cache, else from the registry (then cached).
  Result<RegistryClient::ManifestBytes> manifest(RegistryClient& reg, const std::string& repo,
                                                 const std::string& reference,
                                                 const FetchBounds& b) {
    if (valid_sha256_digest(reference))
      if (auto cached = cache.read(reference, options.max_manifest_bytes))
        return RegistryClient::ManifestBytes{std::move(*cached), reference, ""};
    auto m = reg.get_manifest(repo, reference, options.max_manifest_bytes, b);
    if (!m) return m;
    if (auto st = cache.put(m->digest, m->bytes); !st)
      log::get("oci:" + reg.name())->warn("{}", st.error().message);
    return m;
  }

  Result<Resolved> resolve_oci(const PackageRef& ref, const FetchBounds& b) {
    auto client = registry(ref.registry);
    if (!client) return client.error();
    const auto& reg = *client;
    const std::string reference = ref.digest.empty() ? ref.tag : ref.digest;
    const std::string where =
        ref.registry + "/" + ref.repository + (ref.digest.empty() ? ":" : "@") + reference;
    auto top = manifest(*reg, ref.repository, reference, b);
    if (!top) return bounded(top.error().wrap("oci: resolve " + where), b);
    auto parsed = parse_manifest(top->bytes, top->content_type);
    if (!parsed) return parsed.error().wrap("oci: resolve " + where);
    Manifest image = std::move(parsed).value();
    std::string image_where = "manifest " + top->digest + " of " + where;
    if (image.kind == Manifest::Kind::index) {
      auto candidates = index_candidates(image, "index " + where);
      if (!candidates) return candidates.error().wrap("oci: resolve");
      std::vector<std::pair<Manifest, std::string>> holding;
      std::string rejected;
      for (size_t i = 0; i < candidates->size() && i < k_max_index_probes; ++i) {
        const auto& d = (*candidates)[i];
        auto child = manifest(*reg, ref.repository, d.digest, b);
        if (!child) return bounded(child.error().wrap("oci: resolve " + where), b);
        auto cm = parse_manifest(child->bytes, child->content_type);
        if (!cm) return cm.error().wrap("oci: resolve " + where + ": manifest " + d.digest);
        auto layer = select_package_layer(*cm, "manifest " + d.digest);
        // With exactly one Flyte-typed entry, its errors are the answer; otherwise skip
        // entries that hold no package (e.g. platform images beside the package).
        if (candidates->size() == 1 && !layer) return layer.error().wrap("oci: resolve " + where);
        if (layer)
          holding.emplace_back(std::move(cm).value(), d.digest);
        else
          rejected += (rejected.empty() ? "" : "; ") + layer.error().message;
      }
      if (holding.empty())
        return make_error(ErrorCode::invalid_input, "oci: resolve index " + where +
                                                        ": no listed manifest holds a package (" +
                                                        rejected + ")");
      if (holding.size() > 1) {
        std::string list;
        for (const auto& h : holding) list += (list.empty() ? "" : ", ") + h.second;
        return make_error(
            ErrorCode::invalid_input,
            "oci: resolve index " + where + " is ambiguous: " + std::to_string(holding.size()) +
                " manifests hold a package (" + list + "); expected one, or set artifactType " +
                std::string(k_flyte_artifact) + " on the package's index entry");
      }
      image_where = "manifest " + holding.front().second + " (from index " + where + ")";
      image = std::move(holding.front().first);
    }
    auto layer = select_package_layer(image, image_where);
    if (!layer) return layer.error().wrap("oci: resolve");
    if (layer->size > options.max_blob_bytes)
      return make_error(ErrorCode::invalid_input,
                        "oci: resolve " + where + ": package layer " + layer->digest + " is " +
                            std::to_string(layer->size) + " bytes; expected at most " +
                            std::to_string(options.max_blob_bytes) + " (max_blob_bytes)");
    return Resolved{top->digest, layer->digest, layer->size, layer->media_type};
  }

  Result<Fetched> fetch_oci(const PackageRef& ref, const FetchBounds& b) {
    auto resolved = resolve_oci(ref, b);
    if (!resolved) return resolved.error();
    Fetched out{resolved->layer_digest, resolved->manifest_digest,
                cache.blob_path(resolved->layer_digest), resolved->layer_size, true};
    if (auto size = cache.lookup(resolved->layer_digest); size && *size == resolved->layer_size)
      return out;
    auto client = registry(ref.registry);
    if (!client) return client.error();
    const auto& reg = *client;
    auto tmp = cache.temp_file();
    if (!tmp) return tmp.error().wrap("oci: fetch");
    const auto start = std::chrono::steady_clock::now();
    auto st =
        reg->get_blob(ref.repository, resolved->layer_digest, resolved->layer_size, tmp->path(), b);
    if (!st) return bounded(st.error().wrap("oci: fetch"), b);
    auto path = cache.commit(*tmp, resolved->layer_digest);
    if (!path) return path.error().wrap("oci: fetch");
    log::get("oci:" + ref.registry)
        ->info("pulled {}/{} layer {} ({} bytes, {} ms)", ref.registry, ref.repository,
               resolved->layer_digest, resolved->layer_size,
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count());
    out.from_cache = false;
    out.path = *path;
    return out;
  }

  // A small blob (a signature payload or bundle) read whole, verified by digest.
  Result<std::string> small_blob(RegistryClient& reg, const std::string& repo,
                                 const std::string& digest, uint64_t size, const FetchBounds& b) {
    constexpr uint64_t k_max_signature_blob = 1u << 20;
    if (size > k_max_signature_blob)
      return make_error(ErrorCode::invalid_input,
                        "signature blob " + digest + " is " + std::to_string(size) +
                            " bytes; expected at most " + std::to_string(k_max_signature_blob));
    if (auto cached = cache.read(digest, k_max_signature_blob)) return std::move(*cached);
    auto tmp = cache.temp_file();
    if (!tmp) return tmp.error();
    if (auto st = reg.get_blob(repo, digest, size, tmp->path(), b); !st) return st.error();
    auto path = cache.commit(*tmp, digest);
    if (!path) return path.error();
    auto bytes = cache.read(digest, k_max_signature_blob);
    if (!bytes) return make_error(ErrorCode::internal, "cannot read back " + digest);
    return std::move(*bytes);
  }

  // The layers of one manifest (JSON), with their annotations.
  static std::vector<nlohmann::json> layers_of(const std::string& manifest) {
    auto j = nlohmann::json::parse(manifest, nullptr, false);
    std::vector<nlohmann::json> out;
    if (j.is_object() && j.contains("layers") && j["layers"].is_array())
      for (const auto& l : j["layers"])
        if (l.is_object() && l.contains("digest") && l["digest"].is_string() &&
            l.contains("size") && l["size"].is_number_unsigned())
          out.push_back(l);
    return out;
  }

  Status cosign_tag(RegistryClient& reg, const PackageRef& ref, const std::string& hex,
                    const FetchBounds& b, SignatureEvidence& out) {
    const std::string tag = "sha256-" + hex + ".sig";
    out.looked_at.push_back("tag " + tag);
    auto m = reg.get_manifest(ref.repository, tag, options.max_manifest_bytes, b);
    if (!m) return m.error().code == ErrorCode::not_found ? ok_status() : Status(m.error());
    size_t i = 0;
    for (const auto& l : layers_of(m->bytes)) {
      if (i >= k_max_index_probes) break;
      if (l.value("mediaType", std::string()) != k_simple_signing_type) continue;
      auto payload = small_blob(reg, ref.repository, l["digest"].get<std::string>(),
                                l["size"].get<uint64_t>(), b);
      if (!payload) return payload.error();
      SignatureCandidate c;
      c.where = tag + " layer " + std::to_string(i++);
      c.media_type = k_simple_signing_type;
      c.payload = std::move(*payload);
      if (auto a = l.find("annotations"); a != l.end() && a->is_object())
        for (const auto& [k, v] : a->items())
          if (v.is_string()) c.annotations[k] = v.get<std::string>();
      out.candidates.push_back(std::move(c));
    }
    return ok_status();
  }

  Status bundles(RegistryClient& reg, const PackageRef& ref, const std::string& digest,
                 const FetchBounds& b, SignatureEvidence& out) {
    const std::string hex = digest.substr(digest.find(':') + 1);
    auto api = reg.get_referrers(ref.repository, digest, options.max_manifest_bytes, b);
    if (!api) return api.error();
    std::string index;
    if (*api) {
      out.looked_at.push_back("referrers of " + digest);
      index = std::move(**api);
    } else {
      out.looked_at.push_back("tag sha256-" + hex + " (referrers)");
      auto m = reg.get_manifest(ref.repository, "sha256-" + hex, options.max_manifest_bytes, b);
      if (!m) return m.error().code == ErrorCode::not_found ? ok_status() : Status(m.error());
      index = std::move(m->bytes);
    }
    auto j = nlohmann::json::parse(index, nullptr, false);
    if (!j.is_object() || !j.contains("manifests") || !j["manifests"].is_array())
      return ok_status();
    size_t probes = 0;
    for (const auto& d : j["manifests"]) {
      if (!d.is_object() || d.value("artifactType", std::string()) != k_sigstore_bundle_type ||
          !d.contains("digest") || !d["digest"].is_string())
        continue;
      if (++probes > k_max_index_probes) break;
      const std::string md = d["digest"].get<std::string>();
      auto m = manifest(reg, ref.repository, md, b);
      if (!m) return m.error();
      for (const auto& l : layers_of(m->bytes)) {
        if (l.value("mediaType", std::string()) != k_sigstore_bundle_type) continue;
        auto bundle = small_blob(reg, ref.repository, l["digest"].get<std::string>(),
                                 l["size"].get<uint64_t>(), b);
        if (!bundle) return bundle.error();
        out.candidates.push_back(
            SignatureCandidate{"referrer " + md, k_sigstore_bundle_type, std::move(*bundle), {}});
      }
    }
    return ok_status();
  }

  Result<SignatureEvidence> signatures(const PackageRef& ref, const std::string& digest,
                                       const FetchBounds& b) {
    const std::string where =
        "oci: signatures of " + ref.registry + "/" + ref.repository + "@" + digest;
    if (!valid_sha256_digest(digest))
      return make_error(ErrorCode::invalid_input, where + ": not a sha256 digest");
    auto client = registry(ref.registry);
    if (!client) return client.error();
    SignatureEvidence out;
    if (auto st = cosign_tag(**client, ref, digest.substr(7), b, out); !st)
      return bounded(st.error().wrap(where), b);
    if (auto st = bundles(**client, ref, digest, b, out); !st)
      return bounded(st.error().wrap(where), b);
    return out;
  }

  Result<Fetched> fetch_https(const PackageRef& ref, const FetchBounds& b) {
    const std::string where = "https: fetch " + log::redact_url(ref.url);
    if (ref.pinned())
      if (auto size = cache.lookup(ref.digest))
        return Fetched{ref.digest, "", cache.blob_path(ref.digest), *size, true};
    auto tmp = cache.temp_file();
    if (!tmp) return tmp.error().wrap(where);
    http::ClientRequest req;
    req.url = ref.url;
    b.apply(req);
    Sender sender = [&](const http::ClientRequest& rq) {
      auto r = http->execute(rq);
      https_requests += r ? static_cast<uint64_t>(r->attempts) : 1;
      return r;
    };
    auto r = download_to_file(sender, req, tmp->path(), options.max_blob_bytes, where);
    if (!r) return bounded(r.error(), b);
    const auto& [resp, got] = r.value();
    if (resp.status != 200) return status_error(resp.status, resp.body, where);
    if (ref.pinned() && got.digest != ref.digest)
      return make_error(ErrorCode::invalid_input,
                        where + ": content hashes to " + got.digest + ", expected " + ref.digest +
                            " (the #sha256= pin; the server returned different or corrupt data)");
    auto path = cache.commit(*tmp, got.digest);
    if (!path) return path.error().wrap(where);
    return Fetched{got.digest, "", *path, got.size, false};
  }
};

PackageFetcher::PackageFetcher(FetchOptions options)
    : m_state(std::make_unique<State>(std::move(options))) {}

PackageFetcher::~PackageFetcher() = default;

Result<Resolved> PackageFetcher::resolve(const PackageRef& ref, const std::atomic<bool>* cancel) {
  switch (ref.kind) {
    case PackageRef::Kind::oci:
      return m_state->resolve_oci(ref, m_state->bounds(cancel));
    case PackageRef::Kind::https: {
      auto f = m_state->fetch_https(ref, m_state->bounds(cancel));
      if (!f) return f.error();
      return Resolved{"", f->digest, f->size, ""};
    }
    case PackageRef::Kind::path:
      break;
  }
  return make_error(ErrorCode::invalid_input,
                    "oci: '" + ref.to_string() +
                        "' is a repository path; expected oci:// or https:// (paths are read "
                        "from the Git snapshot, not fetched)");
}

Result<Fetched> PackageFetcher::fetch(const PackageRef& ref, const std::atomic<bool>* cancel) {
  switch (ref.kind) {
    case PackageRef::Kind::oci:
      return m_state->fetch_oci(ref, m_state->bounds(cancel));
    case PackageRef::Kind::https:
      return m_state->fetch_https(ref, m_state->bounds(cancel));
    case PackageRef::Kind::path:
      break;
  }
  return make_error(ErrorCode::invalid_input,
                    "oci: '" + ref.to_string() +
                        "' is a repository path; expected oci:// or https:// (paths are read "
                        "from the Git snapshot, not fetched)");
}

Result<SignatureEvidence> PackageFetcher::signatures(const PackageRef& ref,
                                                     const std::string& manifest_digest,
                                                     const std::atomic<bool>* cancel) {
  if (ref.kind != PackageRef::Kind::oci)
    return make_error(ErrorCode::invalid_input,
                      "'" + ref.to_string() +
                          "' is not an OCI package; only oci:// packages carry cosign signatures");
  return m_state->signatures(ref, manifest_digest, m_state->bounds(cancel));
}

uint64_t PackageFetcher::requests_sent() const {
  uint64_t total = m_state->https_requests.load();
  std::lock_guard<std::mutex> g(m_state->mu);
  for (const auto& [name, reg] : m_state->registries) total += reg->requests();
  return total;
}

}  // namespace flytecd::sources::oci
