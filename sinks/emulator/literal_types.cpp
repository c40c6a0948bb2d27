#include "sinks/emulator/literal_types.hpp"

#include "sinks/workflow_compiler.hpp"

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

// One rule set for the emulator's launch-plan checks and the workflow compiler (shared with
// flytecd's own compile step).
bool types_castable(const fc::LiteralType& upstream, const fc::LiteralType& downstream) {
  return compiler::castable(upstream, downstream);
}

}  // namespace flytecd::sinks::emulator::detail
