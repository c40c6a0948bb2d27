// Notification payloads (daemon/notify/notifier: render_payload), pure: no network. Delivery is
// tested against real receivers in tests/integration/notify_test.cpp.
#include "daemon/notify/notifier.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace FLYTECD_UNITY_ID {  // this file's names, apart in a batch (tests/CMakeLists.txt)

using namespace flytecd;
using notify::EventKind;
using notify::NotifyTarget;

namespace {

notify::Event refusal() {
  notify::Event e;
  e.kind = EventKind::revision_refused;
  e.revision = "89abcdef0123456789abcdef0123456789abcdef";
  e.summary =
      "refusing to remove 53 of 54 managed overrides (more than 50% or all of them); if this is "
      "intended, allow mass pruning explicitly (--allow-mass-prune / policy.allowMassPrune)";
  e.details = {"overrides: 53 of 54 managed would be deleted, 1 declared"};
  e.time = std::chrono::system_clock::time_point(std::chrono::seconds(1714564800));
  return e;
}

}  // namespace

TEST_CASE("notify: a refused revision is an event of its own", "[notify]") {
  CHECK(notify::to_string(EventKind::revision_refused) == "revision_refused");
  for (auto kind : {EventKind::drift_detected, EventKind::sync_failed, EventKind::sync_recovered})
    CHECK(notify::to_string(kind) != notify::to_string(EventKind::revision_refused));
}

TEST_CASE("notify: the generic refusal payload names the revision and the guard's reason",
          "[notify]") {
  CHECK(notify::render_payload(NotifyTarget::Kind::generic, refusal()) ==
        R"j({"event":"revision_refused","revision":"89abcdef0123456789abcdef0123456789abcdef",)j"
        R"j("summary":"refusing to remove 53 of 54 managed overrides (more than 50% or all of )j"
        R"j(them); if this is intended, allow mass pruning explicitly (--allow-mass-prune / )j"
        R"j(policy.allowMassPrune)","details":["overrides: 53 of 54 managed would be deleted, )j"
        R"j(1 declared"],"time":"2024-05-01T12:00:00Z"})j");
}

TEST_CASE("notify: the Slack refusal payload says refused, with the revision and the reason",
          "[notify]") {
  auto e = refusal();
  e.summary = "refusing a revision with zero documents (an <empty> path & co)";
  e.details.clear();
  const auto j = nlohmann::json::parse(notify::render_payload(NotifyTarget::Kind::slack, e));
  CHECK(j["text"] ==
        ":no_entry: flytecd: Revision refused at revision "
        "89abcdef0123456789abcdef0123456789abcdef: refusing a revision with zero documents (an "
        "&lt;empty&gt; path &amp; co)");
  REQUIRE(j["blocks"].size() == 3);  // header, reason, context: no details block
  CHECK(j["blocks"][0]["text"]["text"] == "flytecd: Revision refused");
  CHECK(j["blocks"][1]["text"]["text"] ==
        "refusing a revision with zero documents (an &lt;empty&gt; path &amp; co)");
  CHECK(j["blocks"][2]["elements"][0]["text"] ==
        "revision `89abcdef0123456789abcdef0123456789abcdef` \xC2\xB7 2024-05-01T12:00:00Z");
  // With the per-kind lines, they are a details block.
  const auto k =
      nlohmann::json::parse(notify::render_payload(NotifyTarget::Kind::slack, refusal()));
  REQUIRE(k["blocks"].size() == 4);
  CHECK(k["blocks"][2]["text"]["text"] ==
        "\xE2\x80\xA2 overrides: 53 of 54 managed would be deleted, 1 declared");
}

}  // namespace FLYTECD_UNITY_ID
