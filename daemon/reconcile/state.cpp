#include "daemon/reconcile/state.hpp"

#include "daemon/common/digest.hpp"

#include <google/protobuf/message.h>

#include "daemon/model/proto_yaml.hpp"

namespace flytecd::reconcile {

std::string hash_of(const ProjectState& p) {
  std::string s =
      p.id + '\0' + p.name + '\0' + p.description + '\0' + (p.archived ? "archived" : "active");
  for (const auto& [k, v] : p.labels) s += '\0' + k + '=' + v;
  return digest::sha256_hex(s);
}

std::string hash_of(const OverrideState& o) {
  return hash_of_canonical(model::canonical_bytes(o.value));
}

std::string hash_of_canonical(const std::string& canonical) {
  return digest::sha256_hex(canonical);
}

std::string hash_of(const ObjectValue& o) {
  return digest::sha256_hex(o.kind + '\0' + model::canonical_bytes(*o.value));
}

State desired_state(const model::Documents& docs) {
  State st;
  for (const auto& p : docs.projects)
    st.projects[p.id] = ProjectState{p.id, p.name, p.description, p.labels, p.archived};
  for (const auto& o : docs.overrides)
    st.overrides[override_key(o.scope, o.type)] =
        OverrideState{o.scope, o.type, o.value.get(), o.source};
  for (const auto& o : docs.objects) st.objects[o.key] = ObjectValue{o.kind, o.value, o.source};
  return st;
}

}  // namespace flytecd::reconcile
