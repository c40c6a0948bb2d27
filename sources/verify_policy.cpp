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

std::string VerifyPolicy::describe() const {
  if (!keyless()) return "key " + key_name;
  std::string out;
  for (const auto& m : identities)
    out += (out.empty() ? "identity " : " or ") + m.subject + " via " + m.issuer;
  return out;
}

std::string Signer::describe() const {
  if (method == "key") return "signed with " + identity;
  return "signed by " + identity + " via " + issuer;
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

namespace {

int line_of(const YAML::Node& n) { return n.Mark().line < 0 ? 0 : n.Mark().line + 1; }

}  // namespace

std::optional<VerifySpecProblem> parse_verify_spec(const YAML::Node& node, const std::string& field,
                                                   bool with_prefix, VerifySpec& out) {
  const std::string keys =
      std::string(with_prefix ? "prefix, " : "") + "provider, key, keyFile, matchOIDCIdentity";
  if (!node.IsMap())
    return VerifySpecProblem{line_of(node), field,
                             "found a " + std::string(node.IsSequence() ? "list" : "scalar"),
                             "a mapping of " + keys};
  auto scalar = [&](const YAML::Node& v, const std::string& name,
                    std::string& to) -> std::optional<VerifySpecProblem> {
    if (!v.IsScalar() || v.Scalar().empty())
      return VerifySpecProblem{line_of(v), field + "." + name, "not a non-empty string",
                               "a string"};
    to = v.Scalar();
    return std::nullopt;
  };
  std::optional<VerifySpecProblem> problem;
  for (const auto& kv : node) {
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    if (k == "provider")
      problem = scalar(kv.second, k, out.provider);
    else if (k == "key")
      problem = scalar(kv.second, k, out.key);
    else if (k == "keyFile")
      problem = scalar(kv.second, k, out.key_file);
    else if (k == "prefix" && with_prefix)
      problem = scalar(kv.second, k, out.prefix);
    else if (k == "matchOIDCIdentity") {
      if (!kv.second.IsSequence() || kv.second.size() == 0)
        return VerifySpecProblem{line_of(kv.second), field + "." + k, "not a list of identities",
                                 "a list of {issuer, subject} RE2 patterns"};
      for (size_t i = 0; i < kv.second.size(); ++i) {
        const YAML::Node m = kv.second[i];
        const std::string at = field + "." + k + "[" + std::to_string(i) + "]";
        if (!m.IsMap() || !m["issuer"] || !m["subject"] || m.size() != 2)
          return VerifySpecProblem{line_of(m), at, "not an identity",
                                   "a mapping of exactly issuer and subject (RE2 patterns)"};
        IdentityMatch id;
        for (const auto& [name, to] :
             {std::pair{"issuer", &id.issuer}, std::pair{"subject", &id.subject}}) {
          if (auto p = scalar(m[name], std::string(k) + "[" + std::to_string(i) + "]." + name, *to))
            return p;
          if (auto st = check_identity_pattern(*to); !st)
            return VerifySpecProblem{line_of(m[name]), at + "." + name, st.error().message,
                                     "an RE2 expression (it must match the whole value)"};
        }
        out.identities.push_back(std::move(id));
      }
    } else {
      return VerifySpecProblem{line_of(kv.first), field + "." + k, "unknown field '" + k + "'",
                               keys};
    }
    if (problem) return problem;
  }
  if (with_prefix && out.prefix.empty())
    return VerifySpecProblem{line_of(node), field + ".prefix", "no prefix",
                             "the package addresses it covers, e.g. oci://ghcr.io/acme/"};
  if (auto st = check_verify_spec(out); !st)
    return VerifySpecProblem{line_of(node), field, st.error().message,
                             "provider: cosign with "
                             "one signer"};
  return std::nullopt;
}

}  // namespace flytecd::sources
