#pragma once

// What the pass tests build their inputs from: projects with an execution-cluster label in the
// development domain, the same as a live row, and one pass through an in-memory sink and ledger.

#include <string>
#include <vector>

#include "daemon/pass/pass.hpp"
#include "tests/unit/sinks/memory_sink.hpp"

namespace pass_test {

namespace fc = flytecd;

// Project `project`'s development-domain EXECUTION_CLUSTER_LABEL, as Git declares it.
inline fc::model::Override label(const std::string& project, const std::string& value) {
  fc::model::Override o;
  o.scope = fc::model::Scope{project, "development", ""};
  o.type = flyteidl::admin::EXECUTION_CLUSTER_LABEL;
  o.value.edit([&](auto& v) { v.mutable_execution_cluster_label()->set_value(value); });
  return o;
}

// The same attribute at `scope`, as observed or planned.
inline fc::reconcile::OverrideState label_state(const fc::model::Scope& scope,
                                                const std::string& value) {
  fc::reconcile::OverrideState o;
  o.scope = scope;
  o.type = flyteidl::admin::EXECUTION_CLUSTER_LABEL;
  o.value.mutable_execution_cluster_label()->set_value(value);
  return o;
}

// The named projects, each with its label.
inline fc::model::Documents documents(const std::vector<std::string>& projects,
                                      const std::string& value) {
  fc::model::Documents d;
  for (const auto& id : projects) {
    d.projects.push_back(fc::model::ProjectDoc{id, "P " + id, "", {}, false, {}});
    d.overrides.push_back(label(id, value));
  }
  d.document_count = d.projects.size() + d.overrides.size();
  return d;
}

// Projects p0..p<n-1>, each with its label.
inline fc::model::Documents documents(int projects, const std::string& value = "blue") {
  std::vector<std::string> ids;
  for (int i = 0; i < projects; ++i) ids.push_back("p" + std::to_string(i));
  return documents(ids, value);
}

// Options for a pass in `mode` with two workers.
inline fc::pass::Options options(fc::pass::Mode mode) {
  fc::pass::Options o;
  o.mode = mode;
  o.parallelism = 2;
  return o;
}

// One pass of revision "rev" through `sink` and `ledger`.
inline fc::pass::Report run_pass(fc::testing::MemorySink& sink, fc::ledger::Ledger& ledger,
                                 const fc::model::Documents& docs, const fc::pass::Options& o,
                                 const std::string& subject = "") {
  fc::pass::Wiring w;
  w.sink = &sink;
  w.ledger = &ledger;
  w.target = "memory";
  return fc::pass::run(fc::pass::Revision{"rev", subject, &docs, "", 0}, w, o);
}

}  // namespace pass_test
