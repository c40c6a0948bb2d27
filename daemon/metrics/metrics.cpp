#include "daemon/metrics/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace flytecd::metrics {
namespace {

// Registration mistakes are programming errors found at startup; they must not be silent.
[[noreturn]] void misuse(const std::string& what) {
  std::fprintf(stderr, "flytecd: metrics registry misuse: %s\n", what.c_str());
  std::abort();
}

bool valid_name(std::string_view n, bool allow_colon) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alpha =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

void atomic_add(std::atomic<double>& a, double delta) {
  // fetch_add on atomic<double> is C++20 but a CAS loop is as fast and portable.
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + delta, std::memory_order_relaxed)) {
  }
}

// `{a="x",b="y"}` (or "" without labels); `extra` appends one more pair (histogram `le`).
std::string label_block(const std::vector<std::string>& names,
                        const std::vector<std::string>& values, std::string_view extra_name = {},
                        std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return {};
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
    out += "=\"";
    out += escape_label_value(values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ',';
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
  return out;
}

void sample(std::string& out, std::string_view name, const std::string& labels, double v) {
  out += name;
  out += labels;
  out += ' ';
  out += format_value(v);
  out += '\n';
}

void render_child(std::string& out, const FamilyBase& f, const std::vector<std::string>& values,
                  const Counter& c) {
  sample(out, f.name(), label_block(f.label_names(), values), c.value());
}

void render_child(std::string& out, const FamilyBase& f, const std::vector<std::string>& values,
                  const Gauge& g) {
  sample(out, f.name(), label_block(f.label_names(), values), g.value());
}

void render_child(std::string& out, const FamilyBase& f, const std::vector<std::string>& values,
                  const Histogram& h) {
  const auto snap = h.snapshot();
  const std::string bucket = f.name() + "_bucket";
  for (size_t i = 0; i < snap.cumulative.size(); ++i) {
    const std::string le = i < snap.bounds.size() ? format_value(snap.bounds[i]) : "+Inf";
    sample(out, bucket, label_block(f.label_names(), values, "le", le),
           static_cast<double>(snap.cumulative[i]));
  }
  const std::string plain = label_block(f.label_names(), values);
  sample(out, f.name() + "_sum", plain, snap.sum);
  sample(out, f.name() + "_count", plain, static_cast<double>(snap.count));
}

}  // namespace

void Counter::inc(double delta) {
  if (!(delta > 0)) return;  // also rejects NaN
  atomic_add(m_value, delta);
}

void Gauge::inc(double delta) { atomic_add(m_value, delta); }

Histogram::Histogram(std::vector<double> bounds)
    : m_bounds(std::move(bounds)), m_counts(m_bounds.size() + 1, 0) {}

void Histogram::observe(double v) {
  if (std::isnan(v)) return;
  const auto it = std::lower_bound(m_bounds.begin(), m_bounds.end(), v);  // first bound >= v
  const auto idx = static_cast<size_t>(it - m_bounds.begin());
  std::lock_guard<std::mutex> lock(m_mu);
  ++m_counts[idx];
  m_sum += v;
  ++m_count;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = m_bounds;
  std::lock_guard<std::mutex> lock(m_mu);
  s.cumulative.reserve(m_counts.size());
  uint64_t running = 0;
  for (uint64_t c : m_counts) {
    running += c;
    s.cumulative.push_back(running);
  }
  s.sum = m_sum;
  s.count = m_count;
  return s;
}

FamilyBase::FamilyBase(std::string name, std::string help, std::string type,
                       std::vector<std::string> label_names)
    : m_name(std::move(name)),
      m_help(std::move(help)),
      m_type(std::move(type)),
      m_label_names(std::move(label_names)) {}

template <typename T>
Family<T>::Family(std::string name, std::string help, std::string type,
                  std::vector<std::string> label_names, Factory factory)
    : FamilyBase(std::move(name), std::move(help), std::move(type), std::move(label_names)),
      m_factory(std::move(factory)) {
  if (m_label_names.empty()) m_children.emplace(std::vector<std::string>{}, m_factory());
}

template <typename T>
std::vector<std::string> Family<T>::normalise(std::vector<std::string> values) const {
  values.resize(m_label_names.size());
  return values;
}

template <typename T>
T& Family<T>::with_locked(std::vector<std::string> values) {
  auto it = m_children.find(values);
  if (it == m_children.end()) it = m_children.emplace(std::move(values), m_factory()).first;
  return *it->second;
}

template <typename T>
T& Family<T>::with(std::initializer_list<std::string_view> values) {
  std::vector<std::string> v;
  v.reserve(values.size());
  for (auto s : values) v.emplace_back(s);
  return with(v);
}

template <typename T>
T& Family<T>::with(const std::vector<std::string>& values) {
  auto key = normalise(values);
  std::lock_guard<std::mutex> lock(m_mu);
  return with_locked(std::move(key));
}

template <typename T>
void Family<T>::remove(const std::vector<std::string>& values) {
  auto key = normalise(values);
  std::lock_guard<std::mutex> lock(m_mu);
  m_children.erase(key);
}

template <typename T>
void Family<T>::clear() {
  std::lock_guard<std::mutex> lock(m_mu);
  m_children.clear();
}

template <typename T>
T& Family<T>::only(const std::vector<std::string>& values) {
  auto key = normalise(values);
  std::lock_guard<std::mutex> lock(m_mu);
  for (auto it = m_children.begin(); it != m_children.end();) {
    it = it->first == key ? std::next(it) : m_children.erase(it);
  }
  return with_locked(std::move(key));
}

template <typename T>
void Family<T>::render(std::string& out) const {
  out += "# HELP " + m_name + " " + escape_help(m_help) + "\n";
  out += "# TYPE " + m_name + " " + m_type + "\n";
  std::lock_guard<std::mutex> lock(m_mu);
  for (const auto& [values, child] : m_children) render_child(out, *this, values, *child);
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

template <typename T>
Family<T>& Registry::add(const std::string& name, const std::string& help, const std::string& type,
                         std::vector<std::string> label_names, typename Family<T>::Factory factory,
                         const std::vector<double>* buckets) {
  if (!valid_name(name, true)) misuse("invalid metric name \"" + name + "\"");
  for (const auto& l : label_names) {
    if (!valid_name(l, false) || l.starts_with("__") || (type == "histogram" && l == "le")) {
      misuse("invalid label name \"" + l + "\" on " + name);  // NOLINT(performance-*)
    }
  }
  std::lock_guard<std::mutex> lock(m_mu);
  if (auto it = m_families.find(name); it != m_families.end()) {
    auto* existing = dynamic_cast<Family<T>*>(it->second.get());
    const bool same_buckets = buckets == nullptr || m_histogram_buckets[name] == *buckets;
    if (existing == nullptr || existing->type() != type || existing->label_names() != label_names ||
        !same_buckets) {
      misuse("metric \"" + name + "\" registered twice with a different shape");
    }
    return *existing;
  }
  if (buckets != nullptr) m_histogram_buckets[name] = *buckets;
  auto family =
      std::make_unique<Family<T>>(name, help, type, std::move(label_names), std::move(factory));
  auto& ref = *family;
  m_families.emplace(name, std::move(family));
  return ref;
}

CounterFamily& Registry::counter(const std::string& name, const std::string& help,
                                 std::vector<std::string> label_names) {
  return add<Counter>(
      name, help, "counter", std::move(label_names), [] { return std::make_unique<Counter>(); },
      nullptr);
}

GaugeFamily& Registry::gauge(const std::string& name, const std::string& help,
                             std::vector<std::string> label_names) {
  return add<Gauge>(
      name, help, "gauge", std::move(label_names), [] { return std::make_unique<Gauge>(); },
      nullptr);
}

HistogramFamily& Registry::histogram(const std::string& name, const std::string& help,
                                     std::vector<double> buckets,
                                     std::vector<std::string> label_names) {
  std::erase_if(buckets, [](double b) { return !std::isfinite(b); });
  std::sort(buckets.begin(), buckets.end());
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  return add<Histogram>(
      name, help, "histogram", std::move(label_names),
      [buckets] { return std::make_unique<Histogram>(buckets); }, &buckets);
}

std::string Registry::render() const {
  std::string out;
  std::lock_guard<std::mutex> lock(m_mu);
  for (const auto& [name, family] : m_families) family->render(out);
  return out;
}

std::vector<double> default_buckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  std::vector<double> out;
  double v = start;
  for (int i = 0; i < count; ++i, v *= factor) out.push_back(v);
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[512];  // fixed notation of values below 1e21 needs at most ~330 characters
  // Shortest text that round-trips; fixed notation where humans read it ("1700000000",
  // "0.25"), exponents only for the very large or small ("1e+21", "1e-07").
  const double mag = std::fabs(v);
  const bool fixed = mag == 0 || (mag >= 1e-4 && mag < 1e21);
  const auto res = fixed ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                         : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace flytecd::metrics
