#pragma once

#include <optional>
#include <string>

namespace flytecd::model {

// A Kubernetes resource quantity ("500m", "2Gi", "1.5", "1e3", "128974848").
// Parsed as k8s.io/apimachinery's resource.ParseQuantity accepts it: an optional sign, a
// decimal number, then one binary suffix (Ki Mi Gi Ti Pi Ei), one decimal suffix
// (n u m "" k M G T P E) or a decimal exponent (e3 / E-2).
struct Quantity {
  long double value = 0;  // in base units (cores, bytes)
};

std::optional<Quantity> parse_quantity(const std::string& text);

}  // namespace flytecd::model
