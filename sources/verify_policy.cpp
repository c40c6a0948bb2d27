#include "sources/verify_policy.hpp"

#include <re2/re2.h>

#include "daemon/common/scan.hpp"

namespace flytecd::sources {

std::string VerifySpec::describe() const {
  if (!key.empty()) return "key " + key;
  if (!key_file.empty()) return "key " + key_file;
  std::string out;
  for (const auto& m : identities)
    out += (out.empty() ? "identity " : " or ") + m.subject + " via " + m.issuer;
  return out;
}

Status check_identity_pattern(const std::string& pattern) {
  if (pattern.empty())
    return make_error(ErrorCode::invalid_input,
                      "an empty pattern; expected an RE2 expression matching the whole value");
  RE2 re(pattern, RE2::Quiet);
  if (!re.ok())
    return make_error(ErrorCode::invalid_input, "'" + scan::printable(pattern, 200) +
                                                    "' is not an RE2 expression: " + re.error());
  return ok_status();
}

Status check_verify_spec(const VerifySpec& spec) {
  if (spec.provider != "cosign")
    return make_error(ErrorCode::invalid_input,
                      "provider '" + scan::printable(spec.provider, 40) +
                          "' is not supported; expected cosign (notation is not implemented)");
  const int ways = (spec.key.empty() ? 0 : 1) + (spec.key_file.empty() ? 0 : 1) +
                   (spec.identities.empty() ? 0 : 1);
  if (ways != 1)
    return make_error(ErrorCode::invalid_input,
                      ways == 0 ? "no signer named; expected key, keyFile or matchOIDCIdentity"
                                : "more than one of key, keyFile and matchOIDCIdentity; expected "
                                  "exactly one");
  for (size_t i = 0; i < spec.identities.size(); ++i)
    for (const auto& [field, pattern] : {std::pair{"issuer", &spec.identities[i].issuer},
                                         std::pair{"subject", &spec.identities[i].subject}})
      if (auto st = check_identity_pattern(*pattern); !st)
        return st.error().wrap("matchOIDCIdentity[" + std::to_string(i) + "]." + field);
  return ok_status();
}

}  // namespace flytecd::sources
