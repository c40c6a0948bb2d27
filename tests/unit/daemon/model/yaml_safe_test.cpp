#include <catch2/catch.hpp>

#include "daemon/model/yaml_safe.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::model;

namespace {
Diagnostics parse(const std::string& s, Limits limits = {}) {
  Diagnostics d;
  parse_yaml_file("f.yaml", s, limits, d);
  return d;
}
}  // namespace

TEST_CASE("yaml: invalid UTF-8 is reported at its line and column", "[yaml]") {
  auto d = parse("a: 1\nb: ok\nc: \xff\xfe\n");
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagKind::non_utf8);
  CHECK(d[0].where.line == 3);
  CHECK(d[0].where.column == 4);
  CHECK(find_invalid_utf8("\xc0\xaf") == 0);      // overlong
  CHECK(find_invalid_utf8("\xed\xa0\x80") == 0);  // surrogate
  CHECK(find_invalid_utf8("h\xc3\xa9llo") == std::string_view::npos);
}

TEST_CASE("yaml: duplicate keys name both places", "[yaml]") {
  auto d = parse("a: 1\nb:\n  x: 1\n  x: 2\n");
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagKind::duplicate_key);
  CHECK(d[0].where.line == 4);
  CHECK(d[0].related.line == 3);
}

TEST_CASE("yaml: billion laughs is stopped by the expansion bound", "[yaml]") {
  std::string s = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    s += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) s += std::string(i ? ", " : "") + "*" + static_cast<char>(c - 1);
    s += "]\n";
  }
  auto d = parse(s);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagKind::alias_expansion);
}

TEST_CASE("yaml: nesting depth is bounded", "[yaml]") {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  auto d = parse("a: " + deep + "\n");
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagKind::nesting_too_deep);
  CHECK(parse("a: " + std::string(10, '[') + std::string(10, ']') + "\n").empty());
}

TEST_CASE("yaml: very deep input does not crash the parser", "[yaml]") {
  std::string deep(100000, '[');
  auto d = parse(deep);
  REQUIRE_FALSE(d.empty());
}

TEST_CASE("yaml: file size and document count bounds", "[yaml]") {
  Limits small;
  small.max_file_bytes = 10;
  auto d = parse("a: 1234567890\n", small);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagKind::file_too_large);
  Limits few;
  few.max_documents_per_file = 2;
  d = parse("a: 1\n---\nb: 2\n---\nc: 3\n", few);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagKind::too_many_documents_in_file);
  CHECK(d[0].where.line == 5);
}

TEST_CASE("yaml: tabs in indentation get their own error", "[yaml]") {
  auto d = parse("a:\n\tb: 1\n");
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagKind::tab_indentation);
  CHECK(d[0].where.line == 2);
}

TEST_CASE("yaml: syntax errors carry line and column", "[yaml]") {
  auto d = parse("a: 1\nb: \"unterminated\nc: 3\n");
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagKind::yaml_syntax);
  CHECK(d[0].where.line >= 2);
}

namespace {
// `n` documents, each a mapping of one key to a flow sequence of `items` scalars: 3 + items nodes.
std::string docs_of(int n, int items) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += i ? "---\n" : "";
    s += "k: [";
    for (int j = 0; j < items; ++j) s += j ? ",a" : "a";
    s += "]\n";
  }
  return s;
}
}  // namespace

TEST_CASE("yaml: the document over the per-file bound is refused where it starts, unread after",
          "[yaml][memory]") {
  Limits few;
  few.max_documents_per_file = 2;
  // The streaming pass stops at the third document: the syntax error after it is never reached
  // (a whole-file load would have parsed every document first).
  auto d = parse("a: 1\n---\nb: 2\n---\nc: 3\n---\nd: [unclosed\n", few);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagKind::too_many_documents_in_file);
  CHECK(d[0].where.line == 5);
  CHECK(d[0].message == "file holds more than 2 documents (document 3 starts here)");
  CHECK(d[0].expected == "at most 2 documents per file (split the file)");
}

TEST_CASE("yaml: a file's node bound is enforced before any document's tree is built",
          "[yaml][memory]") {
  Limits limits;
  limits.max_nodes_per_file = 50;
  Diagnostics d;
  int converted = 0;
  // Three documents of 23 nodes: the bound is crossed in the third, and no document (not even
  // the first two, within it) is built or handed out.
  const size_t n = for_each_yaml_document("f.yaml", docs_of(3, 20), limits, d,
                                          [&](const YamlDocument&) { ++converted; });
  CHECK(n == 0);
  CHECK(converted == 0);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagKind::too_many_nodes);
  CHECK(d[0].where.file == "f.yaml");
  CHECK(d[0].where.line == 5);
  CHECK(d[0].expected == "at most 50 nodes per file (split the file)");
  d.clear();
  CHECK(for_each_yaml_document("f.yaml", docs_of(2, 20), limits, d,
                               [&](const YamlDocument&) { ++converted; }) == 2);
  CHECK(d.empty());
  CHECK(converted == 2);
}

TEST_CASE("yaml: the revision's node budget spans files, the file that spends it is named",
          "[yaml][memory]") {
  Limits limits;
  limits.max_nodes_per_revision = 100;
  NodeBudget budget;
  Diagnostics d;
  int converted = 0;
  auto count = [&](const YamlDocument&) { ++converted; };
  CHECK(for_each_yaml_document("a.yaml", docs_of(2, 20), limits, d, count, &budget) == 2);
  CHECK(budget.spent == 46);
  CHECK(for_each_yaml_document("b.yaml", docs_of(2, 20), limits, d, count, &budget) == 2);
  CHECK(budget.spent == 92);
  CHECK(converted == 4);
  // c.yaml crosses the budget in its first document: refused before it is built.
  CHECK(for_each_yaml_document("c.yaml", docs_of(2, 20), limits, d, count, &budget) == 0);
  CHECK(converted == 4);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagKind::too_many_nodes);
  CHECK(d[0].where.file == "c.yaml");
  CHECK(d[0].where.line == 1);
  CHECK_THAT(d[0].message, Catch::Contains("the revision holds more than 100 YAML nodes") &&
                               Catch::Contains("92 in the files read before this one"));
  CHECK(budget.exhausted);
  // The files after it are not read, and add no diagnostic of their own.
  CHECK(for_each_yaml_document("d.yaml", "x: 1\n", limits, d, count, &budget) == 0);
  CHECK(d.size() == 1);
}

TEST_CASE("yaml: documents converted one at a time still report lines of the whole file",
          "[yaml]") {
  // A BOM, comments, multi-byte characters, an explicit end and an empty document before the
  // documents with problems: every location is where an editor shows it.
  const std::string s =
      "\xEF\xBB\xBF# caf\xC3\xA9 \xE2\x82\xAC\n"  // line 1
      "a: \"\xC3\xA9\xC3\xA9\xC3\xA9\"\n"         // 2
      "...\n"                                     // 3
      "---\n"                                     // 4
      "---\n"                                     // 5
      "# comment\n"                               // 6
      "b: 1\n"                                    // 7
      "c:\n"                                      // 8
      "  x: \xE2\x82\xAC\n"                       // 9
      "  x: 2\n"                                  // 10
      "--- {y: 1,\n"                              // 11
      "     y: 2}\n";                             // 12
  Diagnostics d;
  std::vector<int> lines, b_lines;
  for_each_yaml_document("f.yaml", s, Limits{}, d, [&](const YamlDocument& doc) {
    lines.push_back(doc.line);
    b_lines.push_back(
        location_of("f.yaml", doc.root["a"].IsDefined() ? doc.root["a"] : doc.root).line);
  });
  CHECK(lines == std::vector<int>{2});
  CHECK(b_lines == std::vector<int>{2});
  REQUIRE(d.size() == 2);
  CHECK(d[0].kind == DiagKind::duplicate_key);
  CHECK(d[0].where.line == 10);
  CHECK(d[0].where.column == 3);
  CHECK(d[0].related.line == 9);
  CHECK(d[1].kind == DiagKind::duplicate_key);
  CHECK(d[1].where.line == 12);
  CHECK(d[1].where.column == 6);
  CHECK(d[1].related.line == 11);
  // Outside the callback, marks are yaml-cpp's own again.
  CHECK(location_of("f.yaml", YAML::Load("\n\nz: 1")["z"]).line == 3);
}

}  // namespace FLYTECD_UNITY_ID
