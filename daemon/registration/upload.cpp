#include "daemon/registration/upload.hpp"

#include <cctype>
#include <chrono>

#include "daemon/common/http/client.hpp"
#include "daemon/common/log.hpp"

namespace flytecd::registration {

std::string base64(std::string_view bytes) { return http::base64(bytes); }

Status put_upload(const sinks::UploadLocation& where, uint64_t size,
                  const std::function<ChunkReader()>& open,
                  const std::array<unsigned char, 16>& md5) {
  if (where.signed_url.empty())
    return make_error(ErrorCode::invalid_input,
                      "DataProxy returned no signed URL for the fast-registration upload");
  const std::string md5_b64 =
      base64(std::string_view(reinterpret_cast<const char*>(md5.data()), md5.size()));
  http::ClientRequest req;
  req.method = "PUT";
  req.url = where.signed_url;
  // Every header the CreateUploadLocation response asked for, then ours unless it gave them
  // (a header sent twice would be joined into one invalid value).
  bool has_type = false, has_md5 = false;
  for (const auto& [k, v] : where.headers) {
    req.headers.push_back(k + ": " + v);
    std::string lk = k;
    for (auto& c : lk) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    has_type |= lk == "content-type";
    has_md5 |= lk == "content-md5";
  }
  if (!has_md5) req.headers.push_back("Content-MD5: " + md5_b64);
  if (!has_type) req.headers.push_back("Content-Type: application/octet-stream");
  // Every attempt streams the source from its first byte.
  ChunkReader reader;
  uint64_t sent = 0;
  req.on_restart = [&] {
    reader = open();
    sent = 0;
  };
  req.read_body = [&](char* buf, size_t n) -> Result<size_t> {
    auto got = reader(buf, n);
    if (!got) return got.error();
    if (*got == 0) {
      return make_error(ErrorCode::internal, "the fast-registration source ended after " +
                                                 std::to_string(sent) + " of " +
                                                 std::to_string(size) + " bytes");
    }
    sent += *got;
    return *got;
  };
  req.body_size = size;

  // Transport errors and 5xx are retried, 3 attempts; each attempt may take 5 minutes.
  http::ClientOptions options;
  options.connect_timeout = std::chrono::milliseconds(10000);
  options.attempt_timeout = std::chrono::milliseconds(300000);
  options.total_timeout = std::chrono::milliseconds(3 * 300000 + 10000);
  options.max_attempts = 3;
  options.backoff_base = std::chrono::milliseconds(500);
  http::Client client(std::move(options));
  auto r = client.execute(req);
  // The signed URL carries a signature in its query: never log or return it.
  const std::string target = log::redact_url(where.native_url);
  const std::string what = "upload of the fast-registration source for " + target;
  if (!r) return r.error().wrap(what);
  if (r->status == 200 || r->status == 201) return ok_status();
  return make_error(
      r->status >= 500 ? ErrorCode::unavailable : ErrorCode::invalid_input,
      what + ": the signed URL answered HTTP " + std::to_string(r->status) + " (expected 200)");
}

}  // namespace flytecd::registration
