// Launch plans (FlyteAdmin launch_plan_manager.go, validation/launch_plan_validator.go).

#include <map>

#include "sinks/emulator/admin_common.hpp"
#include "sinks/emulator/cron.hpp"
#include "sinks/emulator/literal_types.hpp"
#include "sinks/emulator/wire.hpp"

namespace flytecd::sinks::emulator {
namespace {

using namespace detail;

// Go ranges over maps in random order; the emulator checks entries sorted by name, so which
// of several bad entries is reported is deterministic (FlyteAdmin may name another).
template <typename Map>
std::map<std::string, const typename Map::mapped_type*> sorted(const Map& m) {
  std::map<std::string, const typename Map::mapped_type*> out;
  for (const auto& [k, v] : m) out[k] = &v;
  return out;
}

// validation.go ValidateDatetime (timestamppb CheckValid's messages).
Status validate_datetime(const fc::Literal& literal) {
  const auto& p = literal.scalar().primitive();
  if (!p.has_datetime()) return invalid("invalid nil Timestamp");
  const auto& ts = p.datetime();
  const std::string text = "timestamp (" + go_prototext(ts) + ")";
  if (ts.seconds() < -62135596800LL) return invalid(text + " before 0001-01-01");
  if (ts.seconds() > 253402300799LL) return invalid(text + " after 9999-12-31");
  if (ts.nanos() < 0 || ts.nanos() >= 1'000'000'000)
    return invalid(text + " has out-of-range nanos");
  return ok_status();
}

bool is_datetime(const fc::Literal& l) {
  return l.has_scalar() && l.scalar().has_primitive() && l.scalar().primitive().has_datetime();
}

Error invalid_literal_type(const std::string& name, const std::string& err) {
  return invalid("Failed to validate literal type for [" + name + "] with err: " + err);
}

// validation.go validateLiteralMap. As upstream, the first datetime literal ends the check.
Status validate_literal_map(const fc::LiteralMap& m, const std::string& field) {
  for (const auto& [name, literal] : sorted(m.literals())) {
    if (name.empty()) return invalid("missing key in " + field);
    if (literal->value_case() == fc::Literal::VALUE_NOT_SET) {
      return invalid("missing valid literal in " + field + " " + name);
    }
    if (is_datetime(*literal)) return validate_datetime(*literal);
  }
  return ok_status();
}

// validation.go validateParameterMapDisableArtifacts + validateParameterMap (artifacts are off
// in FlyteAdmin's default configuration). As upstream, a DATETIME default ends the check.
Status validate_parameter_map(const fc::ParameterMap& m, const std::string& field) {
  for (const auto& [name, param] : sorted(m.parameters())) {
    if (param->has_artifact_query()) {
      return invalid("artifact mode not enabled but query found " + field + " " + name);
    }
  }
  for (const auto& [name, param] : sorted(m.parameters())) {
    if (name.empty()) return invalid("missing key in " + field);
    if (!param->has_var() || !param->var().has_type()) {
      return invalid("The Variable component of the Parameter " + name + " in " + field +
                     " either is missing, or has a missing Type");
    }
    if (!param->has_default_() && !param->has_artifact_query() && !param->required()) {
      return invalid("Invalid variable " + name + " in " + field +
                     " - variable has neither default, nor is required. One must be specified");
    }
    if (!param->has_default_()) continue;
    const auto type = literal_type_for(param->default_());
    if (auto err = literal_type_error(type); !err.empty()) return invalid_literal_type(name, err);
    if (!types_castable(*type, param->var().type())) {
      return invalid("Type mismatch for Parameter " + name + " in " + field + " has type " +
                     go_prototext(param->var().type()) + ", expected " + go_prototext(*type));
    }
    if (param->var().type().simple() == fc::DATETIME &&
        param->var().type().type_case() == fc::LiteralType::kSimple) {
      return validate_datetime(param->default_());
    }
  }
  return ok_status();
}

// launch_plan_validator.go checkAndFetchExpectedInputForLaunchPlan: the full map of inputs a
// launch plan expects, which FlyteAdmin also writes back into spec.default_inputs.
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
  for (const auto& [name, param] : sorted(defaults.parameters())) {
    auto var = vars.find(name);
    if (var == vars.end()) return invalid("unexpected default_input " + name);
    if (!types_castable(param->var().type(), var->second.type())) {
      // Upstream prints the launch plan's type as "expected" and the workflow's as "got".
      return invalid("invalid default_input wrong type " + name + ", expected " +
                     go_prototext(param->var().type()) + ", got " +
                     go_prototext(var->second.type()) + " instead");
    }
  }
  for (const auto& [name, literal] : sorted(fixed.literals())) {
    auto var = vars.find(name);
    if (var == vars.end()) return invalid("unexpected fixed_input " + name);
    const auto type = literal_type_for(*literal);
    if (auto err = literal_type_error(type); !err.empty()) return invalid_literal_type(name, err);
    if (!types_castable(*type, var->second.type())) {
      return invalid("invalid fixed_input wrong type " + name + ", expected " +
                     go_prototext(var->second.type()) + ", got " + go_prototext(*type) +
                     " instead");
    }
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

// The deprecated cron_expression is still read by FlyteAdmin.
const std::string& cron_expression(const fa::Schedule& schedule) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return schedule.cron_expression();
#pragma GCC diagnostic pop
}

// launch_plan_validator.go validateSchedule: only when a cron expression, a rate or a cron
// schedule is set; every required input except the kickoff argument must be bound, and the cron
// text must parse (robfig/cron ParseStandard).
Status validate_schedule(const fa::LaunchPlanSpec& spec, const fc::ParameterMap& expected) {
  const auto& schedule = spec.entity_metadata().schedule();
  if (cron_expression(schedule).empty() && !schedule.has_rate() && !schedule.has_cron_schedule())
    return ok_status();
  for (const auto& [name, param] : sorted(expected.parameters())) {
    if (param->required() && name != schedule.kickoff_time_input_arg()) {
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
                     "] is a [" + go_prototext(it->second.var().type()) + "]");
    }
  }
  const std::string cron = !cron_expression(schedule).empty() ? cron_expression(schedule)
                           : schedule.has_cron_schedule()     ? schedule.cron_schedule().schedule()
                                                              : std::string();
  if (!cron.empty()) {
    if (auto err = cron_parse_error(cron); !err.empty()) {
      return invalid("Invalid cron expression: " + err);
    }
  }
  return ok_status();
}

// notifications_validator.go validateNotifications.
Status validate_notifications(const google::protobuf::RepeatedPtrField<fa::Notification>& all) {
  for (const auto& n : all) {
    const google::protobuf::RepeatedPtrField<std::string>* recipients = nullptr;
    switch (n.type_case()) {
      case fa::Notification::kEmail:
        recipients = &n.email().recipients_email();
        break;
      case fa::Notification::kSlack:
        recipients = &n.slack().recipients_email();
        break;
      case fa::Notification::kPagerDuty:
        recipients = &n.pager_duty().recipients_email();
        break;
      default:
        return invalid_value("notification type");
    }
    if (recipients->empty()) return missing("recipients");
    for (const auto& r : *recipients) {
      if (r.empty()) return missing("recipient");
    }
    for (int phase : n.phases()) {
      if (phase != fc::WorkflowExecution::SUCCEEDED && phase != fc::WorkflowExecution::FAILED &&
          phase != fc::WorkflowExecution::TIMED_OUT && phase != fc::WorkflowExecution::ABORTED) {
        return invalid_value("phase");
      }
    }
  }
  return ok_status();
}

// launch_plan_validator.go ValidateLaunchPlan, after the workflow was found; returns the
// expected inputs.
Result<fc::ParameterMap> validate_launch_plan(Tx& tx, const AdminConfig& config,
                                              const fa::LaunchPlanCreateRequest& req,
                                              const fc::TypedInterface& iface) {
  const auto& spec = req.spec();
  if (auto st = validate_identifier(req.has_id() ? &req.id() : nullptr, fc::LAUNCH_PLAN); !st)
    return st.error();
  if (auto st = validate_project_and_domain(tx, config, req.id().project(), req.id().domain()); !st)
    return st.error();
  if (!req.has_spec()) return missing("spec");
  if (auto st =
          validate_identifier(spec.has_workflow_id() ? &spec.workflow_id() : nullptr, fc::WORKFLOW);
      !st)
    return st.error();
  if (auto st = validate_labels(spec.has_labels() ? &spec.labels() : nullptr); !st)
    return st.error();
  if (auto st = validate_literal_map(spec.fixed_inputs(), "fixed_inputs"); !st) return st.error();
  if (auto st = validate_parameter_map(spec.default_inputs(), "default_inputs"); !st)
    return st.error();
  auto expected = expected_inputs(iface.inputs(), spec.fixed_inputs(), spec.default_inputs());
  if (!expected) return expected.error();
  if (auto st = validate_schedule(spec, *expected); !st) return st.error();
  if (spec.has_entity_metadata()) {
    if (auto st = validate_notifications(spec.entity_metadata().notifications()); !st)
      return st.error();
    if (spec.entity_metadata().has_launch_conditions()) {
      return invalid("Launch condition must be empty, found " +
                     go_prototext(spec.entity_metadata().launch_conditions()));
    }
  }
  return expected;
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
  // launch_plan_manager.go CreateLaunchPlan: the workflow id, then the workflow, then
  // ValidateLaunchPlan against the workflow's interface.
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
    fa::Workflow wf;
    if (!parse_blob(&wf, (*wf_row)->blob)) return internal("emulator: corrupt workflow row");
    const auto& iface = wf.closure().compiled_workflow().primary().template_().interface();
    auto expected = validate_launch_plan(tx, m_config, req, iface);
    if (!expected) return expected.error();
    const EntityKey key = key_of(EntityKind::launch_plan, req.id());

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

Status Admin::get_launch_plan(const fa::ObjectGetRequest& in, fa::LaunchPlan* out) {
  // launch_plan_manager.go GetLaunchPlan returns ValidateIdentifier's error (after
  // rpc/adminservice filled in an unspecified resource type).
  const fa::ObjectGetRequest req = with_resource_type(in, fc::LAUNCH_PLAN);
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

Status Admin::update_launch_plan(const fa::LaunchPlanUpdateRequest& in,
                                 fa::LaunchPlanUpdateResponse*) {
  const fa::LaunchPlanUpdateRequest req = with_resource_type(in, fc::LAUNCH_PLAN);
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
  if (auto st = validate_token(req.token(), "ListActiveLaunchPlans"); !st) return st;
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

Status Admin::list_launch_plans(const fa::ResourceListRequest& req, std::string* wire) {
  std::string token;
  auto rows = list_entity_rows(EntityKind::launch_plan, req, &token);
  if (!rows) return rows.error();
  wire->clear();
  for (const auto& r : *rows) {
    auto lp = launch_plan_with_state(r.blob, r.state, r.updated_at_ms);
    if (!lp) {  // not the shape protobuf writes: decode it the long way
      auto decoded = decode(r);
      if (!decoded) return decoded.error();
      lp = decoded->SerializeAsString();
    }
    append_length_delimited(wire, fa::LaunchPlanList::kLaunchPlansFieldNumber, *lp);
  }
  if (!token.empty()) append_length_delimited(wire, fa::LaunchPlanList::kTokenFieldNumber, token);
  return ok_status();
}

}  // namespace flytecd::sinks::emulator
