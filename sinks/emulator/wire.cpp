#include "sinks/emulator/wire.hpp"

#include "sinks/emulator/admin_common.hpp"

namespace flytecd::sinks::emulator {
namespace {

constexpr uint32_t k_plan_closure = fa::LaunchPlan::kClosureFieldNumber;
constexpr uint32_t k_closure_state = fa::LaunchPlanClosure::kStateFieldNumber;
constexpr uint32_t k_closure_updated_at = fa::LaunchPlanClosure::kUpdatedAtFieldNumber;

enum WireType : uint32_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

bool read_varint(std::string_view s, size_t& i, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (i == s.size()) return false;
    const auto b = static_cast<unsigned char>(s[i++]);
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void put_tag(std::string* out, uint32_t number, WireType type) {
  put_varint(out, (static_cast<uint64_t>(number) << 3) | type);
}

// One field at s[i]: its number, all its bytes (tag included) and, when length-delimited, its
// payload. false when the bytes there are not a field this reader accepts (groups, truncation).
struct Field {
  uint32_t number = 0;
  uint64_t type = 0;
  std::string_view whole;
  std::string_view payload;
};

bool next_field(std::string_view s, size_t& i, Field& f) {
  const size_t start = i;
  uint64_t tag = 0;
  if (!read_varint(s, i, tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF) return false;
  f.number = static_cast<uint32_t>(tag >> 3);
  f.type = tag & 7;
  f.payload = {};
  switch (f.type) {
    case varint: {
      uint64_t ignored = 0;
      if (!read_varint(s, i, ignored)) return false;
      break;
    }
    case fixed64:
      if (s.size() - i < 8) return false;
      i += 8;
      break;
    case fixed32:
      if (s.size() - i < 4) return false;
      i += 4;
      break;
    case length_delimited: {
      uint64_t len = 0;
      if (!read_varint(s, i, len) || len > s.size() - i) return false;
      f.payload = s.substr(i, len);
      i += len;
      break;
    }
    default:
      return false;
  }
  f.whole = s.substr(start, i - start);
  return true;
}

// An int32 or enum field as protobuf writes it (negative values as ten-byte varints); nothing
// for zero (proto3 implicit presence).
void put_int(std::string* out, uint32_t number, int64_t v) {
  if (v == 0) return;
  put_tag(out, number, varint);
  put_varint(out, static_cast<uint64_t>(v));
}

// closure.updated_at as decode() sets it: set_timestamp's seconds and nanos, encoded by protobuf.
std::string timestamp_of(int64_t ms) {
  google::protobuf::Timestamp ts;
  detail::set_timestamp(&ts, ms);
  return ts.SerializeAsString();
}

// The closure's bytes with state and updated_at replaced; fields stay in ascending order.
std::optional<std::string> closure_with(std::string_view closure, int state,
                                        int64_t updated_at_ms) {
  std::string out;
  out.reserve(closure.size() + 16);
  put_int(&out, k_closure_state, state);
  bool updated_written = false;
  auto write_updated = [&] {
    append_length_delimited(&out, k_closure_updated_at, timestamp_of(updated_at_ms));
    updated_written = true;
  };
  uint32_t last = 0;
  for (size_t i = 0; i < closure.size();) {
    Field f;
    if (!next_field(closure, i, f) || f.number < last) return std::nullopt;
    last = f.number;
    if (f.number == k_closure_state || f.number == k_closure_updated_at) continue;
    if (f.number > k_closure_updated_at && !updated_written) write_updated();
    out.append(f.whole);
  }
  if (!updated_written) write_updated();
  return out;
}

}  // namespace

void append_length_delimited(std::string* out, uint32_t number, std::string_view payload) {
  put_tag(out, number, length_delimited);
  put_varint(out, payload.size());
  out->append(payload);
}

std::optional<std::string> launch_plan_with_state(std::string_view blob, int state,
                                                  int64_t updated_at_ms) {
  std::string out;
  out.reserve(blob.size() + 16);
  bool closure_written = false;
  auto write_closure = [&](std::string_view closure) {
    auto edited = closure_with(closure, state, updated_at_ms);
    if (edited) append_length_delimited(&out, k_plan_closure, *edited);
    closure_written = true;
    return edited.has_value();
  };
  uint32_t last = 0;
  for (size_t i = 0; i < blob.size();) {
    Field f;
    // Ascending numbers, each at most once where it matters: a second closure would be merged
    // into the first by a parser, which this copy does not do.
    if (!next_field(blob, i, f) || f.number < last ||
        (f.number == k_plan_closure && closure_written))
      return std::nullopt;
    last = f.number;
    if (f.number == k_plan_closure) {
      if (f.type != length_delimited || !write_closure(f.payload)) return std::nullopt;
      continue;
    }
    if (f.number > k_plan_closure && !closure_written && !write_closure({})) return std::nullopt;
    out.append(f.whole);
  }
  if (!closure_written && !write_closure({})) return std::nullopt;
  return out;
}

}  // namespace flytecd::sinks::emulator
