#pragma once

// A protobuf message from its text format, for tests that build protos by hand; the test fails
// when the text does not parse.

#include <google/protobuf/text_format.h>

#include <catch2/catch.hpp>
#include <string>

namespace flytecd_test {

template <typename T>
T parse_textproto(const std::string& text) {
  T m;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &m));
  return m;
}

}  // namespace flytecd_test
