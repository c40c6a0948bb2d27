#include "daemon/common/text.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/common/json_dump.hpp"
#include "daemon/common/scan.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

namespace {
const std::string k_fffd = "\xEF\xBF\xBD";
// 200 CJK characters (3 bytes each), as a registry's error message had them.
std::string cjk(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += "\xE6\xBC\xA2";
  return s;
}
}  // namespace

TEST_CASE("text: valid_utf8 accepts UTF-8 and refuses overlong, surrogate and cut sequences",
          "[text]") {
  CHECK(text::valid_utf8(""));
  CHECK(text::valid_utf8("caf\xC3\xA9 \xE6\xBC\xA2 \xF0\x9F\x98\x80"));
  CHECK_FALSE(text::valid_utf8("caf\xE9.yaml"));       // Latin-1
  CHECK_FALSE(text::valid_utf8("\xC0\xAF"));           // overlong '/'
  CHECK_FALSE(text::valid_utf8("\xE0\x80\xAF"));       // overlong, 3 bytes
  CHECK_FALSE(text::valid_utf8("\xED\xA0\x80"));       // a UTF-16 surrogate
  CHECK_FALSE(text::valid_utf8("\xF4\x90\x80\x80"));   // past U+10FFFF
  CHECK_FALSE(text::valid_utf8("\xE6\xBC"));           // cut after 2 of 3 bytes
  CHECK_FALSE(text::valid_utf8("\x80"));               // a lone continuation byte
  CHECK_FALSE(text::valid_utf8(std::string("\xFF")));  // never in UTF-8
  // ASCII runs are checked a word at a time: a bad byte or a character at any offset in or after
  // a word, and a character cut at the end, are still seen.
  for (size_t pre = 0; pre < 20; ++pre) {
    const std::string ascii(pre, 'a');
    INFO(pre);
    CHECK(text::valid_utf8(ascii));
    CHECK_FALSE(text::valid_utf8(ascii + "\xFF" + std::string(9, 'b')));
    CHECK_FALSE(text::valid_utf8(ascii + "\x80"));
    CHECK_FALSE(text::valid_utf8(ascii + "\xE6\xBC"));
    CHECK(text::valid_utf8(ascii + "\xE6\xBC\xA2" + ascii));
    CHECK_FALSE(text::valid_utf8(ascii + "\xED\xA0\x80" + ascii));
  }
}

TEST_CASE("text: to_utf8_lossy replaces each ill-formed subpart by one U+FFFD and keeps the rest",
          "[text]") {
  CHECK(text::to_utf8_lossy("plain") == "plain");
  CHECK(text::to_utf8_lossy("caf\xE9.yaml") == "caf" + k_fffd + ".yaml");
  // A cut 3-byte character is one replacement (its maximal subpart), not two.
  CHECK(text::to_utf8_lossy("a\xE6\xBC"
                            "b") == "a" + k_fffd + "b");
  CHECK(text::to_utf8_lossy("\xC0\xAF") == k_fffd + k_fffd);
  CHECK(text::valid_utf8(text::to_utf8_lossy(std::string("\xF0\x9F\x98", 3) + "\xFF\x80")));
}

TEST_CASE("text: latin1_to_utf8 decodes every byte to the code point of its value", "[text]") {
  CHECK(text::latin1_to_utf8("caf\xE9") == "caf\xC3\xA9");
  CHECK(text::latin1_to_utf8("J\xFCrgen M\xFCller") == "J\xC3\xBCrgen M\xC3\xBCller");
  CHECK(text::latin1_to_utf8("ascii") == "ascii");
}

TEST_CASE("text: cut_utf8 never cuts a character in half, and its result is valid UTF-8",
          "[text]") {
  const std::string s = cjk(200);  // 600 bytes
  for (size_t max : {0, 1, 2, 3, 299, 300, 301, 599, 600, 1000}) {
    const std::string cut = text::cut_utf8(s, max);
    CHECK(cut.size() <= max);
    CHECK(cut.size() % 3 == 0);
    CHECK(cut.size() + 3 > std::min<size_t>(max, s.size()));  // the longest such prefix
    CHECK(text::valid_utf8(cut));
  }
  CHECK(text::cut_utf8("caf\xE9 au lait", 5) == "caf");  // "caf" + U+FFFD is 6 bytes
  CHECK(text::valid_utf8(text::cut_utf8("caf\xE9 au lait", 100)));
}

TEST_CASE("text: dump_json never throws on invalid UTF-8, plain dump() does", "[text]") {
  nlohmann::json j = {{"file", "caf\xE9.yaml"}, {"detail", cjk(100).substr(0, 299)}};
  CHECK_THROWS(j.dump());  // what every bare dump() did (type_error 316)
  std::string out;
  REQUIRE_NOTHROW(out = dump_json(j));
  CHECK(text::valid_utf8(out));
  auto back = nlohmann::json::parse(out);
  CHECK(back["file"] == "caf" + k_fffd + ".yaml");
  nlohmann::ordered_json o = {{"subject", "\xE9t\xE9"}};
  CHECK(nlohmann::json::parse(dump_json(o, 2))["subject"] == k_fffd + "t" + k_fffd);
  CHECK(dump_json(nlohmann::json("\xC3\xA9"), -1, true) == "\"\\u00e9\"");
}

TEST_CASE("text: json_string reads a string field and answers \"\" for any other type", "[text]") {
  auto j = nlohmann::json::parse(R"({"a":"x","b":7,"c":null,"d":{"e":1}})");
  CHECK(json_string(j, "a") == "x");
  CHECK(json_string(j, "b").empty());
  CHECK(json_string(j, "c").empty());
  CHECK(json_string(j, "d").empty());
  CHECK(json_string(j, "missing").empty());
  CHECK(json_string(nlohmann::json::array(), "a").empty());
}

TEST_CASE("scan: printable output is valid UTF-8: characters kept, stray bytes as hex escapes",
          "[text][scan]") {
  CHECK(scan::printable("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(scan::printable("caf\xE9.yaml") == "caf\\xe9.yaml");
  CHECK(text::valid_utf8(scan::printable(cjk(200), 301)));
}

TEST_CASE("text: the shared small helpers (hex digits, quoting, RFC 3339, lower case)", "[text]") {
  CHECK(text::hex_value('0') == 0);
  CHECK(text::hex_value('9') == 9);
  CHECK(text::hex_value('a') == 10);
  CHECK(text::hex_value('F') == 15);
  CHECK(text::hex_value('g') == -1);
  CHECK(text::hex_value('%') == -1);
  CHECK(text::quote_escaped("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(text::quote_escaped("") == "\"\"");
  CHECK(text::rfc3339_utc(0) == "1970-01-01T00:00:00Z");
  CHECK(text::rfc3339_utc(1764939845) == "2025-12-05T13:04:05Z");
  CHECK(text::rfc3339_utc_if_known(0).empty());
  CHECK(text::rfc3339_utc_if_known(-5).empty());
  CHECK(text::rfc3339_utc_if_known(1764939845) == "2025-12-05T13:04:05Z");
  CHECK(text::ascii_lower("Content-TYPE: \xC3\x89") == "content-type: \xC3\x89");
}

}  // namespace FLYTECD_UNITY_ID
