#pragma once

// Helpers shared by the Admin method implementations (internal to sinks/emulator): FlyteAdmin's
// validation messages, identifiers, digests and structure diffs, and list paging/filters.

#include <google/protobuf/message.h>
#include <google/protobuf/timestamp.pb.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sinks/emulator/admin.hpp"

namespace flytecd::sinks::emulator::detail {

int64_t now_ms();
void set_timestamp(google::protobuf::Timestamp* ts, int64_t ms);

Error invalid(std::string message);           // INVALID_ARGUMENT
Error missing(std::string_view field);        // INVALID_ARGUMENT "missing <field>"
Error invalid_value(std::string_view field);  // INVALID_ARGUMENT "invalid value for <field>"
Error not_found(std::string message);         // NOT_FOUND
Error internal(std::string message);          // INTERNAL

// Go-ish text of a proto ("project:\"p\" domain:\"d\""), as FlyteAdmin's %v prints messages.
std::string proto_text(const google::protobuf::Message& m);
// Go's prototext one-line form of any message ("simple:INTEGER",
// "collection_type:{simple:STRING}").
std::string go_prototext(const google::protobuf::Message& m);
std::string kind_name(EntityKind kind);  // "TASK", "WORKFLOW", "LAUNCH_PLAN"
EntityKey key_of(EntityKind kind, const fc::Identifier& id);
fc::Identifier identifier_of(const EntityKey& key);  // with resource_type set
// NOT_FOUND "missing entity of type TASK with identifier project:\"p\" …".
Error missing_entity(const EntityKey& key);

// rpc/adminservice: a request whose id has resource_type UNSPECIFIED gets `type` filled in
// before the manager validates it (GetWorkflow, GetLaunchPlan, UpdateLaunchPlan, ...).
template <typename Req>
Req with_resource_type(const Req& req, fc::ResourceType type) {
  Req out = req;
  if (out.has_id() && out.id().resource_type() == fc::UNSPECIFIED)
    out.mutable_id()->set_resource_type(type);
  return out;
}

// validation.ValidateIdentifier: nullptr means the id is unset.
Status validate_identifier(const fc::Identifier* id, fc::ResourceType expected);
// validation.ValidateProjectAndDomain (exists, ACTIVE, configured domain).
Status validate_project_and_domain(Tx& tx, const AdminConfig& config, const std::string& project,
                                   const std::string& domain);
// validation.ValidateProjectForUpdate (exists and ACTIVE) / ValidateProjectExists.
Status validate_project_for_update(Tx& tx, const std::string& project);
Status validate_project_exists(Tx& tx, const std::string& project);
// validation.validateLabels: at most 16 entries, keys k8s IsQualifiedName, values
// IsValidLabelValue, with Kubernetes' messages. nullptr = unset.
Status validate_labels(const fa::Labels* labels);
// Kubernetes' apimachinery messages (pkg/util/validation), formatted as Go's %v of []string.
std::vector<std::string> k8s_qualified_name_errors(const std::string& value);
std::vector<std::string> k8s_label_value_errors(const std::string& value);
std::vector<std::string> k8s_dns1123_label_errors(const std::string& value);
std::string go_list(const std::vector<std::string>& items);  // "[a b]"

bool parse_blob(google::protobuf::Message* m, const std::string& blob);
std::string serialize(const google::protobuf::Message& m);  // deterministic (sorted maps)
// Hex digest of the deterministic serialization: equal digests = identical structure.
std::string digest_of(const google::protobuf::Message& m);
// FlyteAdmin's "different structure" body: one "<json-pointer>:\n\t- <old> \n\t+ <new>" block
// per differing path, joined by "\n".
std::string structure_diff(const google::protobuf::Message& old_msg,
                           const google::protobuf::Message& new_msg);

// Runs `body(tx)` in one transaction; a write commits only when body succeeded.
template <typename F>
Status in_tx(Store& store, bool write, F&& body) {
  auto tx = store.begin(write);
  if (!tx) return tx.error();
  Status st = body(*tx);
  if (!st) return st;
  return write ? tx->commit() : ok_status();
}

// ---- lists: FlyteAdmin filter expressions ("eq(name,x)+value_in(version,a;b)"), sort, paging.

struct Filter {
  std::string op;
  std::string field;
  std::vector<std::string> values;
};
Result<std::vector<Filter>> parse_filters(const std::string& expr);
// Field value for filters and sorting; nullopt = unknown field (InvalidArgument).
using FieldFn = std::function<std::optional<std::string>(const std::string& field)>;
Result<bool> filters_match(const std::vector<Filter>& filters, const FieldFn& field);
Result<uint64_t> parse_token(const std::string& token);
// The managers' token check: INVALID_ARGUMENT "invalid pagination token T for METHOD" (no
// " for ..." when `method` is empty, as ListLaunchPlanIds).
Status validate_token(const std::string& token, const std::string& method);
std::string pad_number(int64_t v);  // sortable decimal string

// Filters, sorts (stable; no sort = insertion order) and pages `rows` in place.
// Returns the next-page token: offset+limit when a full page was returned, else "".
// limit 0 = no limit.
template <typename Row, typename GetField>
Result<std::string> apply_list(std::vector<Row>& rows, const std::string& filter_expr,
                               const fa::Sort* sort, uint32_t limit, const std::string& token,
                               GetField get_field) {
  auto filters = parse_filters(filter_expr);
  if (!filters) return filters.error();
  std::vector<Row> kept;
  for (auto& r : rows) {
    auto ok = filters_match(*filters, [&](const std::string& f) { return get_field(r, f); });
    if (!ok) return ok.error();
    if (*ok) kept.push_back(std::move(r));
  }
  if (sort != nullptr && !sort->key().empty()) {
    if (!kept.empty() && !get_field(kept.front(), sort->key())) {
      return invalid("invalid sort key '" + sort->key() + "'");
    }
    const bool asc = sort->direction() == fa::Sort::ASCENDING;
    std::stable_sort(kept.begin(), kept.end(), [&](const Row& a, const Row& b) {
      const auto va = get_field(a, sort->key()).value_or("");
      const auto vb = get_field(b, sort->key()).value_or("");
      return asc ? va < vb : vb < va;
    });
  }
  auto offset = parse_token(token);
  if (!offset) return offset.error();
  const size_t begin = std::min<size_t>(*offset, kept.size());
  const size_t end = limit == 0 ? kept.size() : std::min<size_t>(begin + limit, kept.size());
  rows.assign(std::make_move_iterator(kept.begin() + static_cast<std::ptrdiff_t>(begin)),
              std::make_move_iterator(kept.begin() + static_cast<std::ptrdiff_t>(end)));
  if (limit != 0 && rows.size() == limit) return std::to_string(begin + rows.size());
  return std::string();
}

}  // namespace flytecd::sinks::emulator::detail
