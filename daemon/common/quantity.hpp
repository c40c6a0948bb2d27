#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace flytecd::quantity {

// A Kubernetes resource quantity ("500m", "2Gi", "1.5", "1e3", "128974848").
// Parsed as k8s.io/apimachinery's resource.ParseQuantity accepts it: an optional sign, a
// decimal number, then one binary suffix (Ki Mi Gi Ti Pi Ei), one decimal suffix
// (n u m "" k M G T P E) or a decimal exponent (e3 / E-2).
struct Quantity {
  // The notation it was written in, which its canonical form keeps (resource.Format).
  enum class Format { decimal_si, binary_si, decimal_exponent };
  long double value = 0;  // in base units (cores, bytes); approximate, for display
  // Exact form, for comparisons: (negative ? -1 : 1) * digits * 10^exp10 * 2^exp2.
  bool negative = false;
  std::string digits;  // decimal digits without leading zeros ("" = zero)
  int exp10 = 0;
  int exp2 = 0;
  Format format = Format::decimal_si;
};

// Errors (nullopt): not a quantity, more than 100 significant digits, an exponent beyond 400.
std::optional<Quantity> parse_quantity(const std::string& text);

// Exact comparison (-1, 0, 1): 10^31+1 is more than 10^31, 1Ki equals 1024. Pure.
int compare(const Quantity& a, const Quantity& b);

// resource.Quantity.Value(): the value rounded up, away from zero, to an integer ("500m" -> 1,
// "1.5" -> 2, "1Ki" -> 1024); saturates at the int64 range. Pure.
int64_t value_ceil(const Quantity& q);

// resource.Quantity.String(): Kubernetes' canonical form ("1.5" -> "1500m", "1024Mi" -> "1Gi",
// "1000" -> "1k", "1.5Ki" -> "1536", "0.5Ki" -> "512"); below a nano it rounds up to 1n. Pure.
std::string canonical(const Quantity& q);

}  // namespace flytecd::quantity
