// DataProxyService.CreateUploadLocation (FlyteAdmin dataproxy/service.go) and the signed-URL
// endpoint that stands in for the object store: PUT with a matching Content-MD5 stores the
// bytes in SQLite, GET reads them back.

#include "sinks/emulator/admin_common.hpp"
#include "sinks/emulator/encoding.hpp"

namespace flytecd::sinks::emulator {
namespace {

using namespace detail;

constexpr std::string_view k_upload_prefix = "/upload/";

// Go's time.Duration String() for whole seconds ("1h0m0s", "90s" -> "1m30s").
std::string go_duration(int64_t seconds) {
  if (seconds < 60) return std::to_string(seconds) + "s";
  if (seconds < 3600)
    return std::to_string(seconds / 60) + "m" + std::to_string(seconds % 60) + "s";
  return std::to_string(seconds / 3600) + "h" + std::to_string((seconds % 3600) / 60) + "m" +
         std::to_string(seconds % 60) + "s";
}

UploadReply reply(int status, std::string body) {
  UploadReply r;
  r.status = status;
  r.body = std::move(body);
  r.headers["Content-Type"] = "text/plain; charset=utf-8";
  return r;
}

// "/upload/a/b%20c/d" -> "a/b c/d"; nullopt for malformed or traversing paths.
std::optional<std::string> object_path(std::string_view target) {
  if (!target.starts_with(k_upload_prefix)) return std::nullopt;
  std::string_view rest = target.substr(k_upload_prefix.size());
  std::string out;
  while (true) {
    const auto slash = rest.find('/');
    auto seg = percent_decode(rest.substr(0, slash));
    if (!seg || seg->empty() || *seg == "." || *seg == ".." ||
        seg->find('/') != std::string::npos) {
      return std::nullopt;
    }
    out += (out.empty() ? "" : "/") + *seg;
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return out;
}

}  // namespace

Status Admin::create_upload_location(const fs::CreateUploadLocationRequest& req,
                                     fs::CreateUploadLocationResponse* out) {
  if (req.project().empty() || req.domain().empty()) {
    return invalid("project and domain are required parameters");
  }
  if (req.content_md5().empty() && req.filename_root().empty()) {
    return invalid("content_md5 or filename_root is a required parameter");
  }
  int64_t expires_s = m_config.max_upload_expiry_s;
  if (req.has_expires_in()) {
    const auto& d = req.expires_in();
    if (d.seconds() < 0 || d.nanos() < 0) {
      return invalid("expiresIn [" + go_duration(d.seconds()) + "] should not less than 0");
    }
    if (d.seconds() > m_config.max_upload_expiry_s ||
        (d.seconds() == m_config.max_upload_expiry_s && d.nanos() > 0)) {
      return invalid("expiresIn [" + go_duration(d.seconds()) +
                     "] cannot exceed max allowed expiration [" +
                     go_duration(m_config.max_upload_expiry_s) + "]");
    }
    if (d.seconds() > 0) expires_s = d.seconds();
  }
  std::string filename = req.filename();
  if (filename.empty()) {
    // FlyteAdmin picks a random name when the client gives none.
    std::lock_guard<std::mutex> lock(m_rng_mu);
    static constexpr std::string_view k_alnum = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (int i = 0; i < 20; ++i) filename.push_back(k_alnum[m_rng() % k_alnum.size()]);
  }
  const std::string prefix =
      !req.filename_root().empty() ? req.filename_root() : base32_encode(req.content_md5());
  std::string path;
  std::string signed_path;
  const std::initializer_list<const std::string*> segments = {&req.org(), &req.project(),
                                                              &req.domain(), &prefix, &filename};
  for (const std::string* seg : segments) {
    if (seg->empty()) continue;  // empty segments are dropped, as FlyteAdmin does
    path += (path.empty() ? "" : "/") + *seg;
    signed_path += (signed_path.empty() ? "" : "/") + percent_encode(*seg);
  }
  const std::string native_url = "s3://" + m_config.bucket + "/" + path;
  const int64_t expires_at = now_ms() + expires_s * 1000;

  auto st = in_tx(m_store, true, [&](Tx& tx) -> Status {
    if (!req.filename().empty() && !req.filename_root().empty()) {
      // Only a caller-chosen location can collide; it may be rewritten only with its own hash.
      auto existing = tx.get_upload_md5(native_url);
      if (!existing) return existing.error();
      if (existing->has_value() && (req.content_md5().empty() || **existing != req.content_md5())) {
        return make_error(ErrorCode::already_exists,
                          "file already exists at location [" + native_url +
                              "], specify a matching hash if you wish to rewrite");
      }
    }
    return tx.put_upload_location(UploadLocation{path, req.content_md5(), expires_at});
  });
  if (!st) return st;
  out->set_native_url(native_url);
  out->set_signed_url(m_upload_base + std::string(k_upload_prefix) + signed_path);
  set_timestamp(out->mutable_expires_at(), expires_at);
  if (!req.content_md5().empty()) {
    (*out->mutable_headers())["Content-MD5"] = base64_encode(req.content_md5());
  }
  return ok_status();
}

UploadReply Admin::handle_upload(const UploadRequest& req) {
  const auto path = object_path(req.path);
  if (!path) return reply(404, "not an upload location\n");
  const std::string native_url = "s3://" + m_config.bucket + "/" + *path;

  if (req.method == "GET" || req.method == "HEAD") {
    auto data = uploaded(native_url);
    if (!data) return reply(500, data.error().message + "\n");
    if (!data->has_value()) return reply(404, "NoSuchKey\n");
    UploadReply r;
    r.body = req.method == "GET" ? std::move(**data) : std::string();
    r.headers["Content-Type"] = "application/octet-stream";
    return r;
  }
  if (req.method != "PUT") return reply(405, "MethodNotAllowed\n");

  UploadReply result = reply(200, "");
  const std::string actual = md5_raw(req.body);  // outside the transaction: bodies can be large
  auto st = in_tx(m_store, true, [&](Tx& tx) -> Status {
    auto loc = tx.get_upload_location(*path);
    if (!loc) return loc.error();
    if (!loc->has_value()) {
      result = reply(403, "AccessDenied: no upload location was issued for this URL\n");
      return ok_status();
    }
    if ((*loc)->expires_at_ms < now_ms()) {
      result = reply(403, "AccessDenied: Request has expired\n");
      return ok_status();
    }
    auto header = req.headers.find("content-md5");
    if (header == req.headers.end()) {
      result = reply(400, "MissingContentMD5: the Content-MD5 header is required\n");
      return ok_status();
    }
    const auto claimed = base64_decode(header->second);
    if (!claimed || claimed->size() != 16) {
      result = reply(400, "InvalidDigest: Content-MD5 is not a base64 MD5\n");
      return ok_status();
    }
    if (!(*loc)->md5.empty() && *claimed != (*loc)->md5) {
      result = reply(403, "SignatureDoesNotMatch: Content-MD5 differs from the signed one\n");
      return ok_status();
    }
    if (actual != *claimed) {
      result = reply(400, "BadDigest: the body does not match Content-MD5\n");
      return ok_status();
    }
    result.headers["ETag"] = "\"" + hex(actual) + "\"";
    return tx.put_upload(native_url, actual, req.body);
  });
  if (!st) return reply(500, st.error().message + "\n");
  return result;
}

Result<std::optional<std::string>> Admin::uploaded(const std::string& native_url) {
  std::optional<std::string> data;
  auto st = in_tx(m_store, false, [&](Tx& tx) -> Status {
    auto got = tx.get_upload(native_url);
    if (!got) return got.error();
    data = std::move(*got);
    return ok_status();
  });
  if (!st) return st.error();
  return data;
}

}  // namespace flytecd::sinks::emulator
