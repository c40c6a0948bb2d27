#include "daemon/registration/package_entity.hpp"

#include "daemon/common/scan.hpp"
#include "daemon/common/text.hpp"
#include "daemon/registration/package_decode.hpp"

namespace flytecd::registration {

Error invalid_member(const std::string& name, std::string_view member, std::string_view what) {
  // A member's name is bytes from the archive (and libarchive quotes them in its own errors):
  // made valid UTF-8 here, so the message is safe in JSON, the ledger and the log (issue 27).
  std::string msg = name;
  if (!member.empty()) {
    msg += ": ";
    msg += scan::printable(member, 4096);
  }
  msg += ": ";
  msg += text::to_utf8_lossy(what);
  return make_error(ErrorCode::invalid_input, std::move(msg));
}

// The `_N.pb` suffix pyflyte writes (flytectl's `^.*_([1-3])\.pb$`).
std::optional<EntityKind> kind_from_suffix(std::string_view path) {
  if (path.size() < 5 || !path.ends_with(".pb")) return std::nullopt;
  char digit = path[path.size() - 4];
  if (path[path.size() - 5] != '_') return std::nullopt;
  switch (digit) {
    case '1':
      return EntityKind::task;
    case '2':
      return EntityKind::workflow;
    case '3':
      return EntityKind::launch_plan;
    default:
      return std::nullopt;
  }
}

namespace {

using flyteidl::core::ResourceType;

// "NN_name_4.pb", "x_12.pb": a numeric type suffix that is not _1, _2 or _3 — a stray file,
// not an entity without a suffix (which flytectl would try to decode as each kind).
bool unknown_type_suffix(std::string_view path) {
  constexpr std::string_view k_pb = ".pb";
  if (path.size() < k_pb.size() + 2 || path.substr(path.size() - k_pb.size()) != k_pb) return false;
  size_t end = path.size() - k_pb.size();
  size_t start = end;
  while (start > 0 && path[start - 1] >= '0' && path[start - 1] <= '9') --start;
  if (start == end || start == 0 || path[start - 1] != '_') return false;
  std::string_view digits = path.substr(start, end - start);
  return !(digits == "1" || digits == "2" || digits == "3");
}

std::string_view message_name(EntityKind kind) {
  switch (kind) {
    case EntityKind::task:
      return "flyteidl.admin.TaskSpec";
    case EntityKind::workflow:
      return "flyteidl.admin.WorkflowSpec";
    case EntityKind::launch_plan:
      return "flyteidl.admin.LaunchPlan";
  }
  return "?";
}

ResourceType expected_resource_type(EntityKind kind) {
  switch (kind) {
    case EntityKind::task:
      return flyteidl::core::TASK;
    case EntityKind::workflow:
      return flyteidl::core::WORKFLOW;
    case EntityKind::launch_plan:
      return flyteidl::core::LAUNCH_PLAN;
  }
  return flyteidl::core::UNSPECIFIED;
}

const google::protobuf::Descriptor& descriptor_of(EntityKind kind) {
  switch (kind) {
    case EntityKind::task:
      return *flyteidl::admin::TaskSpec::descriptor();
    case EntityKind::workflow:
      return *flyteidl::admin::WorkflowSpec::descriptor();
    case EntityKind::launch_plan:
      break;
  }
  return *flyteidl::admin::LaunchPlan::descriptor();
}

// Parses `data` as `kind` into `e`, within `guard`. nullopt: protobuf rejects the bytes (or would:
// malformed wire format is refused before decoding); an error: the decode is over its bound.
Result<bool> parse_as(EntityKind kind, std::string_view data, Entity& e, const DecodeGuard& guard,
                      const std::string& what) {
  e = Entity{};
  e.kind = kind;
  const DecodeEstimate est = estimate_decode(descriptor_of(kind), data);
  if (est.malformed) return false;
  if (auto s = check_decode(est, data.size(), guard.max_bytes, guard.max_key,
                            what + " (as " + std::string(message_name(kind)) + ")");
      !s)
    return s.error();
  if (guard.reserve)
    if (auto s = guard.reserve(est.bytes); !s) return s.error();
  const int size = static_cast<int>(data.size());
  switch (kind) {
    case EntityKind::task:
      return e.task.ParseFromArray(data.data(), size);
    case EntityKind::workflow:
      return e.workflow.ParseFromArray(data.data(), size);
    case EntityKind::launch_plan:
      return e.launch_plan.ParseFromArray(data.data(), size);
  }
  return false;
}

bool has_identifier(const Entity& e) {
  switch (e.kind) {
    case EntityKind::task:
      return e.task.has_template_() && e.task.template_().has_id();
    case EntityKind::workflow:
      return e.workflow.has_template_() && e.workflow.template_().has_id();
    case EntityKind::launch_plan:
      return e.launch_plan.has_id();
  }
  return false;
}

}  // namespace

DecodeGuard guard_for(const ReaderLimits& limits) {
  DecodeGuard g;
  g.max_bytes = limits.budget != nullptr ? limits.budget->capacity() : limits.max_decoded_bytes;
  if (limits.budget != nullptr) g.max_key = limits.budget->key();
  return g;
}

Result<Entity> decode_entity(const std::string& name, const std::string& path,
                             std::string_view data, const DecodeGuard& guard) {
  Entity e;
  const std::string what = name + ": " + path;
  auto suffix = kind_from_suffix(path);
  if (!suffix && unknown_type_suffix(path))
    return invalid_member(
        name, path,
        "has a type suffix that is not _1 (task), _2 (workflow) or _3 (launch plan); "
        "expected a pyflyte entity file named NN_name_{1,2,3}.pb");
  if (suffix) {
    std::string suffix_text = "the _" + std::to_string(static_cast<int>(*suffix) + 1) +
                              ".pb suffix means a " + std::string(to_string(*suffix));
    auto parsed = parse_as(*suffix, data, e, guard, what);
    if (!parsed) return parsed.error();
    if (!*parsed) {
      return invalid_member(name, path,
                            "cannot be decoded as " + std::string(message_name(*suffix)) + " (" +
                                suffix_text +
                                "); expected a protobuf file written by pyflyte package");
    }
    if (!has_identifier(e)) {
      return invalid_member(name, path,
                            "decodes as " + std::string(message_name(*suffix)) +
                                " but carries no identifier; expected a " +
                                std::string(to_string(*suffix)) + " written by pyflyte package");
    }
    auto want = expected_resource_type(*suffix);
    if (e.id().resource_type() != want) {
      return invalid_member(name, path,
                            suffix_text + " but the message's id.resource_type is " +
                                flyteidl::core::ResourceType_Name(e.id().resource_type()) +
                                "; expected " + flyteidl::core::ResourceType_Name(want));
    }
  } else {
    // flytectl tries Task, Workflow, LaunchPlan; protobuf decoding is lenient, so we also require
    // the embedded resource_type to agree before accepting a guess.
    bool found = false;
    for (EntityKind k : {EntityKind::task, EntityKind::workflow, EntityKind::launch_plan}) {
      auto parsed = parse_as(k, data, e, guard, what);
      if (!parsed) return parsed.error();
      if (*parsed && has_identifier(e) && e.id().resource_type() == expected_resource_type(k)) {
        found = true;
        break;
      }
    }
    if (!found) {
      return invalid_member(
          name, path,
          "has no _1/_2/_3 type suffix and does not decode as a TaskSpec, WorkflowSpec "
          "or LaunchPlan with a matching id.resource_type; expected a pyflyte entity "
          "file named NN_name_{1,2,3}.pb");
    }
  }
  if (e.id().name().empty()) {
    return invalid_member(name, path,
                          "the " + std::string(to_string(e.kind)) +
                              " identifier has an empty name; expected the entity's name");
  }
  if (e.kind == EntityKind::launch_plan) {
    if (!e.launch_plan.has_spec() || !e.launch_plan.spec().has_workflow_id()) {
      return invalid_member(name, path,
                            "launch plan " + e.id().name() +
                                " has no spec.workflow_id; expected the workflow it launches");
    }
    e.launch_plan.clear_closure();  // flytectl sends id + spec only
  }
  e.file = path;
  return e;
}

}  // namespace flytecd::registration
