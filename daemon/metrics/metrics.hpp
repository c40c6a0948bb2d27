#pragma once

// A small Prometheus registry: counter, gauge and histogram families with label names, and
// render() in the text exposition format (version 0.0.4). No globals: the daemon owns one
// Registry and passes it (or FlytecdMetrics, which holds references into it) around.
//
// Registration (Registry::counter/gauge/histogram) happens at startup; a name registered twice
// with a different type, labels or buckets, or an invalid metric/label name, is a programming
// error and aborts with a message. Everything here is thread-safe.

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace flytecd::metrics {

// A value that only goes up. Thread-safe.
class Counter {
 public:
  // Adds `delta`; negative or NaN deltas are ignored (counters never go down).
  void inc(double delta = 1.0);
  double value() const { return m_value.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> m_value{0.0};
};

// A value that goes up and down. Thread-safe.
class Gauge {
 public:
  void set(double v) { m_value.store(v, std::memory_order_relaxed); }
  void inc(double delta = 1.0);
  void dec(double delta = 1.0) { inc(-delta); }
  double value() const { return m_value.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> m_value{0.0};
};

// Observations counted into cumulative buckets (upper bounds, +Inf implied). Thread-safe.
class Histogram {
 public:
  // `bounds` must be sorted, finite and unique (Registry::histogram normalises them).
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);

  struct Snapshot {
    std::vector<double> bounds;        // without +Inf
    std::vector<uint64_t> cumulative;  // bounds.size() + 1 entries, the last one is +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  const std::vector<double> m_bounds;
  mutable std::mutex m_mu;
  std::vector<uint64_t> m_counts;  // per bucket, not cumulative; last = above every bound
  double m_sum = 0;
  uint64_t m_count = 0;
};

// Common part of a metric family (name, help, type, label names); rendered by the Registry.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, std::string type,
             std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  const std::string& name() const { return m_name; }
  const std::string& type() const { return m_type; }
  const std::vector<std::string>& label_names() const { return m_label_names; }
  // Appends HELP, TYPE and every sample line to `out`.
  virtual void render(std::string& out) const = 0;

 protected:
  std::string m_name;
  std::string m_help;
  std::string m_type;
  std::vector<std::string> m_label_names;
};

// A family of children keyed by label values (given in label-name order). A family without
// label names has exactly one child, created at registration so it renders as 0 at once.
template <typename T>
class Family final : public FamilyBase {
 public:
  using Factory = std::function<std::unique_ptr<T>()>;
  Family(std::string name, std::string help, std::string type, std::vector<std::string> label_names,
         Factory factory);

  // The child for these label values, created at zero on first use. A wrong number of values
  // is padded with "" or truncated. The reference stays valid until remove()/clear()/only()
  // drops that child.
  T& with(std::initializer_list<std::string_view> values);
  T& with(const std::vector<std::string>& values);
  // Drops the child for these label values (no-op if absent).
  void remove(const std::vector<std::string>& values);
  // Drops every child.
  void clear();
  // Drops every other child and returns this one, atomically with respect to render():
  // the way to publish an "info" metric that must only show the current value.
  T& only(const std::vector<std::string>& values);

  void render(std::string& out) const override;

 private:
  std::vector<std::string> normalise(std::vector<std::string> values) const;
  T& with_locked(std::vector<std::string> values);

  Factory m_factory;
  mutable std::mutex m_mu;
  std::map<std::vector<std::string>, std::unique_ptr<T>> m_children;
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers (or returns the already registered, identical) family. Aborts on conflicts.
  CounterFamily& counter(const std::string& name, const std::string& help,
                         std::vector<std::string> label_names = {});
  GaugeFamily& gauge(const std::string& name, const std::string& help,
                     std::vector<std::string> label_names = {});
  // `buckets` are upper bounds; they are sorted and deduplicated, +Inf is always added.
  HistogramFamily& histogram(const std::string& name, const std::string& help,
                             std::vector<double> buckets,
                             std::vector<std::string> label_names = {});

  // Every family, sorted by name, in the Prometheus text format 0.0.4.
  std::string render() const;

 private:
  template <typename T>
  Family<T>& add(const std::string& name, const std::string& help, const std::string& type,
                 std::vector<std::string> label_names, typename Family<T>::Factory factory,
                 const std::vector<double>* buckets);

  mutable std::mutex m_mu;
  std::map<std::string, std::unique_ptr<FamilyBase>> m_families;
  std::map<std::string, std::vector<double>> m_histogram_buckets;
};

// Prometheus client defaults: .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10 (seconds).
std::vector<double> default_buckets();
// `count` bounds: start, start*factor, start*factor^2, …
std::vector<double> exponential_buckets(double start, double factor, int count);

// Text-format helpers (exposed for tests): a sample value ("1", "0.25", "+Inf", "NaN"), a
// label value with \\, \" and \n escaped, and HELP text with \\ and \n escaped.
std::string format_value(double v);
std::string escape_label_value(std::string_view v);
std::string escape_help(std::string_view v);

}  // namespace flytecd::metrics
