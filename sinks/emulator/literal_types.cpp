#include "sinks/emulator/literal_types.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "sinks/emulator/admin_common.hpp"

namespace flytecd::sinks::emulator::detail {
namespace {

fc::LiteralType simple(fc::SimpleType t) {
  fc::LiteralType lt;
  lt.set_simple(t);
  return lt;
}

bool is_none(const fc::LiteralType& t) {
  return t.type_case() == fc::LiteralType::kSimple && t.simple() == fc::NONE;
}

bool iequals(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

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
      if (s.structured_dataset().has_metadata()) {
        *lt.mutable_structured_dataset_type() =
            s.structured_dataset().metadata().structured_dataset_type();
      }
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

// literalTypeForLiterals: the distinct element types; several become a union (sorted by their
// text), unions of collections are flattened into a collection of one union.
fc::LiteralType element_type(const std::vector<const fc::Literal*>& literals) {
  std::vector<std::pair<std::string, fc::LiteralType>> inner;
  std::set<std::string> seen;
  std::optional<fc::LiteralType> none_type;
  for (const auto* x : literals) {
    fc::LiteralType t = literal_type_for(*x).value_or(fc::LiteralType{});
    if (x->value_case() == fc::Literal::kCollection && x->collection().literals().empty()) {
      none_type = t;
      continue;
    }
    std::string key = go_prototext(t);
    if (seen.insert(key).second) inner.emplace_back(std::move(key), std::move(t));
  }
  if (inner.empty() && none_type) return *none_type;
  if (inner.empty()) return simple(fc::NONE);
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

bool casts_from(const fc::LiteralType& downstream, const fc::LiteralType& upstream);

bool schema_from_schema(const fc::SchemaType& up, const fc::SchemaType& down) {
  if (up.columns().empty() || down.columns().empty()) return true;
  std::map<std::string, int> by_name;
  for (const auto& c : up.columns()) by_name[c.name()] = c.type();
  for (const auto& c : down.columns()) {
    auto it = by_name.find(c.name());
    if (it == by_name.end() || it->second != c.type()) return false;
  }
  return true;
}

bool schema_column_matches(int schema_column_type, fc::SimpleType simple_type) {
  using C = fc::SchemaType::SchemaColumn;
  switch (schema_column_type) {
    case C::INTEGER:
      return simple_type == fc::INTEGER;
    case C::FLOAT:
      return simple_type == fc::FLOAT;
    case C::STRING:
      return simple_type == fc::STRING;
    case C::BOOLEAN:
      return simple_type == fc::BOOLEAN;
    case C::DATETIME:
      return simple_type == fc::DATETIME;
    case C::DURATION:
      return simple_type == fc::DURATION;
    default:
      return false;
  }
}

bool schema_from_dataset(const fc::StructuredDatasetType& up, const fc::SchemaType& down) {
  if (up.columns().empty() || down.columns().empty()) return true;
  std::map<std::string, fc::SimpleType> by_name;
  for (const auto& c : up.columns()) by_name[c.name()] = c.literal_type().simple();
  for (const auto& c : down.columns()) {
    auto it = by_name.find(c.name());
    if (it == by_name.end() || !schema_column_matches(c.type(), it->second)) return false;
  }
  return true;
}

bool dataset_from_schema(const fc::SchemaType& up, const fc::StructuredDatasetType& down) {
  if (up.columns().empty() || down.columns().empty()) return true;
  std::map<std::string, int> by_name;
  for (const auto& c : up.columns()) by_name[c.name()] = c.type();
  for (const auto& c : down.columns()) {
    auto it = by_name.find(c.name());
    if (it == by_name.end() || !schema_column_matches(it->second, c.literal_type().simple()))
      return false;
  }
  return true;
}

bool dataset_from_dataset(const fc::StructuredDatasetType& up,
                          const fc::StructuredDatasetType& down) {
  if (!up.format().empty() && !down.format().empty() && !iequals(up.format(), down.format()))
    return false;
  if (up.columns().empty() || down.columns().empty()) return true;
  std::map<std::string, const fc::LiteralType*> by_name;
  for (const auto& c : up.columns()) by_name[c.name()] = &c.literal_type();
  for (const auto& c : down.columns()) {
    auto it = by_name.find(c.name());
    if (it == by_name.end() || !casts_from(c.literal_type(), *it->second)) return false;
  }
  return true;
}

// trivialChecker: equal types once structure, metadata and annotation are ignored, with the
// enum <-> string and tag rules.
bool trivially_casts(const fc::LiteralType& down, const fc::LiteralType& up) {
  if (up.has_enum_type() && down.type_case() == fc::LiteralType::kSimple &&
      down.simple() == fc::STRING)
    return true;
  if (down.has_enum_type() && up.type_case() == fc::LiteralType::kSimple &&
      up.simple() == fc::STRING)
    return true;
  const std::string& up_tag = up.structure().tag();
  if (!up_tag.empty() && down.structure().tag() != up_tag) return false;
  if (up.type_case() == fc::LiteralType::kSimple && up.simple() == fc::STRUCT &&
      down.type_case() == fc::LiteralType::kSimple && down.simple() == fc::STRUCT) {
    return true;  // FlyteAdmin compares the JSON schemas here (documented simplification)
  }
  fc::LiteralType a = up;
  fc::LiteralType b = down;
  for (auto* t : {&a, &b}) {
    t->clear_structure();
    t->clear_metadata();
    t->clear_annotation();
  }
  return serialize(a) == serialize(b);
}

// getTypeChecker(downstream).CastsFrom(upstream).
bool casts_from(const fc::LiteralType& down, const fc::LiteralType& up) {
  switch (down.type_case()) {
    case fc::LiteralType::kCollectionType:
      if (up.has_collection_type() && is_none(up.collection_type())) return true;
      return up.has_collection_type() && casts_from(down.collection_type(), up.collection_type());
    case fc::LiteralType::kMapValueType:
      if (up.has_map_value_type() && is_none(up.map_value_type())) return true;
      return up.has_map_value_type() && casts_from(down.map_value_type(), up.map_value_type());
    case fc::LiteralType::kBlob:
      if (!up.has_blob()) return false;
      if (up.blob().format().empty() || down.blob().format().empty()) return true;
      return up.blob().format() == down.blob().format();
    case fc::LiteralType::kSchema:
      if (up.has_schema()) return schema_from_schema(up.schema(), down.schema());
      if (!up.has_structured_dataset_type()) return false;
      if (!up.structured_dataset_type().format().empty() &&
          !iequals(up.structured_dataset_type().format(), "parquet"))
        return false;
      return schema_from_dataset(up.structured_dataset_type(), down.schema());
    case fc::LiteralType::kUnionType: {
      const auto& variants = down.union_type().variants();
      if (up.has_union_type()) {
        for (const auto& u : up.union_type().variants()) {
          if (std::none_of(variants.begin(), variants.end(),
                           [&](const fc::LiteralType& d) { return types_castable(u, d); }))
            return false;
        }
        return true;
      }
      // Only when exactly one variant accepts it (the choice must be unambiguous).
      return std::count_if(variants.begin(), variants.end(),
                           [&](const fc::LiteralType& d) { return types_castable(up, d); }) == 1;
    }
    case fc::LiteralType::kStructuredDatasetType:
      if (is_none(up)) return true;  // structured datasets are nullable
      if (up.has_schema()) {
        const auto& format = down.structured_dataset_type().format();
        if (!format.empty() && !iequals(format, "parquet")) return false;
        return dataset_from_schema(up.schema(), down.structured_dataset_type());
      }
      if (!up.has_structured_dataset_type()) return false;
      return dataset_from_dataset(up.structured_dataset_type(), down.structured_dataset_type());
    default:
      if (is_none(down)) return is_none(up);
      return trivially_casts(down, up);
  }
}

}  // namespace

std::optional<fc::LiteralType> literal_type_for(const fc::Literal& literal) {
  switch (literal.value_case()) {
    case fc::Literal::kScalar:
      return scalar_type(literal.scalar());
    case fc::Literal::kCollection: {
      std::vector<const fc::Literal*> items;
      for (const auto& l : literal.collection().literals()) items.push_back(&l);
      fc::LiteralType lt;
      *lt.mutable_collection_type() = element_type(items);
      return lt;
    }
    case fc::Literal::kMap: {
      // Go ranges over a map here; the value order only matters for the union's variant order,
      // which is sorted anyway.
      std::map<std::string, const fc::Literal*> sorted;
      for (const auto& [k, v] : literal.map().literals()) sorted[k] = &v;
      std::vector<const fc::Literal*> items;
      for (const auto& [k, v] : sorted) items.push_back(v);
      fc::LiteralType lt;
      *lt.mutable_map_value_type() = element_type(items);
      return lt;
    }
    case fc::Literal::kOffloadedMetadata:
      if (!literal.offloaded_metadata().has_inferred_type()) return std::nullopt;
      return literal.offloaded_metadata().inferred_type();
    default:
      return std::nullopt;
  }
}

std::string literal_type_error(const std::optional<fc::LiteralType>& type) {
  if (!type) {
    return "got unknown literal type: [<nil>].\nSuggested solution: Please update all your Flyte "
           "deployment images to the latest version and try again";
  }
  if (type->has_collection_type()) return literal_type_error(type->collection_type());
  if (type->has_map_value_type()) return literal_type_error(type->map_value_type());
  return "";
}

bool types_castable(const fc::LiteralType& upstream, const fc::LiteralType& downstream) {
  if (upstream.has_union_type() && upstream.union_type().variants_size() == 1 &&
      casts_from(downstream, upstream.union_type().variants(0)))
    return true;
  return casts_from(downstream, upstream);
}

}  // namespace flytecd::sinks::emulator::detail
