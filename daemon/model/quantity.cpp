#include "daemon/model/quantity.hpp"

#include <cctype>
#include <cmath>

namespace flytecd::model {

std::optional<Quantity> parse_quantity(const std::string& text) {
  size_t i = 0;
  const size_t n = text.size();
  bool negative = false;
  if (i < n && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  size_t digits_start = i;
  long double mantissa = 0;
  int digits = 0;
  while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) {
    mantissa = mantissa * 10 + (text[i++] - '0');
    ++digits;
  }
  if (i < n && text[i] == '.') {
    ++i;
    long double scale = 0.1L;
    while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) {
      mantissa += (text[i++] - '0') * scale;
      scale /= 10;
      ++digits;
    }
  }
  if (digits == 0 || i == digits_start) return std::nullopt;
  std::string suffix = text.substr(i);
  long double mult = 1;
  if (suffix.empty()) {
    mult = 1;
  } else if (suffix == "Ki")
    mult = 1024.0L;
  else if (suffix == "Mi")
    mult = std::pow(1024.0L, 2);
  else if (suffix == "Gi")
    mult = std::pow(1024.0L, 3);
  else if (suffix == "Ti")
    mult = std::pow(1024.0L, 4);
  else if (suffix == "Pi")
    mult = std::pow(1024.0L, 5);
  else if (suffix == "Ei")
    mult = std::pow(1024.0L, 6);
  else if (suffix == "n")
    mult = 1e-9L;
  else if (suffix == "u")
    mult = 1e-6L;
  else if (suffix == "m")
    mult = 1e-3L;
  else if (suffix == "k")
    mult = 1e3L;
  else if (suffix == "M")
    mult = 1e6L;
  else if (suffix == "G")
    mult = 1e9L;
  else if (suffix == "T")
    mult = 1e12L;
  else if (suffix == "P")
    mult = 1e15L;
  else if (suffix == "E")
    mult = 1e18L;
  else if (suffix[0] == 'e' || suffix[0] == 'E') {
    size_t j = 1;
    bool neg_exp = false;
    if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) neg_exp = suffix[j++] == '-';
    if (j >= suffix.size()) return std::nullopt;
    int exp = 0;
    for (; j < suffix.size(); ++j) {
      if (!std::isdigit(static_cast<unsigned char>(suffix[j]))) return std::nullopt;
      exp = exp * 10 + (suffix[j] - '0');
      if (exp > 400) return std::nullopt;
    }
    mult = std::pow(10.0L, neg_exp ? -exp : exp);
  } else {
    return std::nullopt;
  }
  Quantity q;
  q.value = (negative ? -mantissa : mantissa) * mult;
  return q;
}

}  // namespace flytecd::model
