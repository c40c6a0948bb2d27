#include "daemon/model/documents.hpp"

#include "flyteidl/admin/matchable_resource.pb.h"

namespace flytecd::model {

std::string_view to_string(Activate a) {
  switch (a) {
    case Activate::scheduled:
      return "scheduled";
    case Activate::all:
      return "all";
    case Activate::none:
      return "none";
  }
  return "scheduled";
}

}  // namespace flytecd::model
