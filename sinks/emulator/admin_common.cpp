#include "sinks/emulator/admin_common.hpp"

#include "daemon/common/digest.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "sinks/emulator/encoding.hpp"

namespace flytecd::sinks::emulator::detail {
namespace {

// Go's %v of a string field inside prototext: quoted with C escapes.
std::string go_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

std::string go_value(const nlohmann::json& v) {
  if (v.is_null()) return "<nil>";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

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
    add("project", id->project().empty() ? "" : go_quote(id->project()));
    add("domain", id->domain().empty() ? "" : go_quote(id->domain()));
    add("name", id->name().empty() ? "" : go_quote(id->name()));
    add("version", id->version().empty() ? "" : go_quote(id->version()));
    add("org", id->org().empty() ? "" : go_quote(id->org()));
    return out;
  }
  return m.ShortDebugString();
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

Status validate_project_and_domain(Tx& tx, const AdminConfig& config, const std::string& project,
                                   const std::string& domain) {
  auto row = tx.get_project(project);
  if (!row) return row.error();
  if (!row->has_value()) {
    return invalid("failed to validate that project [" + project + "] and domain [" + domain +
                   "] are registered, err: [project [" + project + "] not found]");
  }
  if ((*row)->state != fa::Project::ACTIVE) {
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
    return invalid("failed to validate that project [" + project +
                   "] is registered, err: [project [" + project + "] not found]");
  }
  return ok_status();
}

Status validate_project_for_update(Tx& tx, const std::string& project) {
  auto exists = validate_project_exists(tx, project);
  if (!exists) return exists;
  auto row = tx.get_project(project);
  if (!row) return row.error();
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

std::string pad_number(int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020lld", static_cast<long long>(v));
  return buf;
}

}  // namespace flytecd::sinks::emulator::detail
