#pragma once

// The secrets a daemon configuration names, read when it is put in force (start and SIGHUP):
// the notification URLs and HMAC keys, the webhook and sync tokens. Each comes from a file
// (read whole, trailing whitespace dropped) or an environment variable; an error names the file
// or the variable, never the value.

#include <vector>

#include "daemon/common/result.hpp"
#include "daemon/config/config.hpp"
#include "daemon/http/server.hpp"
#include "daemon/notify/notifier.hpp"

namespace flytecd::run {

// One target per `notifications:` entry, its URL and HMAC secret read. Errors: invalid_input
// when a file cannot be read or the URL's variable is unset.
Result<std::vector<notify::NotifyTarget>> notify_targets(const config::Config& c);

// `http.listen` and the webhook and sync secrets into `out` (a secret neither configured nor in
// its FLYTECD_* variable stays empty: that receiver is off). Errors: a file that cannot be read.
Status read_http_secrets(const config::Config& c, http::HttpOptions& out);

}  // namespace flytecd::run
