#pragma once

#include <optional>
#include <string>

namespace flytecd::quantity {

// A Kubernetes resource quantity ("500m", "2Gi", "1.5", "1e3", "128974848").
// Parsed as k8s.io/apimachinery's resource.ParseQuantity accepts it: an optional sign, a
// decimal number, then one binary suffix (Ki Mi Gi Ti Pi Ei), one decimal suffix
// (n u m "" k M G T P E) or a decimal exponent (e3 / E-2).
struct Quantity {
  long double value = 0;  // in base units (cores, bytes); approximate, for display
  // Exact form, for comparisons: (negative ? -1 : 1) * digits * 10^exp10 * 2^exp2.
  bool negative = false;
  std::string digits;  // decimal digits without leading zeros ("" = zero)
  int exp10 = 0;
  int exp2 = 0;
};

// Errors (nullopt): not a quantity, more than 100 significant digits, an exponent beyond 400.
std::optional<Quantity> parse_quantity(const std::string& text);

// Exact comparison (-1, 0, 1): 10^31+1 is more than 10^31, 1Ki equals 1024. Pure.
int compare(const Quantity& a, const Quantity& b);

}  // namespace flytecd::quantity
