#include "daemon/registration/upload.hpp"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "daemon/common/log.hpp"

namespace flytecd::registration {

std::string base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

namespace {

struct Body {
  ChunkReader read;
  uint64_t size = 0;
  uint64_t sent = 0;
  std::optional<Error> error;  // why the read callback aborted the transfer
};

size_t read_body(char* buf, size_t size, size_t n, void* user) {
  auto* b = static_cast<Body*>(user);
  const size_t want = static_cast<size_t>(std::min<uint64_t>(size * n, b->size - b->sent));
  if (want == 0) return 0;
  auto got = b->read(buf, want);
  if (!got) {
    b->error = got.error();
    return CURL_READFUNC_ABORT;
  }
  if (*got == 0) {
    b->error = Error{ErrorCode::internal, "the fast-registration source ended after " +
                                              std::to_string(b->sent) + " of " +
                                              std::to_string(b->size) + " bytes"};
    return CURL_READFUNC_ABORT;
  }
  b->sent += *got;
  return *got;
}

size_t discard(char*, size_t size, size_t n, void*) { return size * n; }

}  // namespace

Status put_upload(const sinks::UploadLocation& where, uint64_t size,
                  const std::function<ChunkReader()>& open,
                  const std::array<unsigned char, 16>& md5) {
  if (where.signed_url.empty())
    return make_error(ErrorCode::invalid_input,
                      "DataProxy returned no signed URL for the fast-registration upload");
  const std::string md5_b64 =
      base64(std::string_view(reinterpret_cast<const char*>(md5.data()), md5.size()));
  Error last{ErrorCode::unavailable, ""};
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(250 << attempt));
    CURL* curl = curl_easy_init();
    if (!curl) return make_error(ErrorCode::internal, "upload: curl_easy_init failed");
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, ("Content-MD5: " + md5_b64).c_str());
    headers = curl_slist_append(headers, "Expect:");
    bool has_type = false;
    for (const auto& [k, v] : where.headers) {
      headers = curl_slist_append(headers, (k + ": " + v).c_str());
      std::string lk = k;
      for (auto& c : lk) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      has_type |= lk == "content-type";
    }
    if (!has_type) headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
    Body b{open(), size, 0, std::nullopt};
    curl_easy_setopt(curl, CURLOPT_URL, where.signed_url.c_str());
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_body);
    curl_easy_setopt(curl, CURLOPT_READDATA, &b);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(size));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 300000L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    // The signed URL carries a signature in its query: never log or return it.
    const std::string target = log::redact_url(where.native_url);
    if (b.error) return b.error->wrap("upload of the fast-registration source for " + target);
    if (rc != CURLE_OK) {
      last = Error{ErrorCode::unavailable, "upload of the fast-registration source for " + target +
                                               ": " + curl_easy_strerror(rc)};
      continue;
    }
    if (status == 200 || status == 201) return ok_status();
    last =
        Error{status >= 500 ? ErrorCode::unavailable : ErrorCode::invalid_input,
              "upload of the fast-registration source for " + target +
                  ": the signed URL answered HTTP " + std::to_string(status) + " (expected 200)"};
    if (status < 500) break;
  }
  return last;
}

}  // namespace flytecd::registration
