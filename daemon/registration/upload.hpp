#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "daemon/common/result.hpp"
#include "sinks/entity_sink.hpp"

namespace flytecd::registration {

// Standard base64 (with padding).
std::string base64(std::string_view bytes);

// Reads up to `n` bytes into `buf`: the count, 0 at the end, or an error.
using ChunkReader = std::function<Result<size_t>(char* buf, size_t n)>;

// PUTs a fast-registration source archive to a DataProxy signed URL, as flytectl does: the body
// is the decompressed tar, with Content-Length and `Content-MD5: base64(md5)`, plus every header
// the CreateUploadLocation response asked for (flytectl ignores them; Azure needs them). Only
// 200/201 count as success. Transport errors and 5xx are retried (3 attempts). The body is
// streamed: `open` gives a reader from its first byte for each attempt, which must yield exactly
// `size` bytes (a reader error or a short body aborts the upload with that error).
Status put_upload(const sinks::UploadLocation& where, uint64_t size,
                  const std::function<ChunkReader()>& open,
                  const std::array<unsigned char, 16>& md5);

}  // namespace flytecd::registration
