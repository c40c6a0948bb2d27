#include "sinks/emulator/admin_common.hpp"

#include "daemon/common/digest.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"
#include "sinks/emulator/encoding.hpp"
#include "sinks/workflow_compiler.hpp"

namespace flytecd::sinks::emulator::detail {
namespace {

std::string go_value(const nlohmann::json& v) {
  if (v.is_null()) return "<nil>";
  if (v.is_string()) return v.get<std::string>();
  return dump_json(v);
}

}  // namespace

// Go's prototext one-line form (what %v of a message prints): set fields in declaration order,
// "name:value", nested messages "name:{...}", separated by one space.
std::string go_prototext(const google::protobuf::Message& m) { return compiler::go_text(m); }

namespace {

std::optional<nlohmann::json> to_json(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(m, &text, opts).ok()) return std::nullopt;
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

}  // namespace

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void set_timestamp(google::protobuf::Timestamp* ts, int64_t ms) {
  ts->set_seconds(ms / 1000);
  ts->set_nanos(static_cast<int32_t>((ms % 1000) * 1'000'000));
}

Error invalid(std::string message) {
  return make_error(ErrorCode::invalid_input, std::move(message));
}
Error missing(std::string_view field) { return invalid("missing " + std::string(field)); }
Error invalid_value(std::string_view field) {
  return invalid("invalid value for " + std::string(field));
}
Error not_found(std::string message) {
  return make_error(ErrorCode::not_found, std::move(message));
}
Error internal(std::string message) { return make_error(ErrorCode::internal, std::move(message)); }

std::string proto_text(const google::protobuf::Message& m) {
  // Identifiers are by far the most common case; print them as Go's prototext does.
  if (const auto* id = dynamic_cast<const fc::Identifier*>(&m)) {
    std::string out;
    auto add = [&](const char* name, const std::string& v) {
      if (v.empty()) return;
      if (!out.empty()) out += " ";
      out += std::string(name) + ":" + v;
    };
    if (id->resource_type() != fc::UNSPECIFIED) {
      add("resource_type", fc::ResourceType_Name(id->resource_type()));
    }
    add("project", id->project().empty() ? "" : text::quote_escaped(id->project()));
    add("domain", id->domain().empty() ? "" : text::quote_escaped(id->domain()));
    add("name", id->name().empty() ? "" : text::quote_escaped(id->name()));
    add("version", id->version().empty() ? "" : text::quote_escaped(id->version()));
    add("org", id->org().empty() ? "" : text::quote_escaped(id->org()));
    return out;
  }
  return go_prototext(m);
}

std::string kind_name(EntityKind kind) {
  return fc::ResourceType_Name(static_cast<fc::ResourceType>(static_cast<int>(kind)));
}

EntityKey key_of(EntityKind kind, const fc::Identifier& id) {
  return EntityKey{kind, id.project(), id.domain(), id.name(), id.version()};
}

fc::Identifier identifier_of(const EntityKey& key) {
  fc::Identifier id;
  id.set_resource_type(static_cast<fc::ResourceType>(static_cast<int>(key.kind)));
  id.set_project(key.project);
  id.set_domain(key.domain);
  id.set_name(key.name);
  id.set_version(key.version);
  return id;
}

Error missing_entity(const EntityKey& key) {
  fc::Identifier id = identifier_of(key);
  id.clear_resource_type();  // FlyteAdmin prints the lookup key, which has no resource type
  return not_found("missing entity of type " + kind_name(key.kind) + " with identifier " +
                   proto_text(id));
}

Status validate_identifier(const fc::Identifier* id, fc::ResourceType expected) {
  if (id == nullptr) return missing("id");
  if (id->resource_type() != expected) {
    auto lower = [](std::string s) {
      for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    return invalid("unexpected resource type " + lower(fc::ResourceType_Name(id->resource_type())) +
                   " for identifier [" + proto_text(*id) + "], expected " +
                   lower(fc::ResourceType_Name(expected)) + " instead");
  }
  if (id->project().empty()) return missing("project");
  if (id->domain().empty()) return missing("domain");
  if (id->name().empty()) return missing("name");
  if (id->version().empty()) return missing("version");
  return ok_status();
}

Status validate_labels(const fa::Labels* labels) {
  constexpr int k_max_labels = 16;
  if (labels == nullptr || labels->values().empty()) return ok_status();
  if (labels->values().size() > k_max_labels) {
    return invalid("labels map cannot exceed " + std::to_string(k_max_labels) + " entries");
  }
  // A Go map has no order; the emulator checks keys in sorted order to be deterministic.
  std::map<std::string, std::string> sorted(labels->values().begin(), labels->values().end());
  for (const auto& [key, value] : sorted) {
    if (auto errs = k8s_qualified_name_errors(key); !errs.empty()) {
      return invalid("invalid label key [" + key + "]: " + go_list(errs));
    }
    if (auto errs = k8s_label_value_errors(value); !errs.empty()) {
      return invalid("invalid label value [" + value + "]: " + go_list(errs));
    }
  }
  return ok_status();
}

Status validate_project_and_domain(Tx& tx, const AdminConfig& config, const std::string& project,
                                   const std::string& domain) {
  auto row = tx.get_project(project);
  if (!row) return row.error();
  if (!row->has_value()) {
    return invalid("failed to validate that project [" + project + "] and domain [" + domain +
                   "] are registered, err: [project [" + project + "] not found]");
  }
  if ((*row)->state != fa::Project::ACTIVE) {
    // errors.NewInactiveProjectError: the message plus an admin.InactiveProject detail.
    fa::InactiveProject detail;
    detail.set_id(project);
    set_error_detail(detail);
    return invalid("project [" + project + "] is not active");
  }
  if (std::find(config.domains.begin(), config.domains.end(), domain) == config.domains.end()) {
    return invalid("domain [" + domain + "] is unrecognized by system");
  }
  return ok_status();
}

Status validate_project_exists(Tx& tx, const std::string& project) {
  auto row = tx.get_project(project);
  if (!row) return row.error();
  if (!row->has_value()) {
    return invalid("failed to validate that project [" + project + "] exists, err: [project [" +
                   project + "] not found]");
  }
  return ok_status();
}

Status validate_project_for_update(Tx& tx, const std::string& project) {
  auto row = tx.get_project(project);
  if (!row) return row.error();
  if (!row->has_value()) {
    return invalid("failed to validate that project [" + project +
                   "] is registered, err: [project [" + project + "] not found]");
  }
  if ((*row)->state != fa::Project::ACTIVE) {
    return invalid("project [" + project + "] is not active");
  }
  return ok_status();
}

bool parse_blob(google::protobuf::Message* m, const std::string& blob) {
  return m->ParseFromString(blob);
}

std::string serialize(const google::protobuf::Message& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

std::string digest_of(const google::protobuf::Message& m) {
  return digest::sha256_hex(serialize(m));
}

std::string structure_diff(const google::protobuf::Message& old_msg,
                           const google::protobuf::Message& new_msg) {
  auto a = to_json(old_msg);
  auto b = to_json(new_msg);
  if (!a || !b) return "(structure diff unavailable)";
  // As FlyteAdmin: patches old->new and new->old; report paths present in both.
  const auto forward = nlohmann::json::diff(*a, *b);
  const auto backward = nlohmann::json::diff(*b, *a);
  std::map<std::string, nlohmann::json> new_values;
  for (const auto& op : forward) {
    new_values[op.at("path").get<std::string>()] = op.value("value", nlohmann::json());
  }
  std::string out;
  std::set<std::string> seen;
  for (const auto& op : backward) {
    const auto path = op.at("path").get<std::string>();
    auto it = new_values.find(path);
    if (it == new_values.end() || !seen.insert(path).second) continue;
    if (!out.empty()) out += "\n";
    out += path + ":\n\t- " + go_value(op.value("value", nlohmann::json())) + " \n\t+ " +
           go_value(it->second);
  }
  return out;
}

Result<std::vector<Filter>> parse_filters(const std::string& expr) {
  std::vector<Filter> out;
  std::string_view rest = expr;
  static const std::set<std::string> k_ops = {"eq",  "neq",      "gt",       "gte",         "lt",
                                              "lte", "contains", "value_in", "value_not_in"};
  while (!rest.empty()) {
    const auto open = rest.find('(');
    const auto close = rest.find(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
      return invalid("invalid filter expression: " + expr);
    }
    Filter f;
    f.op = std::string(rest.substr(0, open));
    const std::string_view args = rest.substr(open + 1, close - open - 1);
    const auto comma = args.find(',');
    if (!k_ops.count(f.op) || comma == std::string_view::npos) {
      return invalid("invalid filter expression: " + expr);
    }
    f.field = std::string(args.substr(0, comma));
    if (const auto dot = f.field.find('.'); dot != std::string::npos) f.field.erase(0, dot + 1);
    std::string_view values = args.substr(comma + 1);
    if (f.op == "value_in" || f.op == "value_not_in") {
      while (true) {
        const auto semi = values.find(';');
        f.values.emplace_back(values.substr(0, semi));
        if (semi == std::string_view::npos) break;
        values.remove_prefix(semi + 1);
      }
    } else {
      f.values.emplace_back(values);
    }
    out.push_back(std::move(f));
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest.front() == '+') rest.remove_prefix(1);
  }
  return out;
}

Result<bool> filters_match(const std::vector<Filter>& filters, const FieldFn& field) {
  for (const auto& f : filters) {
    const auto v = field(f.field);
    if (!v) return invalid("invalid filter field: " + f.field);
    const std::string& want = f.values.front();
    bool ok = true;
    if (f.op == "eq")
      ok = *v == want;
    else if (f.op == "neq")
      ok = *v != want;
    else if (f.op == "gt")
      ok = *v > want;
    else if (f.op == "gte")
      ok = *v >= want;
    else if (f.op == "lt")
      ok = *v < want;
    else if (f.op == "lte")
      ok = *v <= want;
    else if (f.op == "contains")
      ok = v->find(want) != std::string::npos;
    else if (f.op == "value_in")
      ok = std::find(f.values.begin(), f.values.end(), *v) != f.values.end();
    else if (f.op == "value_not_in")
      ok = std::find(f.values.begin(), f.values.end(), *v) == f.values.end();
    if (!ok) return false;
  }
  return true;
}

Result<uint64_t> parse_token(const std::string& token) {
  if (token.empty()) return uint64_t{0};
  uint64_t v = 0;
  for (char c : token) {
    if (c < '0' || c > '9' || v > 1'000'000'000) return invalid("Invalid token value: " + token);
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

Status validate_token(const std::string& token, const std::string& method) {
  if (parse_token(token)) return ok_status();
  return invalid("invalid pagination token " + token + (method.empty() ? "" : " for " + method));
}

std::string pad_number(int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020lld", static_cast<long long>(v));
  return buf;
}

namespace {
// apimachinery validation.RegexError.
std::string regex_error(const std::string& msg, const std::string& fmt,
                        const std::vector<std::string>& examples) {
  if (examples.empty()) return msg + " (regex used for validation is '" + fmt + "')";
  std::string out = msg + " (e.g. ";
  for (size_t i = 0; i < examples.size(); ++i) {
    if (i > 0) out += " or ";
    out += "'" + examples[i] + "', ";
  }
  return out + "regex used for validation is '" + fmt + "')";
}
constexpr const char* k_qualified_name_msg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr const char* k_qualified_name_fmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr const char* k_dns1123_label_fmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
std::string max_len_error(int n) {
  return "must be no more than " + std::to_string(n) + " characters";
}
bool ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
// ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$, without a length limit.
bool name_pattern(const std::string& s) {
  if (s.empty() || !ascii_alnum(s.front()) || !ascii_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return ascii_alnum(c) || c == '-' || c == '_' || c == '.'; });
}
// dns1123 labels joined by '.', without a length limit.
bool subdomain_pattern(const std::string& s) {
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    if (!scan::dns1123_label_pattern(std::string_view(s).substr(
            start, dot == std::string::npos ? std::string::npos : dot - start)))
      return false;
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}
}  // namespace

std::string go_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? " " : "") + items[i];
  return out + "]";
}

std::vector<std::string> k8s_dns1123_label_errors(const std::string& value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(max_len_error(63));
  if (!scan::dns1123_label_pattern(value)) {
    errs.push_back(regex_error(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
        "and must start and end with an alphanumeric character",
        k_dns1123_label_fmt, {"my-name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> k8s_qualified_name_errors(const std::string& value) {
  std::vector<std::string> errs;
  std::string name = value;
  const auto slashes = std::count(value.begin(), value.end(), '/');
  if (slashes > 1) {
    errs.push_back(
        "a qualified name " +
        regex_error(k_qualified_name_msg, k_qualified_name_fmt, {"MyName", "my.name", "123-abc"}) +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
    return errs;
  }
  if (slashes == 1) {
    const auto slash = value.find('/');
    const std::string prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > 253) errs.push_back("prefix part " + max_len_error(253));
      if (!subdomain_pattern(prefix)) {
        errs.push_back(
            "prefix part " +
            regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                        "characters, '-' or '.', and must start and end with an alphanumeric "
                        "character",
                        std::string(k_dns1123_label_fmt) + "(\\." + k_dns1123_label_fmt + ")*",
                        {"example.com"}));
      }
    }
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errs.push_back("name part " + max_len_error(63));
  }
  if (!name_pattern(name)) {
    errs.push_back("name part " + regex_error(k_qualified_name_msg, k_qualified_name_fmt,
                                              {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> k8s_label_value_errors(const std::string& value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(max_len_error(63));
  if (!value.empty() && !name_pattern(value)) {
    errs.push_back(regex_error(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
        "'.', and must start and end with an alphanumeric character",
        std::string("(") + k_qualified_name_fmt + ")?", {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

}  // namespace flytecd::sinks::emulator::detail

namespace flytecd::sinks::emulator {
namespace {
thread_local std::optional<google::protobuf::Any> t_error_detail;
}  // namespace

void set_error_detail(const google::protobuf::Message& detail) {
  google::protobuf::Any any;
  any.PackFrom(detail);
  t_error_detail = std::move(any);
}

std::optional<google::protobuf::Any> take_error_detail() {
  auto out = std::move(t_error_detail);
  t_error_detail.reset();
  return out;
}

}  // namespace flytecd::sinks::emulator
