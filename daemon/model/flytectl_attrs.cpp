#include "daemon/model/flytectl_attrs.hpp"

#include <algorithm>
#include <cctype>
#include <exception>
#include <map>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"
#include "daemon/model/flytectl_go_yaml.hpp"
#include "daemon/model/proto_yaml.hpp"

namespace flytecd::model::flytectl {
namespace admin = flyteidl::admin;
namespace pb = google::protobuf;
using json = nlohmann::json;

namespace {

struct TypeInfo {
  AttributeType type;
  const char* name;     // flytecd's short name (--type)
  const char* command;  // flytectl's `update <command>`
};

constexpr TypeInfo k_types[] = {
    {admin::TASK_RESOURCE, "task-resource", "task-resource-attribute"},
    {admin::CLUSTER_RESOURCE, "cluster-resource", "cluster-resource-attribute"},
    {admin::EXECUTION_QUEUE, "execution-queue", "execution-queue-attribute"},
    {admin::EXECUTION_CLUSTER_LABEL, "execution-cluster-label", "execution-cluster-label"},
    {admin::PLUGIN_OVERRIDE, "plugin-override", "plugin-override"},
    {admin::WORKFLOW_EXECUTION_CONFIG, "workflow-execution-config", "workflow-execution-config"},
};

constexpr const char* k_scope_keys[] = {"project", "domain", "workflow"};

const pb::Descriptor* message_of(AttributeType type) {
  return admin::MatchingAttributes::descriptor()
      ->FindFieldByNumber(field_of_attribute_type(type))
      ->message_type();
}

struct Parsed {
  AttrFile file;
  Origins origins;  // keyed by "project"/"domain"/"workflow" or a JSON path in the message
  Location top;
  Origin first_attr;  // the first attribute key: where the whole value is reported
};

std::string all_type_keys() {
  std::string out;
  for (const auto& t : k_types)
    out +=
        std::string(out.empty() ? "" : "; ") + t.name + ": " + go_field_names(message_of(t.type));
  return out;
}

// What the first pass over a flytectl attribute file finds: the attribute keys, which types
// they belong to, and the keys of none.
struct KeyScan {
  std::vector<std::pair<YAML::Node, YAML::Node>> attrs;
  std::map<AttributeType, std::vector<std::string>> types_of_keys;
  std::vector<std::pair<YAML::Node, std::string>> unknown;
  bool ok = true;
};

void add_error(Diagnostics& diags, DiagKind kind, Location where, std::string path, std::string msg,
               std::string expected) {
  diags.push_back(Diagnostic{Severity::error,
                             kind,
                             std::move(where),
                             std::move(path),
                             std::move(msg),
                             std::move(expected),
                             {}});
}

// First pass: the scope keys (into `parsed`), and which types the other keys belong to.
KeyScan scan_keys(const YAML::Node& root, const SourceFile& file,
                  std::optional<AttributeType> forced, Parsed& parsed, Diagnostics& diags) {
  KeyScan out;
  std::map<std::string, YAML::Node> seen;
  for (const auto& kv : root) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    if (kv.first.IsScalar() && !seen.emplace(fold(key), kv.first).second) {
      out.ok = false;
      diags.push_back(Diagnostic{
          Severity::error, DiagKind::duplicate_key, location_of(file.path, kv.first), key,
          "'" + scan::printable(key) + "' is given a second time (keys match case-insensitively)",
          "each key once", location_of(file.path, seen[fold(key)])});
      continue;
    }
    const char* scope_key = nullptr;
    for (const char* s : k_scope_keys)
      if (fold_equal(key, s)) scope_key = s;
    if (scope_key) {
      parsed.origins[scope_key] = Origin{key, location_of(file.path, kv.first)};
      if (is_null(kv.second)) continue;
      if (!kv.second.IsScalar()) {
        out.ok = false;
        add_error(diags, DiagKind::wrong_type, location_of(file.path, kv.second), key,
                  "found " + node_kind(kv.second), "a string");
        continue;
      }
      std::string v = go_string(kv.second);
      std::string_view s = scope_key;
      (s == "project"  ? parsed.file.scope.project
       : s == "domain" ? parsed.file.scope.domain
                       : parsed.file.scope.workflow) = v;
      continue;
    }
    bool known = false;
    for (const auto& t : k_types) {
      if (forced && *forced != t.type) continue;
      if (kv.first.IsScalar() && go_field(message_of(t.type), key)) {
        out.types_of_keys[t.type].push_back(key);
        known = true;
      }
    }
    if (known)
      out.attrs.emplace_back(kv.first, kv.second);
    else
      out.unknown.emplace_back(kv.first, key);
  }

  return out;
}

// What an unknown key of a file of `type` (if known) should have been.
std::string unknown_key_expected(const std::string& key, std::optional<AttributeType> type) {
  std::string expected =
      type ? "one of: project, domain, workflow, " + go_field_names(message_of(*type)) +
                 " (a flytectl " + type_name(*type) + " file)"
           : "project, domain, workflow and the keys of one type (" + all_type_keys() + ")";
  if (type)
    for (const auto& t : k_types)
      if (t.type != *type && go_field(message_of(t.type), key))
        expected += "; '" + key + "' is a " + t.name + " key";
  for (const auto& t : k_types) {
    const auto* d = message_of(t.type);
    for (int i = 0; i < d->field_count(); ++i)
      if (d->field(i)->json_name() == key && d->field(i)->name() != key &&
          (!type || *type == t.type))
        expected = "flytectl's key '" + d->field(i)->name() + "' (" + t.name +
                   "; it reads the snake_case name)";
  }
  return expected;
}

std::optional<Parsed> parse_one(const SourceFile& file, std::optional<AttributeType> forced,
                                const Limits& limits, Diagnostics& diags) {
  const size_t before = diags.size();
  auto docs = parse_yaml_file(file.path, file.bytes, limits, diags);
  if (diags.size() != before) return std::nullopt;
  auto add = [&](DiagKind kind, Location where, std::string path, std::string msg,
                 std::string expected) {
    diags.push_back(Diagnostic{Severity::error,
                               kind,
                               std::move(where),
                               std::move(path),
                               std::move(msg),
                               std::move(expected),
                               {}});
  };
  if (docs.size() != 1 || !docs[0].root.IsMap()) {
    add(DiagKind::not_a_mapping, Location{file.path, docs.empty() ? 0 : docs[0].line, 0}, "",
        docs.size() > 1 ? "the file holds " + std::to_string(docs.size()) + " YAML documents"
        : docs.empty()  ? "the file is empty"
                        : "the file is not a mapping",
        "one mapping: a flytectl attribute file (project, domain, workflow and the attributes of "
        "one type)");
    return std::nullopt;
  }
  const YAML::Node& root = docs[0].root;
  Parsed out;
  out.file.path = file.path;
  out.top = location_of(file.path, root);

  KeyScan keys = scan_keys(root, file, forced, out, diags);
  auto& attrs = keys.attrs;
  auto& types_of_keys = keys.types_of_keys;
  bool& ok = keys.ok;

  std::optional<AttributeType> type = forced;
  if (!type && types_of_keys.size() == 1) type = types_of_keys.begin()->first;
  for (const auto& [node, key] : keys.unknown) {
    ok = false;
    add(DiagKind::unknown_field, location_of(file.path, node), key,
        "unknown key '" + scan::printable(key) + "'", unknown_key_expected(key, type));
  }
  if (types_of_keys.size() > 1) {
    std::string found;
    for (const auto& [t, names] : types_of_keys)
      for (const auto& k : names)
        found += (found.empty() ? "" : ", ") + k + " (" + type_name(t) + ")";
    add(DiagKind::invalid_value, out.top, "",
        "keys of more than one attribute type: " + scan::printable(found),
        "one (scope, type) per file, as `flytectl update <type>-attribute --attrFile` reads it");
    return std::nullopt;
  }
  if (!type) {
    if (keys.unknown.empty())
      add(DiagKind::missing_field, out.top, "",
          "no attribute keys: the attribute type cannot be inferred",
          "the keys of one type (" + all_type_keys() + "), or --type");
    return std::nullopt;
  }
  out.file.type = *type;
  if (out.file.scope.project.empty()) {
    ok = false;
    add(DiagKind::missing_field, out.top, "project", "project is required",
        "project: <id> (and domain, workflow for narrower scopes)");
  }

  // Second pass: the attributes, as flytectl's Go struct reads them.
  const auto* d = message_of(*type);
  json value = json::object();
  if (!attrs.empty())
    out.first_attr = Origin{attrs[0].first.Scalar(), location_of(file.path, attrs[0].first)};
  else
    out.first_attr = Origin{"", out.top};
  for (const auto& [k, v] : attrs) {
    const auto* f = go_field(d, k.Scalar());
    auto j = read_go_field(v, f, file.path, k.Scalar(), f->json_name(), diags, out.origins);
    if (!j)
      ok = false;
    else if (!j->is_null())
      value[f->json_name()] = std::move(*j);
  }
  if (!ok) return std::nullopt;
  json full = json::object();
  full[attribute_json_key(*type)] = value;
  if (std::string err = json_to_message(full, &out.file.value); !err.empty()) {
    add(DiagKind::invalid_value, out.top, "", "protobuf rejected the value: " + err,
        "a valid " + d->full_name());
    return std::nullopt;
  }
  return out;
}

// Paths carry no meaning to flytecd; keep each name readable but one safe path component.
std::string path_component(const std::string& name) {
  std::string out = name.empty() ? "_" : name;
  for (auto& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  if (out.front() == '.') out = "_" + out;
  return out;
}

// "projects/<p>/overrides.yaml", "projects/<p>/<domain>.yaml",
// "projects/<p>/workflows/<workflow>.yaml": the layout of repo-layout-example.
std::string output_path(const Scope& s) {
  const std::string dir = "projects/" + path_component(s.project) + "/";
  if (s.domain.empty()) return dir + "overrides.yaml";
  if (s.workflow.empty()) return dir + path_component(s.domain) + ".yaml";
  return dir + "workflows/" + path_component(s.workflow) + ".yaml";
}

std::string render_document(const Scope& scope, const std::vector<const AttrFile*>& files) {
  std::vector<const AttrFile*> sorted(files);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const AttrFile* a, const AttrFile* b) { return a->type < b->type; });
  std::string text = "# imported by `flytecd import --from-flytectl` from:\n";
  for (const auto* f : sorted)
    text += "#   " + scan::printable(f->path) + " (" + type_name(f->type) + ")\n";
  nlohmann::ordered_json doc;
  doc["apiVersion"] = "flytecd/v1";
  doc["kind"] = "Overrides";
  doc["project"] = scope.project;
  if (!scope.domain.empty()) doc["domain"] = scope.domain;
  if (!scope.workflow.empty()) doc["workflow"] = scope.workflow;
  nlohmann::ordered_json spec = nlohmann::ordered_json::object();
  for (const auto* f : sorted) {
    auto v = nlohmann::ordered_json::parse(dump_json(message_to_json(f->value)));
    for (auto it = v.begin(); it != v.end(); ++it) spec[it.key()] = it.value();
  }
  doc["spec"] = spec;
  return text + json_to_yaml(doc);
}

// A diagnostic of the rendered document, moved back to where the flytectl file says it.
Diagnostic to_source(Diagnostic d, const Parsed& p) {
  d.related = {};
  std::string path = d.path;
  const std::string spec = "spec." + attribute_json_key(p.file.type);
  if (path == spec) {  // the whole value (e.g. a type FlyteAdmin cannot store at this scope)
    d.where = p.first_attr.where;
    d.path = p.first_attr.path;
    return d;
  }
  if (path.rfind(spec + ".", 0) == 0) path = path.substr(spec.size() + 1);
  for (std::string probe = path;; probe = probe.substr(0, probe.find_last_of(".["))) {
    if (auto it = p.origins.find(probe); it != p.origins.end() && !probe.empty()) {
      d.where = it->second.where;
      d.path = it->second.path + path.substr(probe.size());
      return d;
    }
    if (probe.find_first_of(".[") == std::string::npos) break;
  }
  d.where = p.top;
  d.path = path;
  return d;
}

}  // namespace

std::optional<AttributeType> type_from_name(std::string_view name) {
  for (const auto& t : k_types)
    if (name == t.name || name == t.command) return t.type;
  return std::nullopt;
}

std::string type_name(AttributeType type) {
  for (const auto& t : k_types)
    if (t.type == type) return t.name;
  return attribute_type_name(type);
}

std::vector<std::string> type_names() {
  std::vector<std::string> out;
  for (const auto& t : k_types) out.emplace_back(t.name);
  return out;
}

std::optional<AttrFile> parse_attr_file(const SourceFile& file, std::optional<AttributeType> forced,
                                        const Limits& limits, Diagnostics& diags) {
  try {
    auto p = parse_one(file, forced, limits, diags);
    if (!p) return std::nullopt;
    return std::move(p->file);
  } catch (const std::exception& e) {
    diags.push_back(Diagnostic{Severity::error,
                               DiagKind::invalid_value,
                               Location{file.path, 0, 0},
                               "",
                               "this file could not be read (" + scan::printable(e.what()) + ")",
                               "a flytectl attribute file",
                               {}});
    return std::nullopt;
  }
}

bool ImportResult::any_invalid() const {
  return std::any_of(files.begin(), files.end(),
                     [](const FileReport& f) { return f.outcome == Outcome::invalid; });
}

ImportResult import_files(const std::vector<SourceFile>& inputs,
                          std::optional<AttributeType> forced, const Policy& policy,
                          const Limits& limits) {
  ImportResult result;
  std::vector<std::optional<Parsed>> parsed;
  for (const auto& in : inputs) {
    FileReport report;
    report.path = in.path;
    std::optional<Parsed> p;
    try {
      p = parse_one(in, forced, limits, report.diagnostics);
    } catch (const std::exception& e) {
      report.diagnostics.push_back(
          Diagnostic{Severity::error,
                     DiagKind::invalid_value,
                     Location{in.path, 0, 0},
                     "",
                     "this file could not be read (" + scan::printable(e.what()) + ")",
                     "a flytectl attribute file",
                     {}});
    }
    if (p) {
      report.type = p->file.type;
      report.scope = p->file.scope;
      // Checked as `flytecd validate` checks the document this file becomes, so the messages
      // (and the verdict on what FlyteAdmin cannot store) are validate's own.
      Documents docs;
      Diagnostics diags;
      SourceFile rendered{in.path, render_document(p->file.scope, {&p->file}), 0};
      rendered.size = rendered.bytes.size();
      parse_file(rendered, limits, policy, docs, diags);
      bool errors = false, only_unsupported = true;
      for (auto& d : diags) {
        if (d.severity == Severity::error) {
          errors = true;
          only_unsupported = only_unsupported && d.kind == DiagKind::unsupported_attribute;
        }
        report.diagnostics.push_back(to_source(std::move(d), *p));
      }
      report.outcome = !errors            ? Outcome::imported
                       : only_unsupported ? Outcome::skipped
                                          : Outcome::invalid;
    }
    if (report.outcome != Outcome::imported) p.reset();
    parsed.push_back(std::move(p));
    result.files.push_back(std::move(report));
  }

  // One document per scope; one (scope, type) once.
  std::map<Scope, std::map<AttributeType, size_t>> scopes;
  for (size_t i = 0; i < parsed.size(); ++i) {
    if (!parsed[i]) continue;
    const auto& f = parsed[i]->file;
    auto [it, inserted] = scopes[f.scope].emplace(f.type, i);
    if (inserted) continue;
    const auto& first = *parsed[it->second];
    result.files[i].diagnostics.push_back(
        Diagnostic{Severity::error, DiagKind::duplicate_scope, parsed[i]->top, "",
                   type_name(f.type) + " for " + std::string(to_string(f.scope.level())) + " " +
                       to_string(f.scope) + " is also in " + scan::printable(first.file.path),
                   "one flytectl file per (scope, type)", first.top});
    result.files[i].outcome = Outcome::invalid;
    parsed[i].reset();
  }
  std::map<std::string, std::vector<std::pair<Scope, std::vector<const AttrFile*>>>> by_path;
  for (const auto& [scope, types] : scopes) {
    std::vector<const AttrFile*> files;
    for (const auto& [type, i] : types)
      if (parsed[i]) files.push_back(&parsed[i]->file);
    if (!files.empty()) by_path[output_path(scope)].emplace_back(scope, std::move(files));
  }
  std::vector<SourceFile> check;
  for (const auto& [path, docs] : by_path) {
    OutputFile out{path, "", 0};
    for (const auto& [scope, files] : docs) {
      out.text += (out.documents ? "---\n" : "") + render_document(scope, files);
      ++out.documents;
    }
    check.push_back(SourceFile{path, out.text, out.text.size()});
    result.outputs.push_back(std::move(out));
  }
  // The repository as written must load: a failure here is this converter's bug.
  for (auto& d : load_documents(check, limits, policy).diagnostics)
    if (d.severity == Severity::error) result.output_diagnostics.push_back(std::move(d));
  return result;
}

}  // namespace flytecd::model::flytectl
