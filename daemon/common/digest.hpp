#pragma once

#include <string>
#include <string_view>

namespace flytecd::digest {

// Lower-case hex SHA-256 of `data` (64 characters), the one digest helper of the tree: ledger
// hashes, content revisions, ConfigMap content hashes, the emulator's entity digests. Pure and
// thread-safe. (OCI's streaming "sha256:<hex>" digests are in sources/oci/digest.hpp.)
std::string sha256_hex(std::string_view data);

}  // namespace flytecd::digest
