#include "daemon/common/base64.hpp"

#include <catch2/catch.hpp>
#include <string>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using flytecd::base64::decode;
using flytecd::base64::encode;
using flytecd::base64::Padding;

TEST_CASE("base64: RFC 4648 vectors encode padded and decode in both modes", "[base64]") {
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, coded] : vectors) {
    CHECK(encode(plain) == coded);
    CHECK(decode(coded, Padding::required) == plain);
    CHECK(decode(coded, Padding::optional) == plain);
  }
  const std::string all = [] {
    std::string s;
    for (int c = 0; c < 256; ++c) s.push_back(static_cast<char>(c));
    return s;
  }();
  CHECK(decode(encode(all), Padding::required) == all);
}

TEST_CASE("base64: required padding as Go's StdEncoding, optional as known_hosts and Docker config",
          "[base64]") {
  // Unpadded: only the optional mode takes it.
  CHECK_FALSE(decode("Zg", Padding::required));
  CHECK(decode("Zg", Padding::optional) == "f");
  CHECK(decode("Zm8", Padding::optional) == "fo");
  // Malformed in both modes: a lone trailing character, a character outside the alphabet,
  // '=' inside the text.
  for (const char* bad : {"Zm9vY", "Zm9v!A==", "Zm-v", "Zm_v", "Z=9v"}) {
    INFO(bad);
    CHECK_FALSE(decode(bad, Padding::required));
    CHECK_FALSE(decode(bad, Padding::optional));
  }
  // Three '=' or padding that does not end a quad: refused where padding is required.
  CHECK_FALSE(decode("Z===", Padding::required));
  CHECK_FALSE(decode("====", Padding::required));
  // Where padding is written it must be right, in both modes.
  for (const char* bad : {"====", "Zg===", "Zg=", "Zm8==", "Zg==="}) {
    INFO(bad);
    CHECK_FALSE(decode(bad, Padding::optional));
  }
  CHECK_FALSE(decode("Zg=", Padding::required));
  CHECK_FALSE(decode("Zm8=Zm8=", Padding::required));
}

}  // namespace FLYTECD_UNITY_ID
