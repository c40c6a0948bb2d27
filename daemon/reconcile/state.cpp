#include "daemon/reconcile/state.hpp"

#include "daemon/common/digest.hpp"

#include "daemon/model/proto_yaml.hpp"

namespace flytecd::reconcile {

std::string_view to_string(ObjectKind k) {
  return k == ObjectKind::project ? "project" : "override";
}

std::string project_key(const std::string& id) { return "project/" + id; }

std::string override_key(const model::Scope& s, model::AttributeType type) {
  return "override/" + s.project + "/" + s.domain + "/" + s.workflow + "/" +
         model::attribute_type_name(type);
}

std::string hash_of(const ProjectState& p) {
  std::string s =
      p.id + '\0' + p.name + '\0' + p.description + '\0' + (p.archived ? "archived" : "active");
  for (const auto& [k, v] : p.labels) s += '\0' + k + '=' + v;
  return digest::sha256_hex(s);
}

std::string hash_of(const OverrideState& o) {
  return digest::sha256_hex(model::canonical_bytes(o.value));
}

State desired_state(const model::Documents& docs) {
  State st;
  for (const auto& p : docs.projects)
    st.projects[p.id] = ProjectState{p.id, p.name, p.description, p.labels, p.archived};
  for (const auto& o : docs.overrides)
    st.overrides[override_key(o.scope, o.type)] = OverrideState{o.scope, o.type, o.value};
  return st;
}

}  // namespace flytecd::reconcile
