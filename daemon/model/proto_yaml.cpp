#include "daemon/model/proto_yaml.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <string_view>
#include <vector>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"
#include "daemon/common/yaml_json.hpp"
#include "daemon/model/yaml_safe.hpp"

namespace flytecd::model {
namespace pb = google::protobuf;

namespace {

std::string node_kind(const YAML::Node& n) {
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "null";
  return "the scalar '" + n.Scalar() + "'";
}

std::string type_name(const pb::FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return "a mapping (" + f->message_type()->full_name() + ")";
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      std::string names;
      const auto* e = f->enum_type();
      for (int i = 0; i < e->value_count(); ++i) names += (i ? ", " : "") + e->value(i)->name();
      return "one of " + names;
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return "true or false";
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return f->type() == pb::FieldDescriptor::TYPE_BYTES ? "base64 text" : "a string";
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return "a number";
    default:
      return "an integer";
  }
}

class Converter {
 public:
  Converter(const std::string& file, Diagnostics& diags) : m_file(file), m_diags(diags) {}

  std::optional<nlohmann::json> message(const YAML::Node& node, const pb::Descriptor* d,
                                        const std::string& path) {
    const std::string& full = d->full_name();
    if (full == "google.protobuf.Struct") {
      if (!node.IsMap() && !node.IsNull())
        return fail(node, path, DiagKind::wrong_type, node_kind(node), "a mapping");
      return node.IsNull() ? nlohmann::json::object() : yaml_to_json(node);
    }
    if (full == "google.protobuf.Value") return yaml_to_json(node);
    if (full == "google.protobuf.ListValue") {
      if (!node.IsSequence())
        return fail(node, path, DiagKind::wrong_type, node_kind(node), "a list");
      return yaml_to_json(node);
    }
    if (full == "google.protobuf.Duration") {
      if (!node.IsScalar() || !scan::is_proto_duration(node.Scalar()))
        return fail(node, path, DiagKind::wrong_type, node_kind(node),
                    "a duration like \"30s\" or \"1.5s\"");
      return nlohmann::json(node.Scalar());
    }
    if (full == "google.protobuf.Timestamp") {
      if (!node.IsScalar())
        return fail(node, path, DiagKind::wrong_type, node_kind(node), "an RFC 3339 timestamp");
      return nlohmann::json(node.Scalar());
    }
    if (d->file()->name() == "google/protobuf/wrappers.proto") {
      // Wrappers map to their bare value in JSON; accept {value: x} too, as people write it.
      const pb::FieldDescriptor* vf = d->FindFieldByName("value");
      if (node.IsMap()) {
        if (node.size() != 1 || !node["value"])
          return fail(node, path, DiagKind::wrong_type, node_kind(node),
                      "a bare value or {value: …}");
        return scalar(node["value"], vf, path + ".value");
      }
      return scalar(node, vf, path);
    }
    if (node.IsNull()) return nlohmann::json::object();
    if (!node.IsMap())
      return fail(node, path, DiagKind::wrong_type, node_kind(node), "a mapping (" + full + ")");

    nlohmann::json out = nlohmann::json::object();
    bool ok = true;
    std::map<int, std::string> oneof_used;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        ok = false;
        fail(kv.first, path, DiagKind::wrong_type, node_kind(kv.first), "a field name");
        continue;
      }
      const std::string key = kv.first.Scalar();
      const pb::FieldDescriptor* f = find_field(d, key);
      std::string child_path = path.empty() ? key : path + "." + key;
      if (!f) {
        ok = false;
        std::string names;
        for (int i = 0; i < d->field_count(); ++i)
          names += (i ? ", " : "") + d->field(i)->json_name();
        if (key == "<<")
          fail_at(kv.first, child_path, DiagKind::unknown_field, k_merge_key_message,
                  k_merge_key_expected);
        else
          fail_at(kv.first, child_path, DiagKind::unknown_field,
                  "unknown field '" + scan::printable(key) + "' in " + full, "one of: " + names);
        continue;
      }
      if (const auto* oneof = f->real_containing_oneof()) {
        auto [it, inserted] = oneof_used.emplace(oneof->index(), key);
        if (!inserted) {
          ok = false;
          fail_at(
              kv.first, child_path, DiagKind::oneof_conflict,
              "'" + key + "' and '" + it->second + "' are alternatives of '" + oneof->name() + "'",
              "only one of them");
          continue;
        }
      }
      if (out.contains(f->json_name())) {
        ok = false;
        fail_at(kv.first, child_path, DiagKind::duplicate_key,
                "'" + key + "' sets field '" + f->name() +
                    "' a second time (camelCase and snake_case name the same field)",
                "each field once");
        continue;
      }
      auto value = field(kv.second, f, child_path);
      if (!value) {
        ok = false;
        continue;
      }
      out[f->json_name()] = std::move(*value);
    }
    if (!ok) return std::nullopt;
    return out;
  }

 private:
  static const pb::FieldDescriptor* find_field(const pb::Descriptor* d, const std::string& key) {
    if (const auto* f = d->FindFieldByName(key)) return f;
    for (int i = 0; i < d->field_count(); ++i)
      if (d->field(i)->json_name() == key) return d->field(i);
    return nullptr;
  }

  std::optional<nlohmann::json> field(const YAML::Node& node, const pb::FieldDescriptor* f,
                                      const std::string& path) {
    if (f->is_map()) {
      if (node.IsNull()) return nlohmann::json::object();
      if (!node.IsMap())
        return fail(node, path, DiagKind::wrong_type, node_kind(node), "a mapping");
      const auto* value_field = f->message_type()->FindFieldByName("value");
      nlohmann::json out = nlohmann::json::object();
      bool ok = true;
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          ok = false;
          fail(kv.first, path, DiagKind::wrong_type, node_kind(kv.first), "a scalar key");
          continue;
        }
        auto v = single(kv.second, value_field, path + "." + kv.first.Scalar());
        if (!v) {
          ok = false;
          continue;
        }
        out[kv.first.Scalar()] = std::move(*v);
      }
      if (!ok) return std::nullopt;
      return out;
    }
    if (f->is_repeated()) {
      if (node.IsNull()) return nlohmann::json::array();
      if (!node.IsSequence())
        return fail(node, path, DiagKind::wrong_type, node_kind(node), "a list");
      nlohmann::json out = nlohmann::json::array();
      bool ok = true;
      size_t i = 0;
      for (const auto& item : node) {
        auto v = single(item, f, path + "[" + std::to_string(i++) + "]");
        if (!v) {
          ok = false;
          continue;
        }
        out.push_back(std::move(*v));
      }
      if (!ok) return std::nullopt;
      return out;
    }
    return single(node, f, path);
  }

  std::optional<nlohmann::json> single(const YAML::Node& node, const pb::FieldDescriptor* f,
                                       const std::string& path) {
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE)
      return message(node, f->message_type(), path);
    return scalar(node, f, path);
  }

  std::optional<nlohmann::json> scalar(const YAML::Node& node, const pb::FieldDescriptor* f,
                                       const std::string& path) {
    if (!node.IsScalar())
      return fail(node, path, DiagKind::wrong_type, node_kind(node), type_name(f));
    const std::string& s = node.Scalar();
    switch (f->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_STRING:
        if (f->type() == pb::FieldDescriptor::TYPE_BYTES) {
          if (!scan::is_base64_text(s))
            return fail(node, path, DiagKind::wrong_type, node_kind(node), "base64 text");
        }
        return nlohmann::json(s);
      case pb::FieldDescriptor::CPPTYPE_BOOL:
        if (s == "true" || s == "True" || s == "TRUE") return nlohmann::json(true);
        if (s == "false" || s == "False" || s == "FALSE") return nlohmann::json(false);
        return fail(node, path, DiagKind::wrong_type, node_kind(node), "true or false");
      case pb::FieldDescriptor::CPPTYPE_ENUM: {
        const auto* e = f->enum_type();
        if (e->FindValueByName(s)) return nlohmann::json(s);
        char* end = nullptr;
        errno = 0;
        long v = std::strtol(s.c_str(), &end, 10);
        if (!s.empty() && end && *end == '\0' && errno == 0) {
          if (const auto* ev = e->FindValueByNumber(static_cast<int>(v)); ev && v == ev->number())
            return nlohmann::json(ev->name());
        }
        return fail(node, path, DiagKind::invalid_value, node_kind(node), type_name(f));
      }
      case pb::FieldDescriptor::CPPTYPE_FLOAT:
      case pb::FieldDescriptor::CPPTYPE_DOUBLE: {
        char* end = nullptr;
        double v = std::strtod(s.c_str(), &end);
        if (s.empty() || !end || *end != '\0' || !std::isfinite(v))
          return fail(node, path, DiagKind::wrong_type, node_kind(node), "a number");
        return nlohmann::json(v);
      }
      case pb::FieldDescriptor::CPPTYPE_INT32:
      case pb::FieldDescriptor::CPPTYPE_INT64: {
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(s.c_str(), &end, 10);
        bool is32 = f->cpp_type() == pb::FieldDescriptor::CPPTYPE_INT32;
        if (s.empty() || !end || *end != '\0' || errno == ERANGE ||
            (is32 && (v < INT32_MIN || v > INT32_MAX)))
          return fail(node, path, DiagKind::wrong_type, node_kind(node),
                      is32 ? "an integer (32-bit)" : "an integer (64-bit)");
        return nlohmann::json(v);
      }
      case pb::FieldDescriptor::CPPTYPE_UINT32:
      case pb::FieldDescriptor::CPPTYPE_UINT64: {
        char* end = nullptr;
        errno = 0;
        unsigned long long v = std::strtoull(s.c_str(), &end, 10);
        bool is32 = f->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT32;
        if (s.empty() || s[0] == '-' || !end || *end != '\0' || errno == ERANGE ||
            (is32 && v > UINT32_MAX))
          return fail(node, path, DiagKind::wrong_type, node_kind(node), "a non-negative integer");
        return nlohmann::json(v);
      }
      case pb::FieldDescriptor::CPPTYPE_MESSAGE:
        break;
    }
    return fail(node, path, DiagKind::wrong_type, node_kind(node), type_name(f));
  }

  std::nullopt_t fail(const YAML::Node& node, const std::string& path, DiagKind kind,
                      const std::string& found, const std::string& expected) {
    return fail_at(node, path, kind, "found " + found, expected);
  }
  std::nullopt_t fail_at(const YAML::Node& node, const std::string& path, DiagKind kind,
                         const std::string& msg, const std::string& expected) {
    m_diags.push_back(
        Diagnostic{Severity::error, kind, location_of(m_file, node), path, msg, expected, {}});
    return std::nullopt;
  }

  const std::string& m_file;
  Diagnostics& m_diags;
};

}  // namespace

std::optional<nlohmann::json> yaml_to_proto_json(const YAML::Node& node,
                                                 const pb::Descriptor* descriptor,
                                                 const std::string& file, const std::string& path,
                                                 Diagnostics& diags) {
  Converter c(file, diags);
  return c.message(node, descriptor, path);
}

namespace {

const pb::FieldDescriptor* json_field(const pb::Descriptor* d, const std::string& key) {
  if (const auto* f = d->FindFieldByName(key)) return f;
  if (const auto* f = d->FindFieldByCamelcaseName(key); f && f->json_name() == key) return f;
  for (int i = 0; i < d->field_count(); ++i)
    if (d->field(i)->json_name() == key) return d->field(i);
  return nullptr;
}

bool direct_message(const nlohmann::json& j, pb::Message& msg);

// An integer from a JSON integer, or from a string of decimal digits (protobuf's JSON form of
// 64-bit integers), within [lo, hi].
template <typename T>
bool json_integer(const nlohmann::json& j, T lo, T hi, T& out) {
  if (j.is_number_unsigned()) {
    const auto v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(hi)) return false;
    out = static_cast<T>(v);
    return true;
  }
  if (j.is_number_integer()) {
    const auto v = j.get<int64_t>();
    if (v < 0 && lo == 0) return false;
    if (v < static_cast<int64_t>(lo) ||
        (v > 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(hi)))
      return false;
    out = static_cast<T>(v);
    return true;
  }
  if (!j.is_string()) return false;
  const auto& s = j.get_ref<const std::string&>();
  if (s.empty() || s.size() > 20) return false;
  const bool negative = s[0] == '-';
  if (negative && lo == 0) return false;
  if (s[negative ? 1 : 0] == '0' && s.size() > (negative ? 2u : 1u)) return false;  // "007"
  uint64_t magnitude = 0;
  for (size_t i = negative ? 1 : 0; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (magnitude > (UINT64_MAX - digit) / 10) return false;
    magnitude = magnitude * 10 + digit;
  }
  if (negative && magnitude == 0) return false;  // "-" or "-0": the parser's business
  if (negative) {
    if (magnitude > static_cast<uint64_t>(-(static_cast<int64_t>(lo) + 1)) + 1) return false;
    out = static_cast<T>(-static_cast<int64_t>(magnitude - 1) - 1);
    return true;
  }
  if (magnitude > static_cast<uint64_t>(hi)) return false;
  out = static_cast<T>(magnitude);
  return true;
}

// One value of field `f` (an element, for a repeated field): added or set.
bool direct_value(const nlohmann::json& j, pb::Message& msg, const pb::FieldDescriptor* f) {
  const auto* r = msg.GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      int32_t v = 0;
      if (!json_integer<int32_t>(j, INT32_MIN, INT32_MAX, v)) return false;
      rep ? r->AddInt32(&msg, f, v) : r->SetInt32(&msg, f, v);
      return true;
    }
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      int64_t v = 0;
      if (!json_integer<int64_t>(j, INT64_MIN, INT64_MAX, v)) return false;
      rep ? r->AddInt64(&msg, f, v) : r->SetInt64(&msg, f, v);
      return true;
    }
    case pb::FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v = 0;
      if (!json_integer<uint32_t>(j, 0, UINT32_MAX, v)) return false;
      rep ? r->AddUInt32(&msg, f, v) : r->SetUInt32(&msg, f, v);
      return true;
    }
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v = 0;
      if (!json_integer<uint64_t>(j, 0, UINT64_MAX, v)) return false;
      rep ? r->AddUInt64(&msg, f, v) : r->SetUInt64(&msg, f, v);
      return true;
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT: {
      if (!j.is_number()) return false;
      const double v = j.get<double>();
      if (!std::isfinite(v)) return false;
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_DOUBLE) {
        rep ? r->AddDouble(&msg, f, v) : r->SetDouble(&msg, f, v);
        return true;
      }
      if (v > std::numeric_limits<float>::max() || v < -std::numeric_limits<float>::max())
        return false;
      const auto fv = static_cast<float>(v);
      rep ? r->AddFloat(&msg, f, fv) : r->SetFloat(&msg, f, fv);
      return true;
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      if (!j.is_boolean()) return false;
      rep ? r->AddBool(&msg, f, j.get<bool>()) : r->SetBool(&msg, f, j.get<bool>());
      return true;
    case pb::FieldDescriptor::CPPTYPE_STRING:
      // Not UTF-8: json_to_message's text form replaces the bytes, the parser's business.
      if (!j.is_string() || f->type() == pb::FieldDescriptor::TYPE_BYTES ||
          !text::valid_utf8(j.get_ref<const std::string&>()))
        return false;
      rep ? r->AddString(&msg, f, j.get<std::string>())
          : r->SetString(&msg, f, j.get<std::string>());
      return true;
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      if (!j.is_string()) return false;
      const auto* ev = f->enum_type()->FindValueByName(j.get_ref<const std::string&>());
      if (!ev) return false;
      rep ? r->AddEnum(&msg, f, ev) : r->SetEnum(&msg, f, ev);
      return true;
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: {
      const pb::Descriptor* d = f->message_type();
      const bool wrapper = d->file()->name() == "google/protobuf/wrappers.proto";
      if (!wrapper && d->file()->package() == "google.protobuf") return false;
      pb::Message* sub = rep ? r->AddMessage(&msg, f) : r->MutableMessage(&msg, f);
      if (wrapper) {  // the bare value stands for {value: …}
        const auto* vf = d->FindFieldByName("value");
        return vf && direct_value(j, *sub, vf);
      }
      return direct_message(j, *sub);
    }
  }
  return false;
}

bool direct_field(const nlohmann::json& j, pb::Message& msg, const pb::FieldDescriptor* f) {
  if (j.is_null()) return false;  // null means "default" to protobuf, or NullValue: its parser
  if (f->is_map()) {
    const auto* entry = f->message_type();
    const auto* key = entry->FindFieldByName("key");
    const auto* value = entry->FindFieldByName("value");
    if (!j.is_object() || key->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING) return false;
    for (const auto& [k, v] : j.items()) {
      if (v.is_null() || !text::valid_utf8(k)) return false;
      pb::Message* e = msg.GetReflection()->AddMessage(&msg, f);
      e->GetReflection()->SetString(e, key, k);
      if (!direct_value(v, *e, value)) return false;
    }
    return true;
  }
  if (f->is_repeated()) {
    if (!j.is_array()) return false;
    for (const auto& item : j)
      if (item.is_null() || !direct_value(item, msg, f)) return false;
    return true;
  }
  return direct_value(j, msg, f);
}

bool direct_message(const nlohmann::json& j, pb::Message& msg) {
  if (!j.is_object()) return false;
  const pb::Descriptor* d = msg.GetDescriptor();
  const auto* r = msg.GetReflection();
  std::vector<const pb::FieldDescriptor*> seen;  // both names of one field: the parser decides
  for (const auto& [key, value] : j.items()) {
    const pb::FieldDescriptor* f = json_field(d, key);
    if (!f || std::find(seen.begin(), seen.end(), f) != seen.end()) return false;
    seen.push_back(f);
    if (const auto* oneof = f->real_containing_oneof();
        oneof && r->HasOneof(msg, oneof) && r->GetOneofFieldDescriptor(msg, oneof) != f)
      return false;
    if (!direct_field(value, msg, f)) return false;
  }
  return true;
}

}  // namespace

bool json_to_message_direct(const nlohmann::json& json, pb::Message* msg) {
  return direct_message(json, *msg);
}

std::string json_to_message(const nlohmann::json& json, pb::Message* msg) {
  if (json_to_message_direct(json, msg)) return {};
  msg->Clear();
  pb::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = false;
  auto status = pb::util::JsonStringToMessage(dump_json(json), msg, opts);
  if (status.ok()) return {};
  std::string m(status.message());
  return m.empty() ? "invalid message" : m;
}

nlohmann::json message_to_json(const pb::Message& msg) {
  std::string out;
  pb::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = false;
  auto status = pb::util::MessageToJsonString(msg, &out, opts);
  if (!status.ok()) return nlohmann::json::object();
  return nlohmann::json::parse(out, nullptr, false);
}

std::string canonical_bytes(const pb::Message& msg) {
  std::string out;
  pb::io::StringOutputStream stream(&out);
  pb::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  msg.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

nlohmann::json yaml_to_json(const YAML::Node& node) { return yaml_json::to_json(node); }

std::string json_to_yaml(const nlohmann::ordered_json& json) { return yaml_json::to_yaml(json); }

nlohmann::ordered_json project_document(const sinks::ProjectState& p) {
  nlohmann::ordered_json j;
  j["apiVersion"] = "flytecd/v1";
  j["kind"] = "Project";
  j["id"] = p.id;
  j["name"] = p.name;
  if (!p.description.empty()) j["description"] = p.description;
  if (!p.labels.empty()) j["labels"] = p.labels;
  if (p.archived) j["state"] = "archived";
  return j;
}

void collect_field_lines(const YAML::Node& node, const google::protobuf::Descriptor* desc,
                         const std::string& prefix, sinks::FieldLines& out) {
  if (!node.IsMap() || !desc) return;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) continue;
    const std::string& key = kv.first.Scalar();
    const google::protobuf::FieldDescriptor* f = desc->FindFieldByName(key);
    for (int i = 0; !f && i < desc->field_count(); ++i)
      if (desc->field(i)->json_name() == key) f = desc->field(i);
    if (!f) continue;
    const std::string path = prefix.empty() ? f->json_name() : prefix + "." + f->json_name();
    out.set(path, location_of("", kv.second).line);
    if (f->is_map()) {
      const auto* value = f->message_type()->map_value();
      if (!kv.second.IsMap()) continue;
      for (const auto& entry : kv.second) {
        if (!entry.first.IsScalar()) continue;
        const std::string entry_path = path + "." + entry.first.Scalar();
        out.set(entry_path, location_of("", entry.second).line);
        if (value->message_type())
          collect_field_lines(entry.second, value->message_type(), entry_path, out);
      }
    } else if (!f->is_repeated() && f->message_type()) {
      collect_field_lines(kv.second, f->message_type(), path, out);
    }
  }
}

}  // namespace flytecd::model
