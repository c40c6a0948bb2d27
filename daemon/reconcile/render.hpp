#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "daemon/reconcile/plan.hpp"

namespace flytecd::reconcile {

// Pure renderings of a plan. `target` names where it would be applied (e.g. the emulator).
std::string render_text(const Plan& plan, const std::string& target);
std::string render_markdown(const Plan& plan, const std::string& target, size_t max_chars = 65000);
nlohmann::ordered_json render_json(const Plan& plan, const std::string& target);

// Text made safe inside a GFM table cell or list item: one line (control characters escaped), no
// cell separator, no code span or HTML of its own ('|', '`', '<', '>', '&' as entities). Values
// come from documents and from FlyteAdmin.
std::string md_escape(std::string_view text);

// "project flytesnacks", "override flytesnacks/development TASK_RESOURCE".
std::string object_name(const Step& step);

// One line per step: "+ override flytesnacks/development TASK_RESOURCE (new in Git)".
std::string step_line(const Step& step);
// "projects: +1 ~0 -0 · overrides: +3 ~1 -0 (replace 0) · adopt 2 · drift 1 · unmanaged 4".
std::string summary_line(const Plan& plan);

}  // namespace flytecd::reconcile
