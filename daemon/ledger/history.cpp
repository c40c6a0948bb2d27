// The ledger's reconcile history beside ledger.cpp (managed objects, registrations, ownership):
// passes and their steps as they are recorded, no-op passes counted, retention, and the queries
// of `flytecd history` and GET /api/v1/history.
#include <string>
#include <vector>

#include "daemon/ledger/clock.hpp"
#include "daemon/ledger/ledger.hpp"

namespace flytecd::ledger {
namespace {

// The first seven columns of a reconciles row: id, revision, started_at, finished_at, steps,
// outcome, detail.
HistoryEntry entry_of(const sqlite::Statement& row) {
  HistoryEntry e;
  e.id = row.int64(0);
  e.revision = row.text(1);
  e.started_at = row.int64(2);
  e.finished_at = row.int64(3);
  e.steps = static_cast<int>(row.int64(4));
  e.outcome = row.text(5);
  e.detail = row.text(6);
  return e;
}

}  // namespace

Result<int64_t> Ledger::begin_reconcile(const std::string& revision) {
  std::lock_guard<std::mutex> lock(m_mu);
  auto st =
      m_db->prepare("INSERT INTO reconciles(revision, started_at, outcome) VALUES(?, ?, 'running')",
                    "begin reconcile");
  if (!st) return st.error();
  if (auto s = st->bind(revision).bind(detail::now_seconds()).run(); !s) return s.error();
  return m_db->last_insert_rowid();
}

Status Ledger::add_step(int64_t reconcile_id, const std::string& action, const std::string& key,
                        const std::string& outcome, const std::string& message) {
  std::lock_guard<std::mutex> lock(m_mu);
  auto st = m_db->prepare(
      "INSERT INTO reconcile_steps(reconcile_id, action, key, outcome, message, at) "
      "VALUES(?,?,?,?,?,?)",
      "add step");
  if (!st) return st.error();
  return st->bind(reconcile_id)
      .bind(action)
      .bind(key)
      .bind(outcome)
      .bind(message)
      .bind(detail::now_seconds())
      .run();
}

Status Ledger::finish_reconcile(int64_t reconcile_id, int steps, const std::string& outcome,
                                const std::string& detail) {
  std::lock_guard<std::mutex> lock(m_mu);
  auto st =
      m_db->prepare("UPDATE reconciles SET finished_at=?, steps=?, outcome=?, detail=? WHERE id=?",
                    "finish reconcile");
  if (!st) return st.error();
  return st->bind(detail::now_seconds())
      .bind(static_cast<int64_t>(steps))
      .bind(outcome)
      .bind(detail)
      .bind(reconcile_id)
      .run();
}

Result<std::vector<HistoryEntry>> Ledger::history(int limit) const {
  std::lock_guard<std::mutex> lock(m_mu);
  auto st = m_db->prepare(
      "SELECT id, revision, started_at, COALESCE(finished_at, 0), steps, outcome, detail FROM "
      "reconciles "
      "ORDER BY id DESC LIMIT ?",
      "history");
  if (!st) return st.error();
  st->bind(static_cast<int64_t>(limit));
  std::vector<HistoryEntry> out;
  auto s = st->each([&](const sqlite::Statement& row) { out.push_back(entry_of(row)); });
  if (!s) return s.error();
  return out;
}

Result<int64_t> Ledger::record_pass(const PassRecord& pass, const Retention& retention) {
  std::lock_guard<std::mutex> lock(m_mu);
  auto tx = sqlite::Transaction::begin(*m_db, sqlite::Transaction::Mode::immediate);
  if (!tx) return tx.error();
  const int64_t now = detail::now_seconds();
  auto ins = m_db->prepare(
      "INSERT INTO reconciles(revision, started_at, finished_at, steps, outcome, detail, subject, "
      "author, committed_at, trigger) VALUES(?,?,?,?,?,?,?,?,?,?)",
      "record pass");
  if (!ins) return ins.error();
  if (auto s = ins->bind(pass.revision)
                   .bind(now)
                   .bind(now)
                   .bind(static_cast<int64_t>(pass.steps.size()))
                   .bind(pass.outcome)
                   .bind(pass.detail)
                   .bind(pass.subject)
                   .bind(pass.author)
                   .bind(pass.committed_at)
                   .bind(pass.trigger)
                   .run();
      !s)
    return s.error();
  const int64_t id = m_db->last_insert_rowid();
  auto step = m_db->prepare(
      "INSERT INTO reconcile_steps(reconcile_id, action, key, outcome, message, at, changes) "
      "VALUES(?,?,?,?,?,?,?)",
      "record step");
  if (!step) return step.error();
  for (const auto& s : pass.steps) {
    step->reset();
    if (auto r = step->bind(id)
                     .bind(s.action)
                     .bind(s.key)
                     .bind(s.outcome)
                     .bind(s.message)
                     .bind(now)
                     .bind(s.changes)
                     .run();
        !r)
      return r.error();
  }
  // Retention: the newest max_entries, none older than max_age.
  const int64_t oldest = now - retention.max_age_seconds;
  for (const char* sql :
       {"DELETE FROM reconcile_steps WHERE reconcile_id IN (SELECT id FROM reconciles WHERE id <= "
        "(SELECT id FROM reconciles ORDER BY id DESC LIMIT 1 OFFSET ?) OR started_at < ?)",
        "DELETE FROM reconciles WHERE id <= (SELECT id FROM reconciles ORDER BY id DESC LIMIT 1 "
        "OFFSET ?) OR started_at < ?"}) {
    auto del = m_db->prepare(sql, "history retention");
    if (!del) return del.error();
    if (auto r = del->bind(std::max<int64_t>(retention.max_entries, 1)).bind(oldest).run(); !r)
      return r.error();
  }
  if (auto c = tx->commit(); !c) return c.error();
  return id;
}

Status Ledger::count_noop() {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_db->exec(
      "UPDATE reconciles SET noops = noops + 1 WHERE id = (SELECT MAX(id) FROM reconciles)",
      "count no-op pass");
}

Result<std::vector<HistoryEntry>> Ledger::history(const HistoryQuery& q) const {
  std::lock_guard<std::mutex> lock(m_mu);
  // A project's keys: project/<p>, override/<p>/…, registration/<p>/….
  std::string filter;
  std::vector<std::string> args;
  if (!q.object.empty()) {
    filter +=
        " AND EXISTS (SELECT 1 FROM reconcile_steps s WHERE s.reconcile_id = r.id AND "
        "(s.key = ? OR (substr(?, -1) = '/' AND substr(s.key, 1, length(?)) = ?)))";
    args.insert(args.end(), {q.object, q.object, q.object, q.object});
  }
  if (!q.project.empty()) {
    filter +=
        " AND EXISTS (SELECT 1 FROM reconcile_steps s WHERE s.reconcile_id = r.id AND "
        "(s.key = ? OR substr(s.key, 1, length(?)) = ? OR substr(s.key, 1, length(?)) = ?))";
    const std::string p = "project/" + q.project, o = "override/" + q.project + "/",
                      r = "registration/" + q.project + "/";
    args.insert(args.end(), {p, o, o, r, r});
  }
  auto st = m_db->prepare(
      "SELECT id, revision, started_at, COALESCE(finished_at, 0), steps, outcome, detail, subject, "
      "author, committed_at, trigger, noops FROM reconciles r WHERE 1=1" +
          filter + " ORDER BY id DESC LIMIT ?",
      "history");
  if (!st) return st.error();
  for (const auto& a : args) st->bind(a);
  st->bind(static_cast<int64_t>(std::max(q.limit, 1)));
  std::vector<HistoryEntry> out;
  auto s = st->each([&](const sqlite::Statement& row) {
    HistoryEntry e = entry_of(row);
    e.subject = row.text(7);
    e.author = row.text(8);
    e.committed_at = row.int64(9);
    e.trigger = row.text(10);
    e.noops = row.int64(11);
    out.push_back(std::move(e));
  });
  if (!s) return s.error();
  // The steps shown are those the filters ask about (all of them without a filter).
  std::string step_filter;
  std::vector<std::string> step_args;
  if (!q.object.empty()) {
    step_filter += " AND (key = ? OR (substr(?, -1) = '/' AND substr(key, 1, length(?)) = ?))";
    step_args.insert(step_args.end(), {q.object, q.object, q.object, q.object});
  }
  if (!q.project.empty()) {
    const std::string p = "project/" + q.project, o = "override/" + q.project + "/",
                      r = "registration/" + q.project + "/";
    step_filter +=
        " AND (key = ? OR substr(key, 1, length(?)) = ? OR substr(key, 1, length(?)) = ?)";
    step_args.insert(step_args.end(), {p, o, o, r, r});
  }
  auto steps = m_db->prepare(
      "SELECT action, key, outcome, message, changes FROM reconcile_steps WHERE reconcile_id = ?" +
          step_filter + " ORDER BY seq",
      "history steps");
  if (!steps) return steps.error();
  for (auto& e : out) {
    steps->reset();
    steps->bind(e.id);
    for (const auto& a : step_args) steps->bind(a);
    auto r = steps->each([&](const sqlite::Statement& row) {
      e.step_list.push_back(
          HistoryStep{row.text(0), row.text(1), row.text(2), row.text(3), row.text(4)});
    });
    if (!r) return r.error();
  }
  return out;
}

}  // namespace flytecd::ledger
