#include "daemon/common/proto_paths.hpp"

#include <algorithm>

namespace flytecd::proto_paths {
namespace {

namespace pb = google::protobuf;

const pb::FieldDescriptor* by_json_name(const pb::Descriptor* d, std::string_view name) {
  for (int i = 0; i < d->field_count(); ++i)
    if (d->field(i)->json_name() == name || d->field(i)->name() == name) return d->field(i);
  return nullptr;
}

bool is_set(const pb::Message& m, const pb::FieldDescriptor* f) {
  const auto* r = m.GetReflection();
  return f->is_repeated() ? r->FieldSize(m, f) > 0 : r->HasField(m, f);
}

void lost_into(const pb::Message& sent, const pb::Message& kept, const std::string& prefix,
               std::vector<std::string>& out) {
  std::vector<const pb::FieldDescriptor*> set;
  sent.GetReflection()->ListFields(sent, &set);
  for (const auto* f : set) {
    const std::string path = prefix.empty() ? f->json_name() : prefix + "." + f->json_name();
    if (!is_set(kept, f)) {
      out.push_back(path);
    } else if (f->message_type() && !f->is_repeated() && !f->is_map()) {
      lost_into(sent.GetReflection()->GetMessage(sent, f),
                kept.GetReflection()->GetMessage(kept, f), path, out);
    }
  }
}

}  // namespace

void clear(pb::Message& m, std::string_view path) {
  pb::Message* cur = &m;
  for (;;) {
    const size_t dot = path.find('.');
    const auto* f = by_json_name(cur->GetDescriptor(), path.substr(0, dot));
    if (!f) return;
    if (dot == std::string_view::npos) {
      cur->GetReflection()->ClearField(cur, f);
      return;
    }
    if (!f->message_type() || f->is_repeated() || !cur->GetReflection()->HasField(*cur, f)) return;
    cur = cur->GetReflection()->MutableMessage(cur, f);
    path.remove_prefix(dot + 1);
  }
}

std::vector<std::string> lost(const pb::Message& sent, const pb::Message& kept) {
  std::vector<std::string> out;
  if (sent.GetDescriptor() != kept.GetDescriptor()) return out;
  lost_into(sent, kept, "", out);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace flytecd::proto_paths
