#include "daemon/common/digest.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;

namespace {
constexpr const char* k_empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* k_abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
}  // namespace

TEST_CASE("digest: sha256_hex matches the FIPS 180-2 vectors", "[digest]") {
  CHECK(digest::sha256_hex("") == k_empty);
  CHECK(digest::sha256_hex("abc") == k_abc);
  CHECK(digest::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(digest::to_hex(digest::sha256("abc")) == k_abc);
}

TEST_CASE("digest: the streaming hasher equals the one-shot digest however input is split",
          "[digest]") {
  const std::string data(10000, 'x');
  digest::Sha256 h;
  for (size_t i = 0; i < data.size(); i += 7) h.update(std::string_view(data).substr(i, 7));
  CHECK(h.finish_hex() == digest::sha256_hex(data));
  // finish() starts over: the next digest covers only what follows.
  h.update("a", 1);
  h.update(nullptr, 0);
  h.update("bc");
  CHECK(h.finish_hex() == k_abc);
  CHECK(h.finish_hex() == k_empty);
  h.update("discarded");
  h.reset();
  CHECK(h.finish() == digest::sha256(""));
}

TEST_CASE("digest: to_hex writes two lower-case digits a byte", "[digest]") {
  const unsigned char bytes[] = {0x00, 0x0f, 0xa0, 0xff, 0x42};
  CHECK(digest::to_hex(bytes) == "000fa0ff42");
  CHECK(digest::to_hex({}) == "");
}

}  // namespace FLYTECD_UNITY_ID
