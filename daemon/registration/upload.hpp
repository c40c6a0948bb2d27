#pragma once

#include <array>
#include <string>

#include "daemon/common/result.hpp"
#include "sinks/entity_sink.hpp"

namespace flytecd::registration {

// Standard base64 (with padding).
std::string base64(std::string_view bytes);

// PUTs a fast-registration source archive to a DataProxy signed URL, as flytectl does: the body
// is the decompressed tar, with Content-Length and `Content-MD5: base64(md5)`, plus every header
// the CreateUploadLocation response asked for (flytectl ignores them; Azure needs them). Only
// 200/201 count as success. Transport errors and 5xx are retried (3 attempts).
Status put_upload(const sinks::UploadLocation& where, const std::string& body,
                  const std::array<unsigned char, 16>& md5);

}  // namespace flytecd::registration
