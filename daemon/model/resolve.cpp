#include "daemon/model/resolve.hpp"

#include <google/protobuf/reflection.h>

#include <limits>

#include "daemon/common/json_dump.hpp"
#include "daemon/model/proto_yaml.hpp"

namespace flytecd::model {
namespace admin = flyteidl::admin;
namespace pb = google::protobuf;

Hierarchy::Hierarchy(const Documents& docs) {
  for (const auto& o : docs.overrides)
    m_rows.emplace(std::make_pair(o.scope, static_cast<int>(o.type)), &o);
  for (const auto& p : docs.platform_defaults)
    m_platform.emplace(std::make_pair(p.domain, static_cast<int>(p.type)), &p);
}

const Override* Hierarchy::row(const Scope& scope, AttributeType type) const {
  auto it = m_rows.find({scope, static_cast<int>(type)});
  return it == m_rows.end() ? nullptr : it->second;
}

const PlatformDefault* Hierarchy::platform(const std::string& domain, AttributeType type) const {
  auto it = m_platform.find({domain, static_cast<int>(type)});
  return it == m_platform.end() ? nullptr : it->second;
}

std::vector<Scope> Hierarchy::workflow_scopes(const std::string& project,
                                              const std::string& domain) const {
  // Scopes order by project, domain, workflow: the rows of (project, domain) are one range,
  // from the first key not less than (project, domain, "").
  std::vector<Scope> out;
  for (auto it = m_rows.lower_bound({Scope{project, domain, ""}, std::numeric_limits<int>::min()});
       it != m_rows.end(); ++it) {
    const Scope& s = it->first.first;
    if (s.project != project || (!domain.empty() && s.domain != domain)) break;
    if (s.level() == Level::workflow && (out.empty() || !(out.back() == s))) out.push_back(s);
  }
  return out;
}

namespace {

struct Candidate {
  admin::MatchingAttributes value;  // unpacked from the document
  Origin origin;
};

// Is field `f` of `m` set, in FlyteAdmin's "fill if unset" sense (zero scalars count as unset)?
bool is_set(const pb::Message& m, const pb::FieldDescriptor* f) {
  const auto* r = m.GetReflection();
  if (f->is_repeated()) return r->FieldSize(m, f) > 0;
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) return r->HasField(m, f);
  return r->HasField(m, f);  // proto3 scalars: HasField == non-default
}

void copy_scalar(pb::Message& into, const pb::Message& from, const pb::FieldDescriptor* f) {
  const auto* r = into.GetReflection();
  const auto* fr = from.GetReflection();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      r->SetInt32(&into, f, fr->GetInt32(from, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_INT64:
      r->SetInt64(&into, f, fr->GetInt64(from, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      r->SetUInt32(&into, f, fr->GetUInt32(from, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      r->SetUInt64(&into, f, fr->GetUInt64(from, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      r->SetDouble(&into, f, fr->GetDouble(from, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      r->SetFloat(&into, f, fr->GetFloat(from, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      r->SetBool(&into, f, fr->GetBool(from, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_ENUM:
      r->SetEnumValue(&into, f, fr->GetEnumValue(from, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_STRING:
      r->SetString(&into, f, fr->GetString(from, f));
      break;
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
}

// WORKFLOW_EXECUTION_CONFIG: copy each unset field from `from`.
void fill_unset(pb::Message& into, const pb::Message& from, const Origin& origin,
                std::map<std::string, Origin>& parts) {
  const auto* d = into.GetDescriptor();
  const auto* r = into.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (is_set(into, f) || !is_set(from, f)) continue;
    if (f->is_repeated()) {
      for (int k = 0; k < r->FieldSize(from, f); ++k) {
        if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE)
          r->AddMessage(&into, f)->CopyFrom(r->GetRepeatedMessage(from, f, k));
      }
    } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      r->MutableMessage(&into, f)->CopyFrom(r->GetMessage(from, f));
    } else {
      copy_scalar(into, from, f);
    }
    parts[f->json_name()] = origin;
  }
}

void note_all_set(const pb::Message& m, const Origin& origin,
                  std::map<std::string, Origin>& parts) {
  const auto* d = m.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i)
    if (is_set(m, d->field(i))) parts[d->field(i)->json_name()] = origin;
}

}  // namespace

std::vector<EffectiveAttribute> Hierarchy::resolve(const Scope& at) const {
  std::vector<EffectiveAttribute> out;
  for (AttributeType type : all_attribute_types()) {
    std::vector<Candidate> rows;  // most specific first
    auto add_row = [&](const Scope& s) {
      if (const Override* o = row(s, type))
        rows.push_back({o->value.get(), Origin{s.level(), s, o->where}});
    };
    // FlyteAdmin reads CLUSTER_RESOURCE and CLUSTER_ASSIGNMENT by project and domain only.
    const bool project_domain_only =
        type == admin::CLUSTER_RESOURCE || type == admin::CLUSTER_ASSIGNMENT;
    if (!at.workflow.empty() && !project_domain_only) add_row(at);
    if (!at.domain.empty()) add_row(Scope{at.project, at.domain, ""});
    add_row(Scope{at.project, "", ""});
    std::vector<Candidate> platform;
    if (!at.domain.empty())
      if (const auto* p = this->platform(at.domain, type))
        platform.push_back(
            {p->value.get(), Origin{Level::platform_domain, Scope{"", at.domain, ""}, p->where}});
    if (const auto* p = this->platform("", type))
      platform.push_back({p->value.get(), Origin{Level::platform_global, Scope{}, p->where}});
    if (rows.empty() && platform.empty()) continue;

    EffectiveAttribute eff;
    eff.type = type;
    const Candidate& first = rows.empty() ? platform.front() : rows.front();
    eff.value = first.value;
    eff.origin = first.origin;

    if (type == admin::WORKFLOW_EXECUTION_CONFIG) {
      auto* wec = eff.value.mutable_workflow_execution_config();
      note_all_set(*wec, first.origin, eff.parts);
      std::vector<const Candidate*> chain;
      // FlyteAdmin consults the most specific row, then the project-level row again.
      if (!rows.empty() && rows.back().origin.level == Level::project && rows.size() > 1)
        chain.push_back(&rows.back());
      for (const auto& p : platform) chain.push_back(&p);
      for (const Candidate* c : chain) {
        if (c == &first) continue;
        fill_unset(*wec, c->value.workflow_execution_config(), c->origin, eff.parts);
      }
    } else if (type == admin::CLUSTER_RESOURCE) {
      auto* attrs = eff.value.mutable_cluster_resource_attributes()->mutable_attributes();
      for (const auto& [k, v] : *attrs) eff.parts[k] = first.origin;
      for (const auto& p : platform) {
        if (&p == &first) continue;
        for (const auto& [k, v] : p.value.cluster_resource_attributes().attributes())
          if (attrs->find(k) == attrs->end()) {
            (*attrs)[k] = v;
            eff.parts[k] = p.origin;
          }
      }
    }
    out.push_back(std::move(eff));
  }
  return out;
}

namespace {
nlohmann::ordered_json origin_json(const Origin& o) {
  nlohmann::ordered_json j;
  j["level"] = std::string(to_string(o.level));
  if (!o.scope.project.empty()) j["project"] = o.scope.project;
  if (!o.scope.domain.empty()) j["domain"] = o.scope.domain;
  if (!o.scope.workflow.empty()) j["workflow"] = o.scope.workflow;
  if (!o.where.file.empty()) j["file"] = to_string(o.where);
  return j;
}

nlohmann::ordered_json to_ordered(const nlohmann::json& j) {
  return nlohmann::ordered_json::parse(dump_json(j));
}
}  // namespace

nlohmann::ordered_json collate(const Scope& at, const std::vector<EffectiveAttribute>& attrs) {
  nlohmann::ordered_json doc;
  doc["project"] = at.project;
  if (!at.domain.empty()) doc["domain"] = at.domain;
  if (!at.workflow.empty()) doc["workflow"] = at.workflow;
  doc["level"] = std::string(to_string(at.level()));
  nlohmann::ordered_json list = nlohmann::ordered_json::object();
  for (const auto& a : attrs) {
    const std::string key = attribute_json_key(a.type);
    nlohmann::json value = message_to_json(a.value);
    nlohmann::ordered_json entry;
    entry["type"] = attribute_type_name(a.type);
    bool inherited = a.origin.level != at.level();
    entry["inherited"] = inherited;
    entry["source"] = origin_json(a.origin);
    if (a.type == admin::QUALITY_OF_SERVICE_SPECIFICATION)
      entry["note"] =
          "view-only: FlyteAdmin's API cannot write QUALITY_OF_SERVICE; it comes from "
          "configuration";
    entry["value"] =
        value.contains(key) ? to_ordered(value[key]) : nlohmann::ordered_json::object();
    bool mixed = false;
    for (const auto& [part, origin] : a.parts)
      if (origin.level != a.origin.level || origin.scope != a.origin.scope) mixed = true;
    if (mixed) {
      nlohmann::ordered_json parts = nlohmann::ordered_json::object();
      for (const auto& [part, origin] : a.parts) {
        nlohmann::ordered_json p;
        p["inherited"] = origin.level != at.level();
        p["source"] = origin_json(origin);
        parts[part] = p;
      }
      entry["fields"] = parts;
    }
    list[key] = entry;
  }
  doc["attributes"] = list;
  return doc;
}

}  // namespace flytecd::model
