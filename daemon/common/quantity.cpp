#include "daemon/common/quantity.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <vector>

namespace flytecd::quantity {

namespace {

constexpr size_t k_max_digits = 100;

// Little-endian base-10^9 unsigned integer: just enough arithmetic for exact comparison.
using Big = std::vector<uint32_t>;

void mul_small(Big& b, uint32_t m) {
  uint64_t carry = 0;
  for (auto& limb : b) {
    uint64_t v = uint64_t{limb} * m + carry;
    limb = static_cast<uint32_t>(v % 1'000'000'000u);
    carry = v / 1'000'000'000u;
  }
  while (carry) {
    b.push_back(static_cast<uint32_t>(carry % 1'000'000'000u));
    carry /= 1'000'000'000u;
  }
}

Big scaled(const Quantity& q, int exp10) {
  Big b;
  for (size_t end = q.digits.size(); end > 0;) {
    size_t start = end >= 9 ? end - 9 : 0;
    b.push_back(static_cast<uint32_t>(std::stoul(q.digits.substr(start, end - start))));
    end = start;
  }
  for (int i = 0; i < exp10; i += 9)
    mul_small(
        b, i + 9 <= exp10 ? 1'000'000'000u : [&] {
          uint32_t p = 1;
          for (int k = i; k < exp10; ++k) p *= 10;
          return p;
        }());
  for (int i = 0; i < q.exp2; i += 10) mul_small(b, 1u << std::min(10, q.exp2 - i));
  while (!b.empty() && b.back() == 0) b.pop_back();
  return b;
}

int compare_magnitude(const Big& a, const Big& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (size_t i = a.size(); i-- > 0;)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

// Decimal strings of non-negative integers without leading zeros ("" = 0): the few operations
// Value() and String() need, exact for every quantity parse_quantity accepts.
std::string dec_times_pow2(std::string d, int exp2) {
  for (int k = 0; k < exp2 && !d.empty(); ++k) {
    int carry = 0;
    for (size_t i = d.size(); i-- > 0;) {
      int v = (d[i] - '0') * 2 + carry;
      d[i] = static_cast<char>('0' + v % 10);
      carry = v / 10;
    }
    if (carry) d.insert(d.begin(), static_cast<char>('0' + carry));
  }
  return d;
}

// d / divisor; sets *exact to whether the remainder is zero.
std::string dec_div_small(const std::string& d, uint32_t divisor, bool* exact) {
  std::string out;
  uint64_t rem = 0;
  for (char c : d) {
    rem = rem * 10 + static_cast<uint64_t>(c - '0');
    const auto digit = static_cast<char>('0' + rem / divisor);
    if (!out.empty() || digit != '0') out += digit;
    rem %= divisor;
  }
  *exact = rem == 0;
  return out;
}

std::string dec_plus_one(std::string d) {
  size_t i = d.size();
  while (i > 0 && d[i - 1] == '9') d[--i] = '0';
  if (i == 0) return "1" + d;
  ++d[i - 1];
  return d;
}

// The magnitude as mantissa * 10^exp10 with an integer mantissa without trailing zeros.
std::pair<std::string, int> decimal_parts(const Quantity& q) {
  std::string m = dec_times_pow2(q.digits, q.exp2);
  int e = q.exp10;
  while (!m.empty() && m.back() == '0') {
    m.pop_back();
    ++e;
  }
  return {m, e};
}

int64_t saturate(const std::string& magnitude, bool negative) {
  const std::string max = "9223372036854775807";
  if (magnitude.size() > max.size() || (magnitude.size() == max.size() && magnitude > max))
    return negative ? INT64_MIN : INT64_MAX;
  int64_t v = magnitude.empty() ? 0 : std::stoll(magnitude);
  return negative ? -v : v;
}

std::string decimal_suffix(int exp3, Quantity::Format format) {
  if (format == Quantity::Format::decimal_exponent)
    return exp3 == 0 ? "" : "e" + std::to_string(exp3);
  switch (exp3) {
    case -9:
      return "n";
    case -6:
      return "u";
    case -3:
      return "m";
    case 3:
      return "k";
    case 6:
      return "M";
    case 9:
      return "G";
    case 12:
      return "T";
    case 15:
      return "P";
    case 18:
      return "E";
    default:
      return "";
  }
}

}  // namespace

int64_t value_ceil(const Quantity& q) {
  auto [m, e] = decimal_parts(q);
  if (m.empty()) return 0;
  if (e >= 0)
    return saturate(m + std::string(static_cast<size_t>(std::min(e, 40)), '0'), q.negative);
  const auto drop = static_cast<size_t>(-e);
  std::string whole = m.size() > drop ? m.substr(0, m.size() - drop) : "";
  return saturate(dec_plus_one(whole), q.negative);  // m has no trailing zeros: a fraction remains
}

std::string canonical(const Quantity& q) {
  auto [m, e] = decimal_parts(q);
  if (m.empty()) return "0";
  const std::string sign = q.negative ? "-" : "";
  if (e < -9) {  // Kubernetes keeps nano precision, rounding up
    const auto drop = static_cast<size_t>(-9 - e);
    std::string whole = m.size() > drop ? m.substr(0, m.size() - drop) : "";
    m = dec_plus_one(whole);
    e = -9;
    while (m.back() == '0') {
      m.pop_back();
      ++e;
    }
  }
  Quantity::Format format = q.format;
  if (format == Quantity::Format::binary_si) {
    // Below 1024, or not a whole number, a binary quantity prints in decimal.
    const bool whole = e >= 0;
    const bool small = whole && m.size() + static_cast<size_t>(e) <= 4 &&
                       std::stoi(m + std::string(static_cast<size_t>(e), '0')) < 1024;
    if (!whole || small) format = Quantity::Format::decimal_si;
  }
  if (format == Quantity::Format::binary_si) {
    std::string v = m + std::string(static_cast<size_t>(e), '0');
    static const char* const k_binary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int power = 0;
    for (; power < 6; ++power) {
      bool exact = false;
      std::string next = dec_div_small(v, 1024, &exact);
      if (!exact) break;
      v = next;
    }
    return sign + v + k_binary[power];
  }
  int exp3 = e >= 0 ? e / 3 * 3 : -((-e + 2) / 3 * 3);
  if (format == Quantity::Format::decimal_si) exp3 = std::min(exp3, 18);
  return sign + m + std::string(static_cast<size_t>(e - exp3), '0') + decimal_suffix(exp3, format);
}

int compare(const Quantity& a, const Quantity& b) {
  const bool a_zero = a.digits.empty(), b_zero = b.digits.empty();
  const int sa = a_zero ? 0 : (a.negative ? -1 : 1);
  const int sb = b_zero ? 0 : (b.negative ? -1 : 1);
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  const int base = std::min(a.exp10, b.exp10);
  int mag = compare_magnitude(scaled(a, a.exp10 - base), scaled(b, b.exp10 - base));
  return sa > 0 ? mag : -mag;
}

std::optional<Quantity> parse_quantity(const std::string& text) {
  size_t i = 0;
  const size_t n = text.size();
  bool negative = false;
  if (i < n && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  size_t digits_start = i;
  long double mantissa = 0;
  int digits = 0;
  Quantity q;
  while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) {
    mantissa = mantissa * 10 + (text[i] - '0');
    q.digits += text[i++];
    ++digits;
  }
  if (i < n && text[i] == '.') {
    ++i;
    long double scale = 0.1L;
    while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) {
      mantissa += (text[i] - '0') * scale;
      q.digits += text[i++];
      --q.exp10;
      scale /= 10;
      ++digits;
    }
  }
  if (digits == 0 || i == digits_start) return std::nullopt;
  q.digits.erase(0, std::min(q.digits.find_first_not_of('0'), q.digits.size()));
  if (q.digits.size() > k_max_digits) return std::nullopt;
  std::string suffix = text.substr(i);
  long double mult = 1;
  static const char* const k_binary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  static const std::pair<const char*, int> k_decimal[] = {{"n", -9}, {"u", -6}, {"m", -3},
                                                          {"k", 3},  {"M", 6},  {"G", 9},
                                                          {"T", 12}, {"P", 15}, {"E", 18}};
  bool known = suffix.empty();
  for (int b = 0; b < 6 && !known; ++b)
    if (suffix == k_binary[b]) {
      q.exp2 = 10 * (b + 1);
      q.format = Quantity::Format::binary_si;
      mult = std::pow(2.0L, q.exp2);
      known = true;
    }
  for (const auto& [name, e] : k_decimal)
    if (!known && suffix == name) {
      q.exp10 += e;
      mult = std::pow(10.0L, e);
      known = true;
    }
  if (!known && (suffix[0] == 'e' || suffix[0] == 'E')) {
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
    q.exp10 += neg_exp ? -exp : exp;
    q.format = Quantity::Format::decimal_exponent;
    mult = std::pow(10.0L, neg_exp ? -exp : exp);
    known = true;
  }
  if (!known) return std::nullopt;
  q.negative = negative;
  q.value = (negative ? -mantissa : mantissa) * mult;
  return q;
}

}  // namespace flytecd::quantity
