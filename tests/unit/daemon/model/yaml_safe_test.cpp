#include <catch2/catch.hpp>

#include "daemon/model/yaml_safe.hpp"

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
