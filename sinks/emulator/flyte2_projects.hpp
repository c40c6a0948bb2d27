#pragma once

// Flyte 2's ProjectService, as the server on flyteorg/flyte `main` implements it
// (runs/service/project_service.go over runs/repository/impl/project.go), internal to
// sinks/emulator: Create (AlreadyExists on a known id), Update (a full replace of name,
// description, labels and state; NotFound on an unknown id), Get, and List with the server's
// filter language (`eq`, `ne`, `contains`, `value_in` over the project columns, joined by `+`),
// sort_by, limit and an offset token; with no filter, archived projects are hidden. The org is
// not stored, and the server's domains are injected into every project it returns.

#include <string>
#include <vector>

#include "daemon/common/result.hpp"
#include "flyteidl2/project/project_service.pb.h"
#include "sinks/emulator/store.hpp"

namespace flytecd::sinks::emulator {

namespace project2 = flyteidl2::project;

// Errors as the server returns them: invalid_input (InvalidArgument), not_found,
// already_exists, internal.
class Flyte2Projects {
 public:
  Flyte2Projects(Store& store, std::vector<std::string> domains)
      : m_store(store), m_domains(std::move(domains)) {}
  Status create(const project2::CreateProjectRequest& req);
  Status update(const project2::UpdateProjectRequest& req);
  Status get(const project2::GetProjectRequest& req, project2::GetProjectResponse* out);
  Status list(const project2::ListProjectsRequest& req, project2::ListProjectsResponse* out);
  // Creates the project (ACTIVE, named as its id) unless one with that id exists, as the server
  // does with its default project at startup.
  Status seed(const std::string& id);

 private:
  void fill(const Flyte2ProjectRow& row, project2::Project* out) const;
  Store& m_store;
  std::vector<std::string> m_domains;
};

}  // namespace flytecd::sinks::emulator
