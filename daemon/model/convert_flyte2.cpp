#include "daemon/model/convert_flyte2.hpp"

#include <map>
#include <optional>
#include <set>

#include "daemon/common/json_dump.hpp"
#include "daemon/model/proto_yaml.hpp"
#include "daemon/model/resolve.hpp"
#include "flyteidl2/settings/settings_definition.pb.h"

namespace flytecd::model {
namespace {

using Json = nlohmann::ordered_json;

enum class LeafType { quantity, string, map, env_list };

struct Correspondence {
  const char* from;  // JSON path in MatchingAttributes
  const char* to;    // JSON path of the Flyte 2 leaf in Settings
  LeafType type;
};

const std::vector<Correspondence>& correspondences() {
  static const std::vector<Correspondence> k = {
      {"taskResourceAttributes.defaults.cpu", "taskResource.min.cpu", LeafType::quantity},
      {"taskResourceAttributes.defaults.gpu", "taskResource.min.gpu", LeafType::quantity},
      {"taskResourceAttributes.defaults.memory", "taskResource.min.memory", LeafType::quantity},
      {"taskResourceAttributes.defaults.ephemeralStorage", "taskResource.min.storage",
       LeafType::quantity},
      {"taskResourceAttributes.limits.cpu", "taskResource.max.cpu", LeafType::quantity},
      {"taskResourceAttributes.limits.gpu", "taskResource.max.gpu", LeafType::quantity},
      {"taskResourceAttributes.limits.memory", "taskResource.max.memory", LeafType::quantity},
      {"taskResourceAttributes.limits.ephemeralStorage", "taskResource.max.storage",
       LeafType::quantity},
      {"workflowExecutionConfig.securityContext.runAs.k8sServiceAccount", "security.serviceAccount",
       LeafType::string},
      {"workflowExecutionConfig.rawOutputDataConfig.outputLocationPrefix", "storage.rawDataPath",
       LeafType::string},
      {"workflowExecutionConfig.labels.values", "labels", LeafType::map},
      {"workflowExecutionConfig.annotations.values", "annotations", LeafType::map},
      {"workflowExecutionConfig.envs.values", "environmentVariables", LeafType::env_list},
  };
  return k;
}

// Why a field has no Flyte 2 counterpart, by the longest matching path prefix.
std::string no_counterpart(const std::string& path) {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"taskResourceAttributes.defaults.storage",
       "FlyteAdmin never reads TaskResourceSpec.storage (ephemeralStorage is what it applies)"},
      {"taskResourceAttributes.limits.storage",
       "FlyteAdmin never reads TaskResourceSpec.storage (ephemeralStorage is what it applies)"},
      {"workflowExecutionConfig.maxParallelism",
       "no Flyte 2 setting (run concurrency is not in the pinned settings schema)"},
      {"workflowExecutionConfig.securityContext",
       "Flyte 2 settings hold only the service account of a security context"},
      {"workflowExecutionConfig.rawOutputDataConfig",
       "Flyte 2 settings hold only the raw data path"},
      {"workflowExecutionConfig", "no Flyte 2 setting for this execution option"},
      {"executionQueueAttributes",
       "queue tags choose a queue through FlyteAdmin's configuration; run.defaultQueue names one "
       "queue, not tags"},
      {"executionClusterLabel", "selects a cluster; Flyte 2 settings have no cluster selection"},
      {"clusterAssignment", "a cluster pool; Flyte 2 settings have no cluster selection"},
      {"clusterResourceAttributes",
       "namespace resource templating; Flyte 2 settings have no equivalent"},
      {"pluginOverrides", "no Flyte 2 setting"},
      {"qualityOfService", "no Flyte 2 setting"},
  };
  const std::pair<std::string, std::string>* best = nullptr;
  for (const auto& e : k)
    if (path.rfind(e.first, 0) == 0 && (!best || e.first.size() > best->first.size())) best = &e;
  return best ? best->second : "no Flyte 2 setting";
}

bool under(const std::string& path, const std::string& prefix) {
  return path == prefix || (path.rfind(prefix, 0) == 0 && path.size() > prefix.size() &&
                            (path[prefix.size()] == '.' || path[prefix.size()] == '['));
}

const Json* at_path(const Json& j, const std::string& path) {
  const Json* cur = &j;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!cur->is_object() || !cur->contains(part)) return nullptr;
    cur = &(*cur)[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

Json& make_path(Json& j, const std::string& path) {
  Json* cur = &j;
  size_t start = 0;
  for (;;) {
    const size_t dot = path.find('.', start);
    cur = &(*cur)[path.substr(start, dot == std::string::npos ? dot : dot - start)];
    if (dot == std::string::npos) return *cur;
    start = dot + 1;
  }
}

// The leaf for a Flyte 1 value, or null when the value is empty (FlyteAdmin treats "" as unset).
Json leaf(const Json& v, LeafType type) {
  Json out;
  out["state"] = "SETTING_STATE_VALUE";
  switch (type) {
    case LeafType::quantity:
      if (!v.is_string() || v.get<std::string>().empty()) return Json();
      out["quantityValue"] = v;
      break;
    case LeafType::string:
      if (!v.is_string() || v.get<std::string>().empty()) return Json();
      out["stringValue"] = v;
      break;
    case LeafType::map:
      if (!v.is_object() || v.empty()) return Json();
      out["mapValue"]["entries"] = v;
      break;
    case LeafType::env_list: {
      if (!v.is_array() || v.empty()) return Json();
      Json entries = Json::object();
      for (const auto& kv : v)
        if (kv.is_object() && kv.contains("key"))
          entries[kv["key"].get<std::string>()] = kv.value("value", std::string());
      out["mapValue"]["entries"] = entries;
      break;
    }
  }
  return out;
}

// Every leaf path of a JSON value (arrays are one leaf).
void leaf_paths(const Json& j, const std::string& prefix, std::vector<std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items()) leaf_paths(v, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  out.push_back(prefix);
}

Json attributes_json(const flyteidl::admin::MatchingAttributes& m) {
  return Json::parse(dump_json(message_to_json(m)));
}

// One Settings record being built, and what it came from.
struct Record {
  Json spec = Json::object();
  std::set<std::string> sources;  // file:line
  size_t leaves = 0;
  std::map<std::string, std::set<std::string>> map_keys;  // map leaf -> its keys
};

void put(Record& r, const Correspondence& c, const Json& value, const Location& where) {
  Json l = leaf(value, c.type);
  if (l.is_null()) return;
  if (c.type == LeafType::map || c.type == LeafType::env_list)
    for (const auto& [k, v] : l["mapValue"]["entries"].items()) r.map_keys[c.to].insert(k);
  make_path(r.spec, c.to) = std::move(l);
  r.sources.insert(to_string(where));
  ++r.leaves;
}

// FlyteAdmin takes a task-resource record whole (no field of a broader one fills it), so a leaf
// the narrower record leaves empty while a broader converted record sets it is written UNSET:
// Flyte 2 would otherwise inherit it per leaf.
bool whole_record(const Correspondence& c) {
  return std::string(c.from).rfind("taskResourceAttributes.", 0) == 0;
}

bool has_leaf(const Json& spec, const std::string& path) { return at_path(spec, path) != nullptr; }

void shadow_broader(Record& r, const std::vector<const Record*>& broader, const Location& where) {
  for (const auto& c : correspondences()) {
    if (!whole_record(c) || has_leaf(r.spec, c.to)) continue;
    for (const Record* b : broader)
      if (has_leaf(b->spec, c.to)) {
        make_path(r.spec, c.to) = Json{{"state", "SETTING_STATE_UNSET"}};
        r.sources.insert(to_string(where));
        break;
      }
  }
}

std::string settings_document(const Record& r, const std::string& domain,
                              const std::string& project) {
  Json doc;
  doc["apiVersion"] = "flytecd/v1";
  doc["kind"] = "Settings";
  if (!domain.empty()) doc["domain"] = domain;
  if (!project.empty()) doc["project"] = project;
  doc["spec"] = r.spec;
  std::string from;
  for (const auto& s : r.sources) from += (from.empty() ? "" : ", ") + s;
  return "# converted by flytecd convert --to flyte2 from " + from + "\n" + json_to_yaml(doc);
}

bool row_level(Level l) { return l == Level::project || l == Level::project_domain; }

std::string scope_name(const Scope& s) {
  std::string out = s.project;
  if (!s.domain.empty()) out += "/" + s.domain;
  if (!s.workflow.empty()) out += "/" + s.workflow;
  return out;
}

void list_unconverted(const Json& value, const Location& where, const std::string& scope,
                      bool workflow, Flyte2Conversion& out) {
  std::vector<std::string> paths;
  leaf_paths(value, "", paths);
  std::set<std::string> reported;
  for (const auto& p : paths) {
    bool mapped = false;
    for (const auto& c : correspondences()) mapped = mapped || under(p, c.from);
    if (mapped && !workflow) continue;
    // A map is reported once, not key by key.
    std::string field = p;
    for (const auto& c : correspondences())
      if (under(p, c.from)) field = c.from;
    if (!reported.insert(field).second) continue;
    out.unconverted.push_back(Unconverted{
        where, scope, field,
        workflow ? "Flyte 2 settings have no workflow level (org, domain and project only)"
                 : no_counterpart(field)});
  }
}

// The org and org-domain records, from PlatformDefaults.
std::map<std::string, Record> platform_records(const Documents& docs, Flyte2Conversion& out) {
  std::map<std::string, Record> by_domain;        // "" = org
  std::map<std::string, Location> task_resource;  // domain -> its TASK_RESOURCE default
  for (const auto& p : docs.platform_defaults) {
    if (p.type == flyteidl::admin::TASK_RESOURCE) task_resource[p.domain] = p.where;
    const Json value = attributes_json(p.value.get());
    Record& r = by_domain[p.domain];
    for (const auto& c : correspondences())
      if (const Json* v = at_path(value, c.from)) put(r, c, *v, p.where);
    list_unconverted(value, p.where,
                     p.domain.empty() ? "platform (global)" : "platform (" + p.domain + ")", false,
                     out);
  }
  // A domain's task-resource default replaces the global one whole.
  if (auto org = by_domain.find(""); org != by_domain.end())
    for (auto& [domain, r] : by_domain)
      if (!domain.empty() && task_resource.count(domain))
        shadow_broader(r, {&org->second}, task_resource[domain]);
  return by_domain;
}

// A map leaf FlyteAdmin takes whole from the project's row that Flyte 2 merges per key with the
// broader records: the keys only the broader ones have would now apply too.
void note_merges(const Record& r, const std::string& scope,
                 const std::vector<const Record*>& broader, Flyte2Conversion& out) {
  for (const auto& [leaf_path, keys] : r.map_keys) {
    std::set<std::string> extra;
    for (const Record* b : broader)
      if (auto it = b->map_keys.find(leaf_path); it != b->map_keys.end())
        for (const auto& k : it->second)
          if (!keys.count(k)) extra.insert(k);
    if (extra.empty()) continue;
    std::string list;
    for (const auto& k : extra) list += (list.empty() ? "" : ", ") + k;
    out.notes.push_back(scope + ": " + leaf_path +
                        ": FlyteAdmin takes the whole map from the project's row, Flyte 2 merges "
                        "it per key with the org levels, so " +
                        list + " from the platform defaults would also apply");
  }
}

}  // namespace

Flyte2Conversion convert_to_flyte2(const Documents& docs, const std::vector<std::string>& domains) {
  Flyte2Conversion out;
  std::map<std::string, Record> platform = platform_records(docs, out);
  std::string platform_text;
  for (const auto& [domain, r] : platform) {
    if (r.leaves == 0) continue;
    platform_text += (platform_text.empty() ? "" : "---\n") + settings_document(r, domain, "");
    ++out.settings_documents;
    out.leaves += r.leaves;
  }
  if (!platform_text.empty()) out.files.push_back({"platform/settings.yaml", platform_text});

  std::set<std::string> projects;
  for (const auto& o : docs.overrides) {
    const Json value = attributes_json(o.value.get());
    list_unconverted(value, o.where, scope_name(o.scope), !o.scope.workflow.empty(), out);
    if (o.scope.workflow.empty()) projects.insert(o.scope.project);
  }
  const Hierarchy h(docs);
  for (const auto& project : projects) {
    std::string text;
    for (const auto& domain : domains) {
      Record r;
      std::optional<Location> task_resource_row;
      for (const auto& eff : h.resolve(Scope{project, domain, ""})) {
        if (eff.type == flyteidl::admin::TASK_RESOURCE && row_level(eff.origin.level))
          task_resource_row = eff.origin.where;
        const Json value = attributes_json(eff.value);
        for (const auto& c : correspondences()) {
          const std::string from = c.from;
          if (from.rfind(attribute_json_key(eff.type), 0) != 0) continue;
          // The origin of this part: the whole row, or (field-wise merges) the field's own.
          Origin origin = eff.origin;
          const std::string top = from.substr(from.find('.') + 1);
          if (auto it = eff.parts.find(top.substr(0, top.find('.'))); it != eff.parts.end())
            origin = it->second;
          if (!row_level(origin.level)) continue;  // the org levels hold platform values
          if (const Json* v = at_path(value, from)) put(r, c, *v, origin.where);
        }
      }
      if (r.leaves == 0) continue;
      std::vector<const Record*> broader;
      for (const std::string& d : {domain, std::string()})
        if (auto it = platform.find(d); it != platform.end()) broader.push_back(&it->second);
      if (task_resource_row) shadow_broader(r, broader, *task_resource_row);
      note_merges(r, project + "/" + domain, broader, out);
      text += (text.empty() ? "" : "---\n") + settings_document(r, domain, project);
      ++out.settings_documents;
      out.leaves += r.leaves;
    }
    if (!text.empty()) out.files.push_back({"projects/" + project + "/settings.yaml", text});
  }

  for (const auto& p : docs.projects) {
    const sinks::ProjectState state{p.id, p.name, p.description, p.labels, p.archived};
    out.files.push_back({"projects/" + p.id + "/project.yaml",
                         "# converted by flytecd convert --to flyte2 from " + to_string(p.where) +
                             " (Flyte 2's ProjectService)\n" +
                             json_to_yaml(project_document(state))});
    ++out.project_documents;
  }
  return out;
}

}  // namespace flytecd::model
