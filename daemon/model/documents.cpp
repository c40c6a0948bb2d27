#include "daemon/model/documents.hpp"

#include "daemon/model/proto_yaml.hpp"
#include "flyteidl/admin/matchable_resource.pb.h"

namespace flytecd::model {

PackedAttributes::PackedAttributes(const flyteidl::admin::MatchingAttributes& value) { set(value); }

void PackedAttributes::set(const flyteidl::admin::MatchingAttributes& value) {
  // Deterministic, so equal values pack to equal bytes (map fields in key order).
  m_bytes = canonical_bytes(value);
  m_bytes.shrink_to_fit();
}

flyteidl::admin::MatchingAttributes PackedAttributes::get() const {
  flyteidl::admin::MatchingAttributes value;
  // Bytes this class serialized itself: parsing cannot fail.
  value.ParseFromString(m_bytes);
  return value;
}

std::string_view to_string(Activate a) {
  switch (a) {
    case Activate::scheduled:
      return "scheduled";
    case Activate::all:
      return "all";
    case Activate::none:
      return "none";
  }
  return "scheduled";
}

}  // namespace flytecd::model
