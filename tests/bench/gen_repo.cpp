// Writes a synthetic flytecd repository for benchmarks and scale tests.
//
//   flytecd_gen_repo OUT_DIR [--projects N] [--workflows-per-project W] [--docs-per-file D]
//
// Per project: one Project document, one project-level, three project-domain and W workflow-level
// Overrides documents (workflows spread over the domains), each with 2-4 attribute types chosen
// deterministically from the index. Prints the counts it wrote.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {
const char* k_domains[] = {"development", "staging", "production"};

// Project-scope documents get clusterAssignment instead of pluginOverrides, which FlyteAdmin cannot
// store at project scope (validate refuses them).
std::string attributes(size_t i, bool project_scope) {
  std::string s = "spec:\n";
  size_t n = 2 + i % 3;  // 2..4 types
  const std::vector<std::string> types = {
      "  taskResourceAttributes:\n    defaults: {cpu: \"" + std::to_string(1 + i % 4) +
          "\", memory: " + std::to_string(256 + (i % 8) * 128) + "Mi}\n    limits: {cpu: \"" +
          std::to_string(4 + i % 4) + "\", memory: 8Gi}\n",
      "  workflowExecutionConfig:\n    maxParallelism: " + std::to_string(5 + i % 20) +
          "\n    labels: {values: {team: team-" + std::to_string(i % 50) + "}}\n",
      "  pluginOverrides:\n    overrides: [{taskType: spark, pluginId: [spark-" +
          std::to_string(i % 3) + "]}]\n",
      "  executionClusterLabel:\n    value: cluster-" + std::to_string(i % 5) + "\n",
      "  executionQueueAttributes:\n    tags: [q-" + std::to_string(i % 11) + "]\n",
  };
  for (size_t k = 0; k < n; ++k) {
    const size_t t = (i + k) % types.size();
    s += project_scope && t == 2
             ? "  clusterAssignment:\n    clusterPoolName: pool-" + std::to_string(i % 4) + "\n"
             : types[t];
  }
  return s;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: %s OUT_DIR [--projects N] [--workflows-per-project W] [--docs-per-file D]\n",
        argv[0]);
    return 2;
  }
  std::filesystem::path out = argv[1];
  size_t projects = 100, wf_per_project = 2, docs_per_file = 50;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    size_t v = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--projects")
      projects = v;
    else if (flag == "--workflows-per-project")
      wf_per_project = v;
    else if (flag == "--docs-per-file")
      docs_per_file = v ? v : 1;
  }
  std::filesystem::create_directories(out);
  size_t docs = 0, files = 0, overrides = 0, scopes = 0;
  std::ofstream f;
  size_t in_file = docs_per_file;
  auto emit = [&](const std::string& doc) {
    if (in_file == docs_per_file) {
      if (f.is_open()) f.close();
      f.open(out / ("part-" + std::to_string(files++) + ".yaml"));
      in_file = 0;
    } else {
      f << "---\n";
    }
    f << doc;
    ++in_file;
    ++docs;
  };
  for (size_t p = 0; p < projects; ++p) {
    std::string id = "proj-" + std::to_string(p);
    emit("apiVersion: flytecd/v1\nkind: Project\nid: " + id + "\nname: Project " +
         std::to_string(p) + "\nlabels: {tier: t" + std::to_string(p % 3) + "}\n");
    auto scope_doc = [&](const std::string& domain, const std::string& wf, size_t idx) {
      std::string d = "apiVersion: flytecd/v1\nkind: Overrides\nproject: " + id + "\n";
      if (!domain.empty()) d += "domain: " + domain + "\n";
      if (!wf.empty()) d += "workflow: " + wf + "\n";
      overrides += 2 + idx % 3;
      ++scopes;
      emit(d + attributes(idx, domain.empty()));
    };
    scope_doc("", "", p);
    for (size_t d = 0; d < 3; ++d) scope_doc(k_domains[d], "", p * 3 + d);
    for (size_t w = 0; w < wf_per_project; ++w)
      scope_doc(k_domains[w % 3], "pipelines.wf_" + std::to_string(w) + ".main", p * 7 + w);
  }
  std::printf(
      "wrote %zu documents in %zu files: %zu projects, %zu scopes, %zu (scope, type) overrides\n",
      docs, files, projects, scopes, overrides);
  return 0;
}
