// The tree built from libyaml's events against the one yaml-cpp's YAML::Load builds from the same
// text: same node types, tags, scalars, key order (repeated keys kept), shared alias targets and
// marks (line and byte column).
#include <catch2/catch.hpp>

#include <sstream>

#include "daemon/model/yaml_build.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::model::build_yaml_document;

namespace {

// Every node, depth first, as one line: type, tag, style, mark and scalar.
void describe(const YAML::Node& n, std::ostringstream& out, int depth) {
  out << std::string(static_cast<size_t>(depth) * 2, ' ') << n.Type() << " tag=" << n.Tag()
      << " at " << n.Mark().line << ":" << n.Mark().column;
  if (n.IsScalar()) out << " '" << n.Scalar() << "'";
  if (n.IsMap() || n.IsSequence()) out << " style=" << n.Style();
  out << "\n";
  if (n.IsSequence()) {
    for (const auto& child : n) describe(child, out, depth + 1);
  } else if (n.IsMap()) {
    for (const auto& kv : n) {
      describe(kv.first, out, depth + 1);
      describe(kv.second, out, depth + 2);
    }
  }
}

std::string tree(const YAML::Node& n) {
  std::ostringstream out;
  describe(n, out, 0);
  return out.str();
}

}  // namespace

TEST_CASE("yaml build: the tree equals yaml-cpp's YAML::Load of the same text", "[yaml][model]") {
  const char* docs[] = {
      "apiVersion: flytecd/v1\nkind: Overrides\nspec:\n  taskResources:\n    defaults: {cpu: "
      "\"1\", memory: 1Gi}\n",
      "plain: value\nsingle: 'quoted'\ndouble: \"esc\\taped \\u00e9\"\nliteral: |\n  two\n  "
      "lines\nfolded: >-\n  folded\n  text\n",
      "a: ~\nb: null\nc: Null\nd: NULL\nf: ''\ng: \"null\"\nh: !!null null\ne: x\n",
      "explicit: !!str 123\ncustom: !mine x\nbare: ! y\nseq: !!seq [1, 2]\n",
      "base: &b {cpu: 1, memory: 2}\nother: *b\nlist: &l\n  - x\n  - y\nagain: *l\n",
      "dup: 1\ndup: 2\nnested:\n  k: a\n  k: b\n",
      "key:\n- indentless\n- sequence\n? complex key\n: complex value\n",
      "# comment\n---\nafter: marker\n...\n",
      "café: ünïcode\nkey: [é, ü, {ñ: value}]\n  # trailing\n",
      "\xEF\xBB\xBF"
      "bom: first\nsecond: 2\n",
      "flow: {a: [1, {b: c}], d: e}\nempty_map: {}\nempty_seq: []\n",
      "- 1\n- - 2\n  - 3\n- {x: y}\n",
      "just a scalar\n",
      "",
      "~\n",
  };
  for (const char* text : docs) {
    INFO(text);
    auto built = build_yaml_document(text);
    REQUIRE(built.ok);
    CHECK(tree(built.root) == tree(YAML::Load(text)));
  }
}

TEST_CASE("yaml build: an empty value is Null, marked just after its key's colon",
          "[yaml][model]") {
  // The one mark that differs from yaml-cpp's on purpose: yaml-cpp marks an empty value at the
  // token after it (here the next line); libyaml where the value is missing.
  auto built = build_yaml_document("a: 1\ne:\nf: 2\n");
  REQUIRE(built.ok);
  CHECK(built.root["e"].IsNull());
  CHECK(built.root["e"].Mark().line == 1);
  CHECK(built.root["e"].Mark().column == 2);
  CHECK(YAML::Load("a: 1\ne:\nf: 2\n")["e"].Mark().line == 2);
}

TEST_CASE("yaml build: an alias is the node its anchor names", "[yaml][model]") {
  auto built = build_yaml_document("a: &x {k: v}\nb: *x\n");
  REQUIRE(built.ok);
  CHECK(built.root["a"].is(built.root["b"]));
  CHECK(built.root["b"]["k"].as<std::string>() == "v");
}

TEST_CASE("yaml build: an alias to no anchor is an error at the alias", "[yaml][model]") {
  auto built = build_yaml_document("a: 1\nb: *nowhere\n");
  REQUIRE_FALSE(built.ok);
  CHECK(built.error == "the referenced anchor 'nowhere' is not defined");
  CHECK(built.error_mark.line == 1);
  CHECK(built.error_mark.column == 3);
}

TEST_CASE("yaml build: only the first document is built", "[yaml][model]") {
  auto built = build_yaml_document("first: 1\n---\nsecond: 2\n");
  REQUIRE(built.ok);
  CHECK(built.root["first"].as<int>() == 1);
  CHECK_FALSE(built.root["second"]);
}

}  // namespace FLYTECD_UNITY_ID
