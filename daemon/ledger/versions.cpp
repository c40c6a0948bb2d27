#include <nlohmann/json.hpp>

#include "daemon/ledger/ledger.hpp"

// A read query of its own beside ledger.cpp: which versions a registration had before (for
// calling a registration that goes back to one of them a rollback).

namespace flytecd::ledger {

Result<std::set<std::string>> Ledger::registered_versions(const std::string& key) const {
  std::lock_guard<std::mutex> lock(m_mu);
  auto st = m_db->prepare(
      "SELECT changes FROM reconcile_steps WHERE key = ? AND outcome = 'ok' AND changes != ''",
      "registered versions of " + key);
  if (!st) return st.error();
  st->bind(key);
  std::set<std::string> out;
  auto s = st->each([&](const sqlite::Statement& row) {
    // Changes are JSON written by the pass; a row that does not parse is skipped, not fatal.
    const auto changes = nlohmann::json::parse(row.text(0), nullptr, /*allow_exceptions=*/false);
    if (!changes.is_array()) return;
    for (const auto& c : changes) {
      if (!c.is_object() || c.value("path", "") != "version") continue;
      // "git" since the typed shape (issue 21), "desired" before it.
      for (const char* side : {"live", "git", "desired"})
        if (c.contains(side) && c[side].is_string()) out.insert(c[side].get<std::string>());
    }
  });
  if (!s) return s.error();
  return out;
}

}  // namespace flytecd::ledger
