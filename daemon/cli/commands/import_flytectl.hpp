#pragma once

// `flytecd import --from-flytectl FILE... --out DIR`: flytectl attribute files
// (daemon/model/flytectl_attrs.hpp) written as a flytecd repository.

#include <ostream>
#include <string>
#include <vector>

#include "daemon/model/loader.hpp"

namespace flytecd::cli {

struct ImportFlytectlOptions {
  std::vector<std::string> files;
  std::string out_dir;
  std::string type;  // empty: inferred per file from its keys
  bool skip_invalid = false;
  model::Policy policy;
  model::Limits limits;
};

// Reads every file, reports each one (imported, skipped because FlyteAdmin cannot store it,
// invalid) on `err`, and writes the documents under out_dir unless a file is invalid (with
// skip_invalid, the invalid ones are left out). Never overwrites: a file that already exists
// under out_dir is an error and nothing is written. 0 written (or nothing to write), 1 not.
int run_import_flytectl(const ImportFlytectlOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace flytecd::cli
