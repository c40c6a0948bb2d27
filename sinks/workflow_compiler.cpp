#include "sinks/workflow_compiler.hpp"

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <set>

namespace flytecd::sinks::compiler {
namespace fa = ::flyteidl::admin;
namespace fc = ::flyteidl::core;

namespace {

bool is_none(const fc::LiteralType& t) { return t.has_simple() && t.simple() == fc::NONE; }

const std::string& tag_of(const fc::LiteralType& t) { return t.structure().tag(); }

bool iequals(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool casts_from(const fc::LiteralType& down, const fc::LiteralType& up);

// Metadata, annotation and structure describe a type; they never take part in the comparison.
fc::LiteralType bare(const fc::LiteralType& t) {
  fc::LiteralType out = t;
  out.clear_metadata();
  out.clear_annotation();
  out.clear_structure();
  return out;
}

bool same_type(const fc::LiteralType& down, const fc::LiteralType& up) {
  if (up.has_enum_type() && down.has_simple() && down.simple() == fc::STRING) return true;
  if (down.has_enum_type() && up.has_simple() && up.simple() == fc::STRING) return true;
  if (!tag_of(up).empty() && tag_of(down) != tag_of(up)) return false;
  // Dataclasses and Pydantic models: FlyteAdmin compares their JSON schemas for equality or
  // subtyping; not reproduced here, so two structs are castable (see the header).
  if (up.has_simple() && up.simple() == fc::STRUCT && down.has_simple() &&
      down.simple() == fc::STRUCT)
    return true;
  return google::protobuf::util::MessageDifferencer::Equals(bare(down), bare(up));
}

bool schema_column_matches(fc::SchemaType::SchemaColumn::SchemaColumnType column,
                           fc::SimpleType simple) {
  using C = fc::SchemaType::SchemaColumn;
  switch (column) {
    case C::INTEGER:
      return simple == fc::INTEGER;
    case C::FLOAT:
      return simple == fc::FLOAT;
    case C::STRING:
      return simple == fc::STRING;
    case C::BOOLEAN:
      return simple == fc::BOOLEAN;
    case C::DATETIME:
      return simple == fc::DATETIME;
    case C::DURATION:
      return simple == fc::DURATION;
    default:
      return false;
  }
}

// Every downstream column must exist upstream with a matching type; no columns on either side
// means "any".
bool schema_from_schema(const fc::SchemaType& up, const fc::SchemaType& down) {
  if (up.columns().empty() || down.columns().empty()) return true;
  for (const auto& d : down.columns()) {
    auto it = std::find_if(up.columns().begin(), up.columns().end(),
                           [&](const auto& u) { return u.name() == d.name(); });
    if (it == up.columns().end() || it->type() != d.type()) return false;
  }
  return true;
}

bool schema_from_dataset(const fc::StructuredDatasetType& up, const fc::SchemaType& down) {
  if (up.columns().empty() || down.columns().empty()) return true;
  for (const auto& d : down.columns()) {
    auto it = std::find_if(up.columns().begin(), up.columns().end(),
                           [&](const auto& u) { return u.name() == d.name(); });
    if (it == up.columns().end() || !schema_column_matches(d.type(), it->literal_type().simple()))
      return false;
  }
  return true;
}

bool dataset_from_schema(const fc::SchemaType& up, const fc::StructuredDatasetType& down) {
  if (up.columns().empty() || down.columns().empty()) return true;
  for (const auto& d : down.columns()) {
    auto it = std::find_if(up.columns().begin(), up.columns().end(),
                           [&](const auto& u) { return u.name() == d.name(); });
    if (it == up.columns().end() || !schema_column_matches(it->type(), d.literal_type().simple()))
      return false;
  }
  return true;
}

bool dataset_from_dataset(const fc::StructuredDatasetType& up,
                          const fc::StructuredDatasetType& down) {
  if (!up.format().empty() && !down.format().empty() && !iequals(up.format(), down.format()))
    return false;
  if (up.columns().empty() || down.columns().empty()) return true;
  for (const auto& d : down.columns()) {
    auto it = std::find_if(up.columns().begin(), up.columns().end(),
                           [&](const auto& u) { return u.name() == d.name(); });
    if (it == up.columns().end() || !casts_from(d.literal_type(), it->literal_type())) return false;
  }
  return true;
}

bool union_casts_from(const fc::UnionType& down, const fc::LiteralType& up) {
  if (up.has_union_type()) {
    for (const auto& u : up.union_type().variants()) {
      bool found = false;
      for (const auto& d : down.variants())
        if (castable(u, d)) {
          found = true;
          break;
        }
      if (!found) return false;
    }
    return true;
  }
  // A plain value fits a union only when exactly one variant takes it.
  int matches = 0;
  for (const auto& d : down.variants())
    if (castable(up, d)) ++matches;
  return matches == 1;
}

// The checker chosen by the downstream (expected) type, as typing.go's getTypeChecker.
bool casts_from(const fc::LiteralType& down, const fc::LiteralType& up) {
  switch (down.type_case()) {
    case fc::LiteralType::kCollectionType:
      if (!up.has_collection_type()) return false;
      return is_none(up.collection_type()) ||
             casts_from(down.collection_type(), up.collection_type());
    case fc::LiteralType::kMapValueType:
      if (!up.has_map_value_type()) return false;
      return is_none(up.map_value_type()) || casts_from(down.map_value_type(), up.map_value_type());
    case fc::LiteralType::kBlob:
      if (!up.has_blob()) return false;
      return up.blob().format().empty() || down.blob().format().empty() ||
             up.blob().format() == down.blob().format();
    case fc::LiteralType::kSchema:
      if (up.has_schema()) return schema_from_schema(up.schema(), down.schema());
      if (!up.has_structured_dataset_type()) return false;
      // A Flyte schema is parquet only.
      if (!up.structured_dataset_type().format().empty() &&
          !iequals(up.structured_dataset_type().format(), "parquet"))
        return false;
      return schema_from_dataset(up.structured_dataset_type(), down.schema());
    case fc::LiteralType::kUnionType:
      return union_casts_from(down.union_type(), up);
    case fc::LiteralType::kStructuredDatasetType:
      if (is_none(up)) return true;  // structured datasets are nullable
      if (up.has_schema()) {
        const auto& fmt = down.structured_dataset_type().format();
        if (!fmt.empty() && !iequals(fmt, "parquet")) return false;
        return dataset_from_schema(up.schema(), down.structured_dataset_type());
      }
      if (!up.has_structured_dataset_type()) return false;
      return dataset_from_dataset(up.structured_dataset_type(), down.structured_dataset_type());
    default:
      if (is_none(down)) return is_none(up);
      return same_type(down, up);
  }
}

std::string simple_text(fc::SimpleType s) { return fc::SimpleType_Name(s); }

}  // namespace

bool castable(const fc::LiteralType& upstream, const fc::LiteralType& downstream) {
  // A single-variant union upstream may be consumed as its variant.
  if (upstream.has_union_type() && upstream.union_type().variants_size() == 1 &&
      casts_from(downstream, upstream.union_type().variants(0)))
    return true;
  return casts_from(downstream, upstream);
}

std::string type_text(const fc::LiteralType& t) {
  switch (t.type_case()) {
    case fc::LiteralType::kSimple:
      return simple_text(t.simple());
    case fc::LiteralType::kCollectionType:
      return "List[" + type_text(t.collection_type()) + "]";
    case fc::LiteralType::kMapValueType:
      return "Dict[str, " + type_text(t.map_value_type()) + "]";
    case fc::LiteralType::kBlob:
      return t.blob().format().empty() ? "Blob" : "Blob(" + t.blob().format() + ")";
    case fc::LiteralType::kEnumType: {
      std::string s = "Enum[";
      for (int i = 0; i < t.enum_type().values_size(); ++i)
        s += (i ? ", " : "") + t.enum_type().values(i);
      return s + "]";
    }
    case fc::LiteralType::kSchema:
      return "Schema";
    case fc::LiteralType::kStructuredDatasetType: {
      const auto& f = t.structured_dataset_type().format();
      return f.empty() ? "StructuredDataset" : "StructuredDataset(" + f + ")";
    }
    case fc::LiteralType::kUnionType: {
      std::string s = "Union[";
      for (int i = 0; i < t.union_type().variants_size(); ++i)
        s += (i ? ", " : "") + type_text(t.union_type().variants(i));
      return s + "]";
    }
    default:
      return "unset";
  }
}

namespace {

bool word_char(char c) {  // RE2's \w: ASCII letters, digits and '_'
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

// FindAllStringSubmatch of `(\[(\d+)\]\.)?(\w+)`, by hand: leftmost-first, the optional
// index group preferred; the whole text must hold exactly one match.
std::optional<VarName> parse_var_name(const std::string& text) {
  std::optional<VarName> found;
  int matches = 0;
  size_t i = 0;
  while (i < text.size()) {
    VarName v;
    size_t j = i;
    if (text[i] == '[') {
      size_t k = i + 1;
      while (k < text.size() && text[k] >= '0' && text[k] <= '9') ++k;
      if (k > i + 1 && k + 2 < text.size() && text[k] == ']' && text[k + 1] == '.' &&
          word_char(text[k + 2])) {
        const std::string digits = text.substr(i + 1, k - i - 1);
        v.indexed = true;
        // strconv.Atoi: a 64-bit int; more digits than that is a parse error.
        const size_t first = digits.find_first_not_of('0');
        const std::string sig = first == std::string::npos ? "0" : digits.substr(first);
        if (sig.size() > 19 || (sig.size() == 19 && sig > "9223372036854775807"))
          return std::nullopt;
        v.index = std::stoll(sig);
        j = k + 2;
      }
    }
    if (!word_char(text[j])) {
      ++i;
      continue;
    }
    size_t end = j;
    while (end < text.size() && word_char(text[end])) ++end;
    v.name = text.substr(j, end - j);
    ++matches;
    found = std::move(v);
    i = end;
  }
  if (matches != 1) return std::nullopt;
  return found;
}

std::string id_key(const fc::Identifier& id) {
  return id.project() + "/" + id.domain() + "/" + id.name() + "/" + id.version();
}

std::string admin_text(const std::vector<Issue>& issues) {
  std::vector<const Issue*> errors;
  for (const auto& i : issues)
    if (!i.warning) errors.push_back(&i);
  std::string out = "Collected Errors: " + std::to_string(errors.size()) + "\n";
  for (size_t n = 0; n < errors.size(); ++n)
    out += "\tError " + std::to_string(n) + ": Code: " + errors[n]->code +
           ", Node Id: " + errors[n]->node + ", Description: " + errors[n]->description + "\n";
  return out;
}

}  // namespace flytecd::sinks::compiler
