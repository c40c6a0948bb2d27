// The type of a literal value (validators.LiteralTypeForLiteral / literalTypeForLiterals /
// buildMultipleTypeUnion) and Go's prototext form of a message, which orders a union's variants.
// The one implementation: the compiler and the emulator (sinks/emulator/literal_types.cpp) use
// it, so flytecd's compile step and the emulator infer the same type.
#include <cstdio>
#include <cstdlib>
#include <set>

#include "daemon/common/text.hpp"
#include "sinks/workflow_compiler.hpp"

namespace flytecd::sinks::compiler {
namespace fc = ::flyteidl::core;

namespace {

std::string go_scalar(const google::protobuf::Message& m,
                      const google::protobuf::FieldDescriptor* f, int index) {
  using FD = google::protobuf::FieldDescriptor;
  const auto* r = m.GetReflection();
  const bool rep = f->is_repeated();
  auto num = [](auto v) { return std::to_string(v); };
  switch (f->cpp_type()) {
    case FD::CPPTYPE_INT32:
      return num(rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
    case FD::CPPTYPE_INT64:
      return num(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FD::CPPTYPE_UINT32:
      return num(rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
    case FD::CPPTYPE_UINT64:
      return num(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    case FD::CPPTYPE_DOUBLE:
    case FD::CPPTYPE_FLOAT: {
      const double v = f->cpp_type() == FD::CPPTYPE_DOUBLE
                           ? (rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f))
                           : (rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      for (int precision = 1; precision <= 17; ++precision) {  // shortest round-trip form
        std::snprintf(buf, sizeof buf, "%.*g", precision, v);
        if (std::strtod(buf, nullptr) == v) break;
      }
      return buf;
    }
    case FD::CPPTYPE_BOOL:
      return (rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false";
    case FD::CPPTYPE_ENUM: {
      const auto* e = rep ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f);
      return e->name();
    }
    case FD::CPPTYPE_STRING:
      return text::quote_escaped(rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f));
    case FD::CPPTYPE_MESSAGE:
      break;
  }
  return "";
}

fc::LiteralType simple(fc::SimpleType t) {
  fc::LiteralType lt;
  lt.set_simple(t);
  return lt;
}

// literalTypeForScalar; nullopt where Go returns nil.
std::optional<fc::LiteralType> scalar_type(const fc::Scalar& s) {
  fc::LiteralType lt;
  switch (s.value_case()) {
    case fc::Scalar::kPrimitive:
      switch (s.primitive().value_case()) {
        case fc::Primitive::kInteger:
          return simple(fc::INTEGER);
        case fc::Primitive::kFloatValue:
          return simple(fc::FLOAT);
        case fc::Primitive::kStringValue:
          return simple(fc::STRING);
        case fc::Primitive::kBoolean:
          return simple(fc::BOOLEAN);
        case fc::Primitive::kDatetime:
          return simple(fc::DATETIME);
        case fc::Primitive::kDuration:
          return simple(fc::DURATION);
        default:
          return simple(fc::NONE);
      }
    case fc::Scalar::kBlob:
      if (!s.blob().has_metadata()) return std::nullopt;
      *lt.mutable_blob() = s.blob().metadata().type();
      return lt;
    case fc::Scalar::kBinary:
      // A tagged binary (MessagePack) is a structured value, any other raw bytes.
      return simple(s.binary().tag() == "msgpack" ? fc::STRUCT : fc::BINARY);
    case fc::Scalar::kSchema:
      *lt.mutable_schema() = s.schema().type();
      return lt;
    case fc::Scalar::kStructuredDataset:
      lt.mutable_structured_dataset_type();
      if (s.structured_dataset().has_metadata())
        *lt.mutable_structured_dataset_type() =
            s.structured_dataset().metadata().structured_dataset_type();
      return lt;
    case fc::Scalar::kNoneType:
      return simple(fc::NONE);
    case fc::Scalar::kError:
      return simple(fc::ERROR);
    case fc::Scalar::kGeneric:
      return simple(fc::STRUCT);
    case fc::Scalar::kUnion:
      *lt.mutable_union_type()->add_variants() = s.union_().type();
      return lt;
    default:
      return std::nullopt;
  }
}

// literalTypeForLiterals: the distinct element types (an empty inner list counts only when
// nothing else is there); several are sorted by their prototext and merged into one union, and
// a collection of a union among them is flattened into a collection of one union
// (buildMultipleTypeUnion).
fc::LiteralType element_type(const std::vector<const fc::Literal*>& literals) {
  std::vector<std::pair<std::string, fc::LiteralType>> inner;
  std::set<std::string> seen;
  std::optional<fc::LiteralType> empty_list;
  for (const fc::Literal* x : literals) {
    fc::LiteralType t = type_of(*x).value_or(fc::LiteralType{});
    if (x->has_collection() && x->collection().literals().empty()) {
      empty_list = t;
      continue;
    }
    std::string key = go_text(t);
    if (seen.insert(key).second) inner.emplace_back(std::move(key), std::move(t));
  }
  if (inner.empty()) return empty_list ? *empty_list : simple(fc::NONE);
  if (inner.size() == 1) return inner.front().second;
  std::sort(inner.begin(), inner.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  fc::LiteralType out;
  bool nested = false;
  auto* variants = out.mutable_union_type();
  for (const auto& [key, t] : inner) {
    if (t.has_collection_type() && t.collection_type().has_union_type()) {
      nested = true;
      for (const auto& v : t.collection_type().union_type().variants())
        *variants->add_variants() = v;
    } else {
      *variants->add_variants() = t;
    }
  }
  if (!nested) return out;
  fc::LiteralType wrapped;
  *wrapped.mutable_collection_type() = std::move(out);
  return wrapped;
}

}  // namespace

std::string go_text(const google::protobuf::Message& m) {
  using FD = google::protobuf::FieldDescriptor;
  const auto* d = m.GetDescriptor();
  const auto* r = m.GetReflection();
  std::string out;
  auto add = [&](const std::string& part) {
    if (!out.empty()) out += " ";
    out += part;
  };
  for (int i = 0; i < d->field_count(); ++i) {
    const FD* f = d->field(i);
    const int n = f->is_repeated() ? r->FieldSize(m, f) : (r->HasField(m, f) ? 1 : 0);
    if (f->is_map()) {  // entries sorted by key, as Go prints maps
      std::vector<std::string> entries;
      for (int k = 0; k < n; ++k) entries.push_back(go_text(r->GetRepeatedMessage(m, f, k)));
      std::sort(entries.begin(), entries.end());
      for (const auto& e : entries) add(f->name() + ":{" + e + "}");
      continue;
    }
    for (int k = 0; k < n; ++k) {
      if (f->cpp_type() == FD::CPPTYPE_MESSAGE) {
        const auto& sub = f->is_repeated() ? r->GetRepeatedMessage(m, f, k) : r->GetMessage(m, f);
        add(f->name() + ":{" + go_text(sub) + "}");
      } else {
        add(f->name() + ":" + go_scalar(m, f, k));
      }
    }
  }
  return out;
}

std::optional<fc::LiteralType> type_of(const fc::Literal& literal) {
  fc::LiteralType t;
  switch (literal.value_case()) {
    case fc::Literal::kScalar:
      return scalar_type(literal.scalar());
    case fc::Literal::kCollection: {
      std::vector<const fc::Literal*> items;
      for (const auto& l : literal.collection().literals()) items.push_back(&l);
      *t.mutable_collection_type() = element_type(items);
      return t;
    }
    case fc::Literal::kMap: {
      // Go ranges over a map (no order); only the union's variant order could depend on it,
      // and that is sorted.
      std::map<std::string, const fc::Literal*> sorted;
      for (const auto& [k, v] : literal.map().literals()) sorted[k] = &v;
      std::vector<const fc::Literal*> items;
      for (const auto& [k, v] : sorted) items.push_back(v);
      *t.mutable_map_value_type() = element_type(items);
      return t;
    }
    case fc::Literal::kOffloadedMetadata:
      if (!literal.offloaded_metadata().has_inferred_type()) return std::nullopt;
      return literal.offloaded_metadata().inferred_type();
    default:
      return std::nullopt;
  }
}

}  // namespace flytecd::sinks::compiler
