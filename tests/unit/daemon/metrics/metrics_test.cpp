#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "daemon/metrics/flytecd_metrics.hpp"
#include "daemon/metrics/metrics.hpp"

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd::metrics;

TEST_CASE("metrics: counter family renders HELP, TYPE and escaped labels", "[metrics]") {
  Registry r;
  auto& c = r.counter("http_requests_total", "Requests.\nSecond \\ line", {"method", "path"});
  c.with({"GET", "/a\"b\\c\nd"}).inc();
  c.with({"GET", "/a\"b\\c\nd"}).inc(2);
  c.with({"POST", "/x"}).inc(0.5);
  c.with({"POST", "/x"}).inc(-7);  // ignored: counters never go down
  CHECK(r.render() == R"(# HELP http_requests_total Requests.\nSecond \\ line
# TYPE http_requests_total counter
http_requests_total{method="GET",path="/a\"b\\c\nd"} 3
http_requests_total{method="POST",path="/x"} 0.5
)");
}

TEST_CASE("metrics: histogram renders cumulative buckets, +Inf, sum and count", "[metrics]") {
  Registry r;
  auto& h = r.histogram("op_seconds", "Op time.", {1, 0.25, 0.5, 0.5}, {"op"});
  for (double v : {0.125, 0.25, 0.75, 3.0}) h.with({"read"}).observe(v);  // le is inclusive
  CHECK(r.render() == R"(# HELP op_seconds Op time.
# TYPE op_seconds histogram
op_seconds_bucket{op="read",le="0.25"} 2
op_seconds_bucket{op="read",le="0.5"} 2
op_seconds_bucket{op="read",le="1"} 3
op_seconds_bucket{op="read",le="+Inf"} 4
op_seconds_sum{op="read"} 4.125
op_seconds_count{op="read"} 4
)");
}

TEST_CASE("metrics: unlabelled families render at zero before first use, sorted by name",
          "[metrics]") {
  Registry r;
  r.gauge("zz_up", "Up.");
  r.histogram("aa_seconds", "A.", {1});
  r.counter("mm_total", "M.", {"kind"});  // labelled: no series until used
  CHECK(r.render() == R"(# HELP aa_seconds A.
# TYPE aa_seconds histogram
aa_seconds_bucket{le="1"} 0
aa_seconds_bucket{le="+Inf"} 0
aa_seconds_sum 0
aa_seconds_count 0
# HELP mm_total M.
# TYPE mm_total counter
# HELP zz_up Up.
# TYPE zz_up gauge
zz_up 0
)");
}

TEST_CASE("metrics: gauges go up and down, special values use Prometheus spellings", "[metrics]") {
  Registry r;
  auto& g = r.gauge("g", "G.", {"k"});
  g.with({"a"}).set(5);
  g.with({"a"}).inc(2.5);
  g.with({"a"}).dec();
  g.with({"inf"}).set(std::numeric_limits<double>::infinity());
  g.with({"ninf"}).set(-std::numeric_limits<double>::infinity());
  g.with({"nan"}).set(std::nan(""));
  g.with({"big"}).set(1e21);
  CHECK(r.render() == R"(# HELP g G.
# TYPE g gauge
g{k="a"} 6.5
g{k="big"} 1e+21
g{k="inf"} +Inf
g{k="nan"} NaN
g{k="ninf"} -Inf
)");
}

TEST_CASE("metrics: only() keeps a single series, remove() and clear() drop series", "[metrics]") {
  Registry r;
  auto& info = r.gauge("rev_info", "R.", {"revision"});
  info.only({"abc"}).set(1);
  info.only({"def"}).set(1);
  CHECK(r.render() == "# HELP rev_info R.\n# TYPE rev_info gauge\nrev_info{revision=\"def\"} 1\n");
  info.with({"x"}).set(2);
  info.remove({"def"});
  CHECK(r.render() == "# HELP rev_info R.\n# TYPE rev_info gauge\nrev_info{revision=\"x\"} 2\n");
  info.clear();
  CHECK(r.render() == "# HELP rev_info R.\n# TYPE rev_info gauge\n");
}

TEST_CASE("metrics: a wrong number of label values is padded or truncated", "[metrics]") {
  Registry r;
  auto& c = r.counter("c_total", "C.", {"a", "b"});
  c.with({"x"}).inc();
  c.with({"y", "z", "extra"}).inc();
  CHECK(r.render() == R"(# HELP c_total C.
# TYPE c_total counter
c_total{a="x",b=""} 1
c_total{a="y",b="z"} 1
)");
}

TEST_CASE("metrics: registering the same family twice returns the same one", "[metrics]") {
  Registry r;
  auto& a = r.counter("x_total", "X.", {"k"});
  auto& b = r.counter("x_total", "X.", {"k"});
  CHECK(&a == &b);
  auto& h1 = r.histogram("h", "H.", {1, 2});
  auto& h2 = r.histogram("h", "H.", {2, 1});
  CHECK(&h1 == &h2);
}

TEST_CASE("metrics: concurrent increments and observations are not lost", "[metrics]") {
  Registry r;
  auto& c = r.counter("n_total", "N.", {"t"});
  auto& h = r.histogram("d", "D.", default_buckets());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i) {
        c.with({"shared"}).inc();
        c.with({std::to_string(t)}).inc();
        h.with({}).observe(0.01);
        if (i % 1000 == 0) (void)r.render();  // scrapes race with writers
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(c.with({"shared"}).value() == 40000);
  CHECK(c.with({"3"}).value() == 10000);
  CHECK(h.with({}).snapshot().count == 40000);
}

TEST_CASE("metrics: helpers build bucket lists", "[metrics]") {
  CHECK(exponential_buckets(1, 2, 4) == std::vector<double>{1, 2, 4, 8});
  CHECK(default_buckets().size() == 11);
  CHECK(format_value(0.1) == "0.1");
  CHECK(format_value(42) == "42");
  CHECK(format_value(1700000000) == "1700000000");
  CHECK(format_value(0.0001) == "0.0001");
  CHECK(format_value(1e-7) == "1e-07");
  CHECK(format_value(-2.5) == "-2.5");
  CHECK(escape_label_value("a\\b\"c\nd") == R"(a\\b\"c\nd)");
  CHECK(escape_help("a\\b\"c\nd") == R"(a\\b"c\nd)");
}

TEST_CASE("metrics: the flytecd metric set registers every family with its labels", "[metrics]") {
  Registry r;
  FlytecdMetrics m(r);
  m.record_reconcile(ReconcileResult::success, 0.2, 1700000000);
  m.record_reconcile(ReconcileResult::invalid, 0.1);
  m.set_revision("abc123");
  m.set_revision("def456");
  m.set_objects("task_resource_attributes", "drifted", 2);
  m.set_target(true, true);
  m.webhook_requests_total.with({"github", "accepted"}).inc();
  m.rpc_total.with({"UpdateProjectAttributes", "OK"}).inc();
  const std::string text = r.render();

  for (const char* family :
       {"flytecd_reconcile_total", "flytecd_reconcile_duration_seconds",
        "flytecd_last_success_timestamp_seconds", "flytecd_revision_info", "flytecd_objects",
        "flytecd_source_polls_total", "flytecd_source_fetches_total", "flytecd_rpc_total",
        "flytecd_webhook_requests_total", "flytecd_notifications_total", "flytecd_target_up",
        "flytecd_target_is_emulator"}) {
    INFO(family);
    CHECK(text.find(std::string("# TYPE ") + family + " ") != std::string::npos);
  }
  CHECK(text.find("flytecd_reconcile_total{result=\"success\"} 1\n") != std::string::npos);
  CHECK(text.find("flytecd_reconcile_total{result=\"invalid\"} 1\n") != std::string::npos);
  CHECK(text.find("flytecd_reconcile_total{result=\"refused\"} 0\n") != std::string::npos);
  CHECK(text.find("flytecd_reconcile_total{result=\"failed\"} 0\n") != std::string::npos);
  CHECK(text.find("flytecd_reconcile_duration_seconds_count 2\n") != std::string::npos);
  CHECK(text.find("flytecd_last_success_timestamp_seconds 1700000000\n") != std::string::npos);
  CHECK(text.find("flytecd_revision_info{revision=\"def456\"} 1\n") != std::string::npos);
  CHECK(text.find("abc123") == std::string::npos);
  CHECK(text.find("flytecd_objects{kind=\"task_resource_attributes\",state=\"drifted\"} 2\n") !=
        std::string::npos);
  CHECK(text.find("flytecd_target_up 1\n") != std::string::npos);
  CHECK(text.find("flytecd_target_is_emulator 1\n") != std::string::npos);
  CHECK(text.find("flytecd_webhook_requests_total{provider=\"github\",result=\"accepted\"} 1\n") !=
        std::string::npos);
}

}  // namespace FLYTECD_UNITY_ID
