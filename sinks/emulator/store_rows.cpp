// The emulator store's rows (store.hpp): the SQL of each Tx read and write. The transactions,
// the group commit and the schema are in store.cpp.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/common/sqlite.hpp"
#include "sinks/emulator/store.hpp"  // IWYU pragma: associated

namespace flytecd::sinks::emulator {
namespace {

// Collects every row through `read`.
template <typename T, typename F>
Result<std::vector<T>> collect(sqlite::Statement& st, F read) {
  std::vector<T> out;
  auto s = st.each([&](const sqlite::Statement& row) { out.push_back(read(row)); });
  if (!s) return s.error();
  return out;
}

template <typename T, typename F>
Result<std::optional<T>> first(sqlite::Statement& st, F read) {
  auto rows = collect<T>(st, read);
  if (!rows) return rows.error();
  if (rows->empty()) return std::optional<T>{};
  return std::optional<T>(std::move(rows->front()));
}

ProjectRow read_project(const sqlite::Statement& st) {
  return ProjectRow{st.text(0), st.blob(1), static_cast<int>(st.int64(2)), st.int64(3)};
}

constexpr const char* k_resource_cols =
    "project, domain, workflow, launch_plan, resource_type, priority, attributes";

ResourceRow read_resource(const sqlite::Statement& st) {
  return ResourceRow{
      ResourceKey{st.text(0), st.text(1), st.text(2), st.text(3), static_cast<int>(st.int64(4))},
      static_cast<int>(st.int64(5)), st.blob(6)};
}

constexpr const char* k_entity_cols =
    "kind, project, domain, name, version, blob, digest, state, created_at, updated_at, seq";

EntityRow read_entity(const sqlite::Statement& st) {
  EntityRow r;
  r.key = EntityKey{static_cast<EntityKind>(st.int64(0)), st.text(1), st.text(2), st.text(3),
                    st.text(4)};
  r.blob = st.blob(5);
  r.digest = st.text(6);
  r.state = static_cast<int>(st.int64(7));
  r.created_at_ms = st.int64(8);
  r.updated_at_ms = st.int64(9);
  r.seq = st.int64(10);
  return r;
}

std::string sql(const char* head, const char* cols, const char* tail) {
  return std::string(head) + cols + tail;
}

}  // namespace

std::string resource_sql::list_of_type() {
  // Through resources_by_type (resource_type, priority DESC, seq): no scan, no sort.
  return sql("SELECT ", k_resource_cols,
             " FROM resources WHERE resource_type = ? ORDER BY priority DESC, seq");
}

std::string resource_sql::first_like(const ResourceKey& k) {
  // Only the set fields go into the WHERE clause, as GORM builds it; that also lets SQLite use
  // the (project, domain, ...) unique index ("? = '' OR project = ?" scanned the whole table on
  // every plugin-override update: 36k rows each at 2,000 projects).
  // "+resource_type": the type's own index (resources_by_type, for lists) never serves a lookup
  // by project; without the + SQLite took it for (project, domain) and walked every row of the
  // type on each project-domain PLUGIN_OVERRIDE write.
  std::string where = "+resource_type = ?";
  for (auto [column, value] :
       {std::pair{" AND project = ?", &k.project}, std::pair{" AND domain = ?", &k.domain},
        std::pair{" AND workflow = ?", &k.workflow},
        std::pair{" AND launch_plan = ?", &k.launch_plan}})
    if (!value->empty()) where += column;
  const std::string tail = " FROM resources WHERE " + where + " ORDER BY seq LIMIT 1";
  return sql("SELECT ", k_resource_cols, tail.c_str());
}

std::string resource_sql::most_specific() {
  // FlyteAdmin: resource_type = T AND domain IN ('', d) AND project IN ('', p)
  //   AND workflow IN ('', wf) AND launch_plan IN ('') ORDER BY priority DESC LIMIT 1
  // "+resource_type" keeps SQLite on the (project, domain, ...) unique index (as in
  // first_like): resources_by_type has the ORDER BY's order, and with it SQLite walks every row
  // of the type to find the first that matches.
  return sql("SELECT ", k_resource_cols,
             " FROM resources WHERE +resource_type = ? AND domain IN ('', ?) AND project IN "
             "('', ?) AND workflow IN ('', ?) AND launch_plan = '' "
             "ORDER BY priority DESC, seq LIMIT 1");
}

Result<std::optional<ProjectRow>> Tx::get_project(const std::string& id) {
  auto st = m_store->m_db->prepare("SELECT id, blob, state, seq FROM projects WHERE id = ?",
                                   "get project");
  if (!st) return st.error();
  st->bind(id);
  return first<ProjectRow>(*st, read_project);
}

Status Tx::insert_project(const ProjectRow& row) {
  auto st = m_store->m_db->prepare("INSERT INTO projects(id, blob, state) VALUES (?, ?, ?)",
                                   "insert project");
  if (!st) return st.error();
  st->bind(row.id).bind_blob(row.blob).bind(row.state);
  return st->run();
}

Status Tx::update_project(const ProjectRow& row) {
  auto st = m_store->m_db->prepare("UPDATE projects SET blob = ?, state = ? WHERE id = ?",
                                   "update project");
  if (!st) return st.error();
  st->bind_blob(row.blob).bind(row.state).bind(row.id);
  return st->run();
}

Result<std::vector<ProjectRow>> Tx::list_projects() {
  auto st = m_store->m_db->prepare("SELECT id, blob, state, seq FROM projects ORDER BY seq",
                                   "list projects");
  if (!st) return st.error();
  return collect<ProjectRow>(*st, read_project);
}

Result<std::optional<ResourceRow>> Tx::get_resource(const ResourceKey& k) {
  const auto q = sql("SELECT ", k_resource_cols,
                     " FROM resources WHERE project = ? AND domain = ? AND workflow = ? AND "
                     "launch_plan = ? AND resource_type = ?");
  auto st = m_store->m_db->prepare(q.c_str(), "get resource");
  if (!st) return st.error();
  st->bind(k.project).bind(k.domain).bind(k.workflow).bind(k.launch_plan).bind(k.resource_type);
  return first<ResourceRow>(*st, read_resource);
}

Result<std::optional<ResourceRow>> Tx::first_resource_like(const ResourceKey& k) {
  auto st = m_store->m_db->prepare(resource_sql::first_like(k).c_str(), "get raw resource");
  if (!st) return st.error();
  st->bind(k.resource_type);
  for (const auto* v : {&k.project, &k.domain, &k.workflow, &k.launch_plan})
    if (!v->empty()) st->bind(*v);
  return first<ResourceRow>(*st, read_resource);
}

Result<std::optional<ResourceRow>> Tx::most_specific_resource(int type, const std::string& project,
                                                              const std::string& domain,
                                                              const std::string& workflow) {
  auto st = m_store->m_db->prepare(resource_sql::most_specific().c_str(), "get resource");
  if (!st) return st.error();
  st->bind(type).bind(domain).bind(project).bind(workflow);
  return first<ResourceRow>(*st, read_resource);
}

Status Tx::upsert_resource(const ResourceRow& r) {
  auto st = m_store->m_db->prepare(
      "INSERT INTO resources(project, domain, workflow, launch_plan, resource_type, priority, "
      "attributes) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(project, domain, workflow, "
      "launch_plan, resource_type) DO UPDATE SET priority = excluded.priority, attributes = "
      "excluded.attributes",
      "upsert resource");
  if (!st) return st.error();
  st->bind(r.key.project).bind(r.key.domain).bind(r.key.workflow).bind(r.key.launch_plan);
  st->bind(r.key.resource_type).bind(r.priority).bind_blob(r.attributes);
  return st->run();
}

Result<int64_t> Tx::delete_resources(int type, const std::string& project,
                                     const std::string& domain, const std::string& workflow) {
  // Mirrors a GORM struct condition: empty fields are dropped from the WHERE clause.
  auto st = m_store->m_db->prepare(
      "DELETE FROM resources WHERE resource_type = ? AND project = ? AND (? = '' OR domain = ?) "
      "AND (? = '' OR workflow = ?)",
      "delete resources");
  if (!st) return st.error();
  st->bind(type).bind(project).bind(domain).bind(domain).bind(workflow).bind(workflow);
  auto ok = st->run();
  if (!ok) return ok.error();
  return static_cast<int64_t>(m_store->m_db->changes());
}

Result<std::vector<ResourceRow>> Tx::list_resources(int type) {
  auto st = m_store->m_db->prepare(resource_sql::list_of_type().c_str(), "list resources");
  if (!st) return st.error();
  st->bind(type);
  return collect<ResourceRow>(*st, read_resource);
}

Result<std::optional<EntityRow>> Tx::get_entity(const EntityKey& k) {
  const auto q = sql("SELECT ", k_entity_cols,
                     " FROM entities WHERE kind = ? AND project = ? AND domain = ? AND name = ? "
                     "AND version = ?");
  auto st = m_store->m_db->prepare(q.c_str(), "get entity");
  if (!st) return st.error();
  st->bind(static_cast<int>(k.kind)).bind(k.project).bind(k.domain).bind(k.name).bind(k.version);
  return first<EntityRow>(*st, read_entity);
}

Status Tx::insert_entity(const EntityRow& r) {
  auto st = m_store->m_db->prepare(
      "INSERT INTO entities(kind, project, domain, name, version, blob, digest, state, "
      "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      "insert entity");
  if (!st) return st.error();
  st->bind(static_cast<int>(r.key.kind)).bind(r.key.project).bind(r.key.domain);
  st->bind(r.key.name).bind(r.key.version).bind_blob(r.blob).bind(r.digest).bind(r.state);
  st->bind(r.created_at_ms).bind(r.updated_at_ms);
  return st->run();
}

Result<std::vector<EntityRow>> Tx::list_entities(EntityKind kind, const std::string& project,
                                                 const std::string& domain, const std::string& name,
                                                 const std::vector<std::string>& versions) {
  // Only the fields given are compared, so SQLite picks the index that matches them (a list at
  // some versions reads entities_by_version; "? = '' OR version = ?" scanned every row of the
  // kind).
  std::string where = " FROM entities WHERE kind = ?";
  const std::pair<const char*, const std::string*> fields[] = {
      {" AND project = ?", &project}, {" AND domain = ?", &domain}, {" AND name = ?", &name}};
  for (const auto& [clause, value] : fields)
    if (!value->empty()) where += clause;
  if (!versions.empty()) {
    where += " AND version IN (?";
    for (size_t i = 1; i < versions.size(); ++i) where += ", ?";
    where += ")";
  }
  where += " ORDER BY seq";
  const auto q = sql("SELECT ", k_entity_cols, where.c_str());
  auto st = m_store->m_db->prepare(q.c_str(), "list entities");
  if (!st) return st.error();
  st->bind(static_cast<int>(kind));
  for (const auto& [clause, value] : fields)
    if (!value->empty()) st->bind(*value);
  for (const auto& v : versions) st->bind(v);
  return collect<EntityRow>(*st, read_entity);
}

Status Tx::set_entity_state(const EntityKey& k, int state, int64_t updated_at_ms) {
  auto st = m_store->m_db->prepare(
      "UPDATE entities SET state = ?, updated_at = ? WHERE kind = ? AND project = ? AND "
      "domain = ? AND name = ? AND version = ?",
      "set entity state");
  if (!st) return st.error();
  st->bind(state).bind(updated_at_ms).bind(static_cast<int>(k.kind));
  st->bind(k.project).bind(k.domain).bind(k.name).bind(k.version);
  return st->run();
}

Result<std::vector<EntityKey>> Tx::clear_state(const EntityKey& k, int state,
                                               int64_t updated_at_ms) {
  auto rows = entities_with_state(k.kind, k.project, k.domain, k.name, state);
  if (!rows) return rows.error();
  std::vector<EntityKey> cleared;
  for (const auto& r : *rows) {
    auto st = set_entity_state(r.key, 0, updated_at_ms);
    if (!st) return st.error();
    cleared.push_back(r.key);
  }
  return cleared;
}

Result<std::vector<EntityRow>> Tx::entities_with_state(EntityKind kind, const std::string& project,
                                                       const std::string& domain,
                                                       const std::string& name, int state) {
  const auto q = sql("SELECT ", k_entity_cols,
                     " FROM entities WHERE kind = ? AND project = ? AND domain = ? AND "
                     "(? = '' OR name = ?) AND state = ? ORDER BY seq");
  auto st = m_store->m_db->prepare(q.c_str(), "list entities by state");
  if (!st) return st.error();
  st->bind(static_cast<int>(kind)).bind(project).bind(domain).bind(name).bind(name);
  st->bind(state);
  return collect<EntityRow>(*st, read_entity);
}

Status Tx::put_upload_location(const UploadLocation& loc) {
  auto st = m_store->m_db->prepare(
      "INSERT INTO upload_locations(path, md5, expires_at) VALUES (?, ?, ?) ON CONFLICT(path) "
      "DO UPDATE SET md5 = excluded.md5, expires_at = excluded.expires_at",
      "put upload location");
  if (!st) return st.error();
  st->bind(loc.path).bind_blob(loc.md5).bind(loc.expires_at_ms);
  return st->run();
}

Result<std::optional<UploadLocation>> Tx::get_upload_location(const std::string& path) {
  auto st = m_store->m_db->prepare(
      "SELECT path, md5, expires_at FROM upload_locations WHERE path = ?", "get upload location");
  if (!st) return st.error();
  st->bind(path);
  return first<UploadLocation>(*st, [](const sqlite::Statement& s) {
    return UploadLocation{s.text(0), s.blob(1), s.int64(2)};
  });
}

Status Tx::put_upload(const std::string& native_url, const std::string& md5,
                      const std::string& data) {
  auto st = m_store->m_db->prepare(
      "INSERT INTO uploads(native_url, md5, data) VALUES (?, ?, ?) ON CONFLICT(native_url) "
      "DO UPDATE SET md5 = excluded.md5, data = excluded.data",
      "put upload");
  if (!st) return st.error();
  st->bind(native_url).bind_blob(md5).bind_blob(data);
  return st->run();
}

Result<std::optional<std::string>> Tx::get_upload(const std::string& native_url) {
  auto st = m_store->m_db->prepare("SELECT data FROM uploads WHERE native_url = ?", "get upload");
  if (!st) return st.error();
  st->bind(native_url);
  return first<std::string>(*st, [](const sqlite::Statement& s) { return s.blob(0); });
}

Result<std::optional<std::string>> Tx::get_upload_md5(const std::string& native_url) {
  auto st =
      m_store->m_db->prepare("SELECT md5 FROM uploads WHERE native_url = ?", "get upload md5");
  if (!st) return st.error();
  st->bind(native_url);
  return first<std::string>(*st, [](const sqlite::Statement& s) { return s.blob(0); });
}

Result<std::vector<SettingsRow>> Tx::settings_by_keys(const std::vector<std::string>& keys) {
  std::vector<SettingsRow> out;
  auto st = m_store->m_db->prepare(
      "SELECT key, data, version, created_at, updated_at FROM settings WHERE key = ?",
      "get settings");
  if (!st) return st.error();
  for (const auto& key : keys) {
    st->reset();
    st->bind(key);
    auto row = first<SettingsRow>(*st, [](const sqlite::Statement& s) {
      return SettingsRow{s.text(0), s.text(1), static_cast<uint64_t>(s.int64(2)), s.int64(3),
                         s.int64(4)};
    });
    if (!row) return row.error();
    if (*row) out.push_back(std::move(**row));
  }
  return out;
}

Status Tx::insert_settings(const SettingsRow& row) {
  auto st = m_store->m_db->prepare(
      "INSERT INTO settings(key, data, version, created_at, updated_at) VALUES (?, ?, 1, ?, ?) "
      "ON CONFLICT(key) DO NOTHING",
      "create settings");
  if (!st) return st.error();
  st->bind(row.key).bind(row.data).bind(row.created_at_ms).bind(row.updated_at_ms);
  if (auto s = st->run(); !s) return s;
  if (m_store->m_db->changes() == 0)
    return make_error(ErrorCode::already_exists, "settings already exist: " + row.key);
  return ok_status();
}

Result<int64_t> Tx::update_settings(const std::string& key, const std::string& data,
                                    uint64_t version, int64_t updated_at_ms) {
  auto st = m_store->m_db->prepare(
      "UPDATE settings SET data = ?, version = version + 1, updated_at = ? WHERE key = ? AND "
      "version = ?",
      "update settings");
  if (!st) return st.error();
  st->bind(data).bind(updated_at_ms).bind(key).bind(static_cast<int64_t>(version));
  if (auto s = st->run(); !s) return s.error();
  return static_cast<int64_t>(m_store->m_db->changes());
}

namespace {
constexpr const char* k_flyte2_project_cols =
    "identifier, name, description, labels, state, created_at, updated_at";
Flyte2ProjectRow read_flyte2_project(const sqlite::Statement& s) {
  return Flyte2ProjectRow{s.text(0),  s.text(1),  s.text(2), s.blob(3),
                          s.int64(4), s.int64(5), s.int64(6)};
}
}  // namespace

Status Tx::insert_flyte2_project(const Flyte2ProjectRow& row) {
  auto st =
      m_store->m_db->prepare(std::string("INSERT INTO flyte2_projects(") + k_flyte2_project_cols +
                                 ") VALUES (?, ?, ?, ?, ?, ?, ?) "
                                 "ON CONFLICT(identifier) DO NOTHING",
                             "create project");
  if (!st) return st.error();
  st->bind(row.identifier).bind(row.name).bind(row.description).bind_blob(row.labels);
  st->bind(row.state).bind(row.created_at_ms).bind(row.updated_at_ms);
  if (auto s = st->run(); !s) return s;
  if (m_store->m_db->changes() == 0)
    return make_error(ErrorCode::already_exists, "project already exists: " + row.identifier);
  return ok_status();
}

Result<int64_t> Tx::update_flyte2_project(const Flyte2ProjectRow& row) {
  auto st = m_store->m_db->prepare(
      "UPDATE flyte2_projects SET name = ?, description = ?, labels = ?, state = ?, updated_at = ? "
      "WHERE identifier = ?",
      "update project");
  if (!st) return st.error();
  st->bind(row.name).bind(row.description).bind_blob(row.labels).bind(row.state);
  st->bind(row.updated_at_ms).bind(row.identifier);
  if (auto s = st->run(); !s) return s.error();
  return static_cast<int64_t>(m_store->m_db->changes());
}

Result<std::optional<Flyte2ProjectRow>> Tx::get_flyte2_project(const std::string& identifier) {
  auto st = m_store->m_db->prepare(
      std::string("SELECT ") + k_flyte2_project_cols + " FROM flyte2_projects WHERE identifier = ?",
      "get project");
  if (!st) return st.error();
  st->bind(identifier);
  return first<Flyte2ProjectRow>(*st, read_flyte2_project);
}

Result<std::vector<Flyte2ProjectRow>> Tx::list_flyte2_projects() {
  auto st = m_store->m_db->prepare(
      std::string("SELECT ") + k_flyte2_project_cols + " FROM flyte2_projects ORDER BY seq",
      "list projects");
  if (!st) return st.error();
  return collect<Flyte2ProjectRow>(*st, read_flyte2_project);
}

}  // namespace flytecd::sinks::emulator
