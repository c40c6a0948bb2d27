#pragma once

#include <google/protobuf/message.h>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "flyteidl/admin/project_attributes.pb.h"
#include "flyteidl/admin/project_domain_attributes.pb.h"
#include "flyteidl/admin/workflow_attributes.pb.h"
#include "sinks/types.hpp"

// Request rendering for override steps: which AdminService RPC a step calls and with what
// message. Pure (no I/O); AdminSink::execute sends what these return.

namespace flytecd::sinks::flyteadmin {

// One override RPC's request. The alternative names the RPC (see rpc_name).
using OverrideRequest = std::variant<flyteidl::admin::ProjectAttributesUpdateRequest,
                                     flyteidl::admin::ProjectDomainAttributesUpdateRequest,
                                     flyteidl::admin::WorkflowAttributesUpdateRequest,
                                     flyteidl::admin::ProjectAttributesDeleteRequest,
                                     flyteidl::admin::ProjectDomainAttributesDeleteRequest,
                                     flyteidl::admin::WorkflowAttributesDeleteRequest>;

// The Update*Attributes request that writes `o` at its scope's level (project, project-domain
// or workflow), carrying its MatchingAttributes.
OverrideRequest render_override_update(const sinks::OverrideState& o);

// The Delete*Attributes request that removes `o`'s row (its scope and resource type).
OverrideRequest render_override_delete(const sinks::OverrideState& o);

// The AdminService method a request goes to ("UpdateProjectDomainAttributes").
std::string_view rpc_name(const OverrideRequest& req);

// The requests an override step sends, in order: create/update one Update, remove one Delete
// of the live row (none when nothing is live), replace a Delete then an Update, adopt none.
// Project steps are not override steps and render to none.
std::vector<OverrideRequest> render_override_step(const sinks::Step& step);

// Why `req` must not be sent, or nullopt: a project or domain that is empty where the request
// names one (its own project / domain fields, those of its id or attributes, a project's id).
// FlyteAdmin looks projects up with GORM struct queries that drop a zero value, so an empty
// project matches the first row and DeleteProjectAttributes{project: ""} deletes that attribute
// in every project; flytecd refuses to send such a request at all. Pure.
std::optional<std::string> empty_scope(const google::protobuf::Message& req);
// empty_scope of an override request, read from its typed fields (the same answer, without
// reflection: it runs for every step of an apply).
std::optional<std::string> empty_override_scope(const OverrideRequest& req);

}  // namespace flytecd::sinks::flyteadmin
