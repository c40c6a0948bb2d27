#include "sinks/emulator/flyte2_projects.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/common/text.hpp"
#include "sinks/emulator/admin_common.hpp"

namespace flytecd::sinks::emulator {
namespace {
using text::parse_int64;
using text::split;
using text::trim;

using detail::invalid;
using detail::now_ms;

// models.ProjectColumns: what filters and sort_by may name.
const std::set<std::string>& project_columns() {
  static const std::set<std::string> k{"identifier", "name",       "description", "labels",
                                       "state",      "created_at", "updated_at"};
  return k;
}

// A column's value as the database compares it.
std::string column_of(const Flyte2ProjectRow& row, const std::string& column) {
  if (column == "identifier") return row.identifier;
  if (column == "name") return row.name;
  if (column == "description") return row.description;
  if (column == "labels") return row.labels;
  if (column == "state") return std::to_string(row.state);
  if (column == "created_at") return std::to_string(row.created_at_ms);
  return std::to_string(row.updated_at_ms);
}

bool numeric_column(const std::string& column) {
  return column == "state" || column == "created_at" || column == "updated_at";
}

// `value` compared as the column's type: the caller has checked that a value for an integer
// column is one (Postgres refuses the query otherwise).
bool same(const std::string& column, const std::string& stored, const std::string& value) {
  if (!numeric_column(column)) return stored == value;
  auto v = parse_int64(value);
  return v && std::to_string(*v) == stored;
}

// The database refuses a query before it runs: the server answers Internal ("failed to list
// projects: …"), not InvalidArgument, because the filter parsed.
Error database_error(const std::string& message) {
  return Error{ErrorCode::internal, "failed to list projects: " + message};
}

// A value bound to an integer column must be one (Postgres: invalid input syntax for type
// integer / bigint); LIKE (contains) over an integer column is no operator at all.
Status check_type(const std::string& fn, const std::string& column,
                  const std::vector<std::string>& values) {
  if (!numeric_column(column)) return ok_status();
  if (fn == "contains")
    return database_error("operator does not exist: " + column + " ~~ text (contains over a " +
                          "non-text column)");
  for (const auto& v : values)
    if (!parse_int64(v))
      return database_error("invalid input syntax for the type of column " + column + ": \"" + v +
                            "\"");
  return ok_status();
}

using RowFilter = std::function<bool(const Flyte2ProjectRow&)>;

// One term of impl.ParseStringFilters: fn(field,value), fn one of eq, ne, contains, value_in.
Result<RowFilter> parse_term(std::string expr) {
  expr = std::string(trim(expr));
  const size_t open = expr.find('(');
  const size_t close = expr.rfind(')');
  if (open == std::string::npos || open == 0 || close != expr.size() - 1)
    return invalid("invalid filter format: " + expr);
  const std::string fn = text::ascii_lower(std::string(trim(expr.substr(0, open))));
  const std::string args = expr.substr(open + 1, close - open - 1);
  const size_t comma = args.find(',');
  if (comma == std::string::npos) return invalid("invalid filter arguments: " + expr);
  const std::string field(trim(args.substr(0, comma)));
  if (!project_columns().count(field)) return invalid("invalid filter field: " + field);
  const std::string value(trim(args.substr(comma + 1)));
  std::vector<std::string> values{value};
  if (fn == "value_in") {
    values.clear();
    for (const auto& v : split(value, ';')) values.emplace_back(trim(v));
  }
  if (fn == "eq" || fn == "ne" || fn == "contains" || fn == "value_in")
    if (auto s = check_type(fn, field, values); !s) return s.error();
  if (fn == "eq")
    return RowFilter([=](const auto& r) { return same(field, column_of(r, field), value); });
  if (fn == "ne")
    return RowFilter([=](const auto& r) { return !same(field, column_of(r, field), value); });
  if (fn == "contains")
    return RowFilter(
        [=](const auto& r) { return column_of(r, field).find(value) != std::string::npos; });
  if (fn == "value_in") {
    return RowFilter([=](const auto& r) {
      const std::string stored = column_of(r, field);
      return std::any_of(values.begin(), values.end(),
                         [&](const std::string& v) { return same(field, stored, v); });
    });
  }
  return invalid("unsupported filter function: " + fn);
}

Result<RowFilter> parse_project_filters(const std::string& filters) {
  std::vector<RowFilter> terms;
  for (const auto& expr : split(filters, '+')) {
    auto term = parse_term(expr);
    if (!term) return term.error();
    terms.push_back(std::move(*term));
  }
  return RowFilter([terms](const Flyte2ProjectRow& r) {
    return std::all_of(terms.begin(), terms.end(), [&](const RowFilter& f) { return f(r); });
  });
}

// fmt.Sscanf(token, "%d"): leading spaces skipped, an optional sign and the digits that follow,
// the rest ignored.
std::optional<int64_t> scan_int(const std::string& token) {
  size_t i = 0;
  while (i < token.size() && std::isspace(static_cast<unsigned char>(token[i]))) ++i;
  const size_t from = i;
  if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
  size_t digits = i;
  while (digits < token.size() && std::isdigit(static_cast<unsigned char>(token[digits]))) ++digits;
  if (digits == i) return std::nullopt;
  return parse_int64(token.substr(from, digits - from));
}

// The schema's `description VARCHAR(300)` (runs/migrations/sql): Postgres refuses a longer one
// (the server answers Internal), and refuses a NUL byte in any text column.
Status check_columns(const project2::Project& p, const char* what) {
  auto fail = [&](const std::string& why) {
    return make_error(ErrorCode::internal,
                      std::string("failed to ") + what + " project " + p.id() + ": " + why);
  };
  if (p.description().size() > 300) {
    // VARCHAR counts characters, not bytes.
    size_t chars = 0;
    for (unsigned char c : p.description())
      if ((c & 0xC0) != 0x80) ++chars;
    if (chars > 300) return fail("value too long for type character varying(300)");
  }
  for (const std::string* text : {&p.id(), &p.name(), &p.description()})
    if (text->find('\0') != std::string::npos)
      return fail("invalid byte sequence for encoding \"UTF8\": 0x00");
  return ok_status();
}

Result<Flyte2ProjectRow> project_model(const project2::Project& p) {
  Flyte2ProjectRow row;
  row.identifier = p.id();
  row.name = p.name();
  row.description = p.description();
  if (p.has_labels() && !p.labels().SerializeToString(&row.labels))
    return make_error(ErrorCode::invalid_input, "failed to marshal project labels");
  row.state = p.state();
  return row;
}

}  // namespace

void Flyte2Projects::fill(const Flyte2ProjectRow& row, project2::Project* out) const {
  out->set_id(row.identifier);
  out->set_name(row.name);
  out->set_description(row.description);
  for (const auto& d : m_domains) {
    auto* domain = out->add_domains();
    domain->set_id(d);
    std::string name = d;
    if (!name.empty())
      name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
    domain->set_name(name);
  }
  if (!row.labels.empty()) out->mutable_labels()->ParseFromString(row.labels);
  out->set_state(static_cast<project2::ProjectState>(row.state));
}

Status Flyte2Projects::create(const project2::CreateProjectRequest& req) {
  if (!req.has_project() || req.project().id().empty()) return invalid("project.id is required");
  if (auto s = check_columns(req.project(), "create"); !s) return s;
  auto row = project_model(req.project());
  if (!row) return row.error();
  row->created_at_ms = row->updated_at_ms = now_ms();
  auto tx = m_store.begin(true);
  if (!tx) return tx.error();
  if (auto s = tx->insert_flyte2_project(*row); !s) {
    if (s.error().code == ErrorCode::already_exists)
      return make_error(ErrorCode::already_exists, "project already exists: " + row->identifier);
    return make_error(ErrorCode::internal,
                      "failed to create project " + row->identifier + ": " + s.error().message);
  }
  return tx->commit();
}

Status Flyte2Projects::seed(const std::string& id) {
  project2::CreateProjectRequest req;
  req.mutable_project()->set_id(id);
  req.mutable_project()->set_name(id);
  req.mutable_project()->set_state(project2::PROJECT_STATE_ACTIVE);
  Status s = create(req);
  if (!s && s.error().code == ErrorCode::already_exists) return ok_status();
  return s;
}

Status Flyte2Projects::update(const project2::UpdateProjectRequest& req) {
  if (!req.has_project() || req.project().id().empty()) return invalid("project.id is required");
  if (auto s = check_columns(req.project(), "update"); !s) return s;
  auto row = project_model(req.project());
  if (!row) return row.error();
  row->updated_at_ms = now_ms();
  auto tx = m_store.begin(true);
  if (!tx) return tx.error();
  auto changed = tx->update_flyte2_project(*row);
  if (!changed)
    return make_error(ErrorCode::internal, "failed to update project " + row->identifier + ": " +
                                               changed.error().message);
  if (*changed == 0)
    return make_error(ErrorCode::not_found, "project not found: " + row->identifier);
  return tx->commit();
}

Status Flyte2Projects::get(const project2::GetProjectRequest& req,
                           project2::GetProjectResponse* out) {
  if (req.id().empty()) return invalid("id is required");
  auto tx = m_store.begin(false);
  if (!tx) return tx.error();
  auto row = tx->get_flyte2_project(req.id());
  if (!row) return make_error(ErrorCode::internal, row.error().message);
  if (auto s = tx->commit(); !s) return s;
  if (!*row) return make_error(ErrorCode::not_found, "project not found: " + req.id());
  fill(**row, out->mutable_project());
  return ok_status();
}

Status Flyte2Projects::list(const project2::ListProjectsRequest& req,
                            project2::ListProjectsResponse* out) {
  int64_t offset = 0;
  if (!req.token().empty()) {
    auto scanned = scan_int(req.token());
    if (!scanned) return invalid("invalid token format: " + req.token());
    if (*scanned < 0)
      return invalid("invalid offset: " + std::to_string(*scanned) + " (must be non-negative)");
    offset = *scanned;
  }
  const std::string sort_key = req.sort_by().key();
  if (!sort_key.empty() && !project_columns().count(sort_key))
    return invalid("invalid sort field: " + sort_key);
  // With no filter, archived (deleted) projects are hidden.
  RowFilter keep = [](const Flyte2ProjectRow& r) {
    return r.state != project2::PROJECT_STATE_ARCHIVED;
  };
  // Only an empty string hides archived projects; one of spaces is trimmed to no filter at all.
  if (!req.filters().empty() && trim(req.filters()).empty())
    keep = [](const auto&) { return true; };
  if (!trim(req.filters()).empty()) {
    auto parsed = parse_project_filters(req.filters());
    if (!parsed) return parsed.error();
    keep = std::move(*parsed);
  }
  auto tx = m_store.begin(false);
  if (!tx) return tx.error();
  auto rows = tx->list_flyte2_projects();
  if (!rows)
    return make_error(ErrorCode::internal, "failed to list projects: " + rows.error().message);
  if (auto s = tx->commit(); !s) return s;
  std::vector<Flyte2ProjectRow> kept;
  for (auto& r : *rows)
    if (keep(r)) kept.push_back(std::move(r));
  if (!sort_key.empty()) {
    const bool ascending = req.sort_by().direction() == flyteidl2::common::Sort::ASCENDING;
    std::stable_sort(kept.begin(), kept.end(), [&](const auto& a, const auto& b) {
      std::string x = column_of(a, sort_key), y = column_of(b, sort_key);
      if (numeric_column(sort_key)) {
        const int64_t xi = *parse_int64(x), yi = *parse_int64(y);
        return ascending ? xi < yi : xi > yi;
      }
      return ascending ? x < y : x > y;
    });
  }
  const size_t limit = req.limit();
  auto* projects = out->mutable_projects();
  for (size_t i = static_cast<size_t>(offset); i < kept.size(); ++i) {
    if (limit > 0 && static_cast<size_t>(projects->projects_size()) == limit) break;
    fill(kept[i], projects->add_projects());
  }
  if (limit > 0 && static_cast<size_t>(projects->projects_size()) == limit)
    projects->set_token(std::to_string(offset + static_cast<int64_t>(limit)));
  return ok_status();
}

}  // namespace flytecd::sinks::emulator
