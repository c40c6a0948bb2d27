// Launch plans (FlyteAdmin launch_plan_manager.go, validation/launch_plan_validator.go).

#include "sinks/emulator/admin_common.hpp"

namespace flytecd::sinks::emulator {
namespace {

using namespace detail;

// checkAndFetchExpectedInputForLaunchPlan (without type-castability checks): the full map of
// inputs a launch plan expects, which FlyteAdmin also writes back into spec.default_inputs.
Result<fc::ParameterMap> expected_inputs(const fc::VariableMap& workflow_inputs,
                                         const fc::LiteralMap& fixed,
                                         const fc::ParameterMap& defaults) {
  fc::ParameterMap expected;
  const auto& vars = workflow_inputs.variables();
  if (vars.empty()) {
    if (!defaults.parameters().empty()) {
      return invalid("invalid launch plan default inputs, expected none but found " +
                     std::to_string(defaults.parameters().size()));
    }
    if (!fixed.literals().empty()) {
      return invalid("invalid launch plan fixed inputs, expected none but found " +
                     std::to_string(fixed.literals().size()));
    }
    return expected;
  }
  for (const auto& [name, param] : defaults.parameters()) {
    if (!vars.count(name)) return invalid("unexpected default_input " + name);
  }
  for (const auto& [name, literal] : fixed.literals()) {
    if (!vars.count(name)) return invalid("unexpected fixed_input " + name);
  }
  for (const auto& [name, var] : vars) {
    auto def = defaults.parameters().find(name);
    if (def != defaults.parameters().end()) {
      (*expected.mutable_parameters())[name] = def->second;
    } else if (!fixed.literals().count(name)) {
      fc::Parameter p;
      *p.mutable_var()->mutable_type() = var.type();
      p.mutable_var()->set_description(var.description());
      p.set_required(true);
      (*expected.mutable_parameters())[name] = std::move(p);
    }
  }
  return expected;
}

// validateSchedule: every required input except the kickoff argument must be bound.
Status validate_schedule(const fa::LaunchPlanSpec& spec, const fc::ParameterMap& expected) {
  if (!spec.entity_metadata().has_schedule()) return ok_status();
  const auto& schedule = spec.entity_metadata().schedule();
  for (const auto& [name, param] : expected.parameters()) {
    if (param.required() && name != schedule.kickoff_time_input_arg()) {
      return invalid(
          "Cannot create a launch plan with a schedule if there is an unbound required "
          "input. [" +
          name + "] is required");
    }
  }
  const auto& kickoff = schedule.kickoff_time_input_arg();
  if (!kickoff.empty()) {
    auto it = expected.parameters().find(kickoff);
    if (it == expected.parameters().end()) {
      return invalid(
          "Cannot create a schedule with a KickoffTimeInputArg that does not point to a "
          "free input. [" +
          kickoff + "] is not free or does not exist.");
    }
    if (it->second.var().type().simple() != fc::DATETIME) {
      return invalid("KickoffTimeInputArg must reference a datetime input. [" + kickoff +
                     "] is a [" + it->second.var().type().ShortDebugString() + "]");
    }
  }
  return ok_status();
}

Result<fa::LaunchPlan> decode(const EntityRow& row) {
  fa::LaunchPlan lp;
  if (!parse_blob(&lp, row.blob)) return internal("emulator: corrupt launch plan row");
  // The state column is authoritative; the blob holds the closure as of creation.
  lp.mutable_closure()->set_state(static_cast<fa::LaunchPlanState>(row.state));
  set_timestamp(lp.mutable_closure()->mutable_updated_at(), row.updated_at_ms);
  return lp;
}

}  // namespace

Status Admin::create_launch_plan(const fa::LaunchPlanCreateRequest& req,
                                 fa::LaunchPlanCreateResponse*) {
  const auto& spec = req.spec();
  if (auto st =
          validate_identifier(spec.has_workflow_id() ? &spec.workflow_id() : nullptr, fc::WORKFLOW);
      !st) {
    return st;
  }
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    const EntityKey wf_key = key_of(EntityKind::workflow, spec.workflow_id());
    auto wf_row = tx.get_entity(wf_key);
    if (!wf_row) return wf_row.error();
    if (!wf_row->has_value()) return missing_entity(wf_key);
    if (auto st = validate_identifier(req.has_id() ? &req.id() : nullptr, fc::LAUNCH_PLAN); !st) {
      return st;
    }
    const EntityKey key = key_of(EntityKind::launch_plan, req.id());
    if (auto st = validate_project_and_domain(tx, m_config, key.project, key.domain); !st)
      return st;
    if (!req.has_spec()) return missing("spec");
    if (spec.entity_metadata().has_launch_conditions()) {
      return invalid("launch condition must be empty, found " +
                     spec.entity_metadata().launch_conditions().ShortDebugString());
    }

    fa::Workflow wf;
    if (!parse_blob(&wf, (*wf_row)->blob)) return internal("emulator: corrupt workflow row");
    const auto& iface = wf.closure().compiled_workflow().primary().template_().interface();
    auto expected = expected_inputs(iface.inputs(), spec.fixed_inputs(), spec.default_inputs());
    if (!expected) return expected.error();
    if (auto st = validate_schedule(spec, *expected); !st) return st;

    fa::LaunchPlan lp;
    *lp.mutable_id() = identifier_of(key);
    *lp.mutable_spec() = spec;
    *lp.mutable_spec()->mutable_default_inputs() = *expected;  // FlyteAdmin mutates the spec
    *lp.mutable_closure()->mutable_expected_inputs() = *expected;
    *lp.mutable_closure()->mutable_expected_outputs() = iface.outputs();
    const std::string digest = digest_of(lp);

    auto existing = tx.get_entity(key);
    if (!existing) return existing.error();
    if (existing->has_value()) {
      if ((*existing)->digest == digest) {
        return make_error(ErrorCode::already_exists,
                          "launch plan with identical structure already exists");
      }
      fa::LaunchPlan old;
      if (!parse_blob(&old, (*existing)->blob))
        return internal("emulator: corrupt launch plan row");
      return invalid(key.name +
                     " launch plan with different structure already exists. (Please register a "
                     "new version of the launch plan):\n" +
                     structure_diff(old.spec(), lp.spec()));
    }
    const int64_t now = now_ms();
    lp.mutable_closure()->set_state(fa::INACTIVE);  // creation never activates
    set_timestamp(lp.mutable_closure()->mutable_created_at(), now);
    set_timestamp(lp.mutable_closure()->mutable_updated_at(), now);
    return tx.insert_entity(EntityRow{key, serialize(lp), digest, fa::INACTIVE, now, now, 0});
  });
}

Status Admin::get_launch_plan(const fa::ObjectGetRequest& req, fa::LaunchPlan* out) {
  // launch_plan_manager.go GetLaunchPlan returns ValidateIdentifier's error.
  if (auto st = validate_identifier(req.has_id() ? &req.id() : nullptr, fc::LAUNCH_PLAN); !st)
    return st;
  const EntityKey key = key_of(EntityKind::launch_plan, req.id());
  return in_tx(m_store, false, [&](Tx& tx) -> Status {
    auto row = tx.get_entity(key);
    if (!row) return row.error();
    if (!row->has_value()) return missing_entity(key);
    auto lp = decode(**row);
    if (!lp) return lp.error();
    *out = std::move(*lp);
    return ok_status();
  });
}

Status Admin::update_launch_plan(const fa::LaunchPlanUpdateRequest& req,
                                 fa::LaunchPlanUpdateResponse*) {
  const EntityKey key = key_of(EntityKind::launch_plan, req.id());
  if (req.state() == fa::INACTIVE) {
    // Only the INACTIVE path re-validates the identifier (so resource_type must be set).
    if (auto st = validate_identifier(req.has_id() ? &req.id() : nullptr, fc::LAUNCH_PLAN); !st) {
      return st;
    }
  } else if (req.state() != fa::ACTIVE) {
    return invalid("Unrecognized launch plan state " + std::to_string(req.state()) +
                   " for update for launch plan [" + proto_text(req.id()) + "]");
  }
  return in_tx(m_store, true, [&](Tx& tx) -> Status {
    auto row = tx.get_entity(key);
    if (!row) return row.error();
    if (!row->has_value()) return missing_entity(key);
    const int64_t now = now_ms();
    if (req.state() == fa::ACTIVE) {
      // SetActive: the previously active version (if any) goes INACTIVE in the same transaction.
      auto cleared = tx.clear_state(key, fa::ACTIVE, now);
      if (!cleared) return cleared.error();
    }
    return tx.set_entity_state(key, req.state(), now);
  });
}

Status Admin::get_active_launch_plan(const fa::ActiveLaunchPlanRequest& req, fa::LaunchPlan* out) {
  const auto& id = req.id();
  if (id.project().empty()) return missing("project");
  if (id.domain().empty()) return missing("domain");
  if (id.name().empty()) return missing("name");
  return in_tx(m_store, false, [&](Tx& tx) -> Status {
    auto rows = tx.entities_with_state(EntityKind::launch_plan, id.project(), id.domain(),
                                       id.name(), fa::ACTIVE);
    if (!rows) return rows.error();
    if (rows->empty()) {
      return not_found("No active launch plan could be found: " + id.project() + ":" + id.domain() +
                       ":" + id.name());
    }
    auto lp = decode(rows->front());
    if (!lp) return lp.error();
    *out = std::move(*lp);
    return ok_status();
  });
}

Status Admin::list_active_launch_plans(const fa::ActiveLaunchPlanListRequest& req,
                                       fa::LaunchPlanList* out) {
  if (req.project().empty()) return missing("project");
  if (req.domain().empty()) return missing("domain");
  if (req.limit() == 0) return invalid_value("limit");
  return in_tx(m_store, false, [&](Tx& tx) -> Status {
    auto rows = tx.entities_with_state(EntityKind::launch_plan, req.project(), req.domain(), "",
                                       fa::ACTIVE);
    if (!rows) return rows.error();
    auto token = apply_list(
        *rows, "", req.has_sort_by() ? &req.sort_by() : nullptr, req.limit(), req.token(),
        [](const EntityRow& r, const std::string& f) -> std::optional<std::string> {
          if (f == "name") return r.key.name;
          if (f == "version") return r.key.version;
          if (f == "created_at") return pad_number(r.created_at_ms);
          if (f == "updated_at") return pad_number(r.updated_at_ms);
          return std::nullopt;
        });
    if (!token) return token.error();
    for (const auto& r : *rows) {
      auto lp = decode(r);
      if (!lp) return lp.error();
      *out->add_launch_plans() = std::move(*lp);
    }
    out->set_token(*token);
    return ok_status();
  });
}

Status Admin::list_launch_plans(const fa::ResourceListRequest& req, fa::LaunchPlanList* out) {
  auto rows = list_entity_rows(EntityKind::launch_plan, req, out->mutable_token());
  if (!rows) return rows.error();
  for (const auto& r : *rows) {
    auto lp = decode(r);
    if (!lp) return lp.error();
    *out->add_launch_plans() = std::move(*lp);
  }
  return ok_status();
}

}  // namespace flytecd::sinks::emulator
