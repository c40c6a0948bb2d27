#pragma once

#include <ostream>
#include <string>

#include "daemon/model/loader.hpp"

namespace flytecd::cli {

struct ValidateOptions {
  std::string dir = ".";
  std::string output = "text";
  model::Policy policy;
  model::Limits limits;
};
// `flytecd validate`: 0 valid, 1 invalid or unreadable.
int run_validate(const ValidateOptions& opt, std::ostream& out, std::ostream& err);

struct GetOverridesOptions {
  std::string repo = ".";
  std::string project, domain, workflow;
  std::string output = "yaml";
  model::Policy policy;
  model::Limits limits;
};
// `flytecd get overrides`: prints the collated document; 1 when the repository is invalid.
int run_get_overrides(const GetOverridesOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace flytecd::cli
