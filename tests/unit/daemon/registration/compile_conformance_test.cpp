// flytepropeller's own compiler test data (tests/conformance/flytepropeller, see its README)
// compiled by flytecd: each file must reach the outcome expected.tsv records for it, which is
// what upstream's compiler_test.go asserts.
#include <google/protobuf/util/json_util.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/registration/compile.hpp"
#include "daemon/registration/hydrate.hpp"
#include "daemon/registration/package.hpp"
#include "flyteidl/core/dynamic_job.pb.h"
#include "flyteidl/core/workflow_closure.pb.h"
#include "sinks/workflow_compiler.hpp"
#include "test_paths.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
namespace fs = std::filesystem;
namespace fa = flyteidl::admin;
namespace fc = flyteidl::core;
namespace comp = flytecd::sinks::compiler;

namespace {

const fs::path k_corpus = fs::path(FLYTECD_SOURCE_DIR) / "tests" / "conformance" / "flytepropeller";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Row {
  std::string file, kind, upstream, expected;
};

std::vector<Row> expected_rows() {
  std::vector<Row> rows;
  std::istringstream in(slurp(k_corpus / "expected.tsv"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    Row r;
    std::istringstream f(line);
    std::getline(f, r.file, '\t');
    std::getline(f, r.kind, '\t');
    std::getline(f, r.upstream, '\t');
    std::getline(f, r.expected, '\t');
    rows.push_back(r);
  }
  return rows;
}

template <typename T>
T from_json(const fs::path& p) {
  T m;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;  // a newer upstream may carry fields this IDL lacks
  const auto st = google::protobuf::util::JsonStringToMessage(slurp(p), &m, opts);
  INFO(p.string() << ": " << st.ToString());
  REQUIRE(st.ok());
  return m;
}

// The errors of compiling the tasks, then the workflow against them (all references present).
std::vector<std::string> compile_closure(
    const google::protobuf::RepeatedPtrField<fc::TaskTemplate>& tasks,
    const fa::WorkflowSpec& spec) {
  std::vector<std::string> errors;
  comp::References refs;
  for (const auto& t : tasks) {
    for (const auto& i : comp::compile_task(t))
      errors.push_back("task " + t.id().name() + ": " + i.text);
    refs.tasks[comp::id_key(t.id())] = t.interface();
  }
  for (const auto& i : comp::compile_workflow(spec, refs))
    if (!i.warning) errors.push_back(i.code + ": " + i.text);
  return errors;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += "\n  " + e;
  return s;
}

}  // namespace

TEST_CASE("conformance: flytepropeller's compiler test data compiles as upstream expects",
          "[compile][conformance]") {
  const auto rows = expected_rows();
  REQUIRE(rows.size() >= 14);
  int checked = 0;
  for (const auto& row : rows) {
    INFO(row.file << " (upstream " << row.upstream << ")");
    REQUIRE(row.expected == "compiles");  // the corpus holds no expected failure yet
    std::vector<std::string> errors;
    if (row.kind == "package") {
      auto pkg = registration::read_package(slurp(k_corpus / row.file), row.file);
      INFO((pkg ? std::string() : pkg.error().message));
      REQUIRE(pkg.ok());
      auto report = registration::compile_package(*pkg, row.file);
      errors = report.errors;
      CHECK(report.warnings.empty());
      // Hydrated as a registration would be: still compiles.
      registration::HydrateParams p;
      p.project = "flytesnacks";
      p.domain = "development";
      p.version = "v1";
      REQUIRE(registration::hydrate(*pkg, p).ok());
      const auto hydrated = registration::compile_package(*pkg, row.file);
      errors.insert(errors.end(), hydrated.errors.begin(), hydrated.errors.end());
    } else if (row.kind == "workflow_closure") {
      const auto closure = from_json<fc::WorkflowClosure>(k_corpus / row.file);
      fa::WorkflowSpec spec;
      *spec.mutable_template_() = closure.workflow();
      errors = compile_closure(closure.tasks(), spec);
    } else if (row.kind == "dynamic_job_spec") {
      // TestDynamic: the nodes under a template with outputs {o0: List[INTEGER]}.
      const auto job = from_json<fc::DynamicJobSpec>(k_corpus / row.file);
      fa::WorkflowSpec spec;
      auto* t = spec.mutable_template_();
      t->mutable_id()->set_domain("domain");
      t->mutable_id()->set_name("name");
      t->mutable_id()->set_version("version");
      (*t->mutable_interface()->mutable_outputs()->mutable_variables())["o0"]
          .mutable_type()
          ->mutable_collection_type()
          ->set_simple(fc::INTEGER);
      *t->mutable_nodes() = job.nodes();
      *t->mutable_outputs() = job.outputs();
      *spec.mutable_sub_workflows() = job.subworkflows();
      errors = compile_closure(job.tasks(), spec);
    } else {
      FAIL("unknown corpus kind " << row.kind);
    }
    INFO("errors:" << joined(errors));
    CHECK(errors.empty());
    ++checked;
  }
  CHECK(checked == static_cast<int>(rows.size()));
}

}  // namespace FLYTECD_UNITY_ID
