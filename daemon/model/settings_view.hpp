#pragma once

// The effective Flyte 2 settings at a scope: every leaf of flyteidl2.settings.Settings (read from
// the descriptors, so a field Flyte 2 adds is shown without code), the value it has and the scope
// level that set it, resolved over the records of the scope's levels as the settings proto
// documents it (settings_definition.proto on flyteorg/flyte main): the narrowest level whose leaf
// is SETTING_STATE_VALUE or SETTING_STATE_UNSET decides, INHERIT (or no record) defers to the
// broader one; a map leaf (labels, annotations, environment variables) merges per key, the
// narrower level winning a key, and UNSET clears what broader levels set. Pure.

#include <google/protobuf/message.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sinks/types.hpp"

namespace flytecd::model {

// One level of a settings key: org, domain or project, broadest first.
struct SettingsLevel {
  std::string level;                                  // "org", "domain", "project"
  std::string key;                                    // "settings/flyte/development/"
  const google::protobuf::Message* record = nullptr;  // a flyteidl2.settings.Settings; none: null
  std::string source;  // where the record comes from ("settings.yaml:12", "version 3"), or ""
  // A document's field lines: a leaf's source is then its own line ("settings.yaml:7").
  const sinks::SourceLines* lines = nullptr;
};

// The effective settings over `levels` (broadest first):
//   {"levels": [{level, key, record: bool, source}],
//    "settings": [{"path": "run.defaultQueue", "state": "value"|"unset"|"inherit",
//                  "value": <JSON value or null>, "level": "project"|null, "source": …|null,
//                  ["entries": {key: {value, level, source}}] (map leaves)}]}
// A leaf no level sets is "inherit" with no level: the server's own default applies.
nlohmann::ordered_json effective_settings(const std::vector<SettingsLevel>& levels);

// The `state` field (a flyteidl2.settings.SettingState) of a leaf setting message (StringSetting,
// QuantitySetting, …); null for any other message: what makes a message a leaf. Defined with the
// Settings kind (kind_settings.cpp).
const google::protobuf::FieldDescriptor* setting_state_field(const google::protobuf::Descriptor* d);

// The levels of a key (org, then org-domain with a domain, then org-domain-project with a
// project), their object keys built as settings_object_key does.
std::vector<SettingsLevel> settings_levels(const std::string& org, const std::string& domain,
                                           const std::string& project);

// The document as aligned text, one leaf a line; `compare` (optional, same shape) adds what it
// says where it differs ("Git: …").
std::string effective_settings_text(const nlohmann::ordered_json& doc, const std::string& title,
                                    const nlohmann::ordered_json* compare = nullptr,
                                    const std::string& compare_name = "");

}  // namespace flytecd::model
