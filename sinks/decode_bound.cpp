#include "sinks/decode_bound.hpp"

#include <unordered_map>

namespace flytecd::sinks {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// What the C++ runtime allocates, from above (malloc's own header included, vectors at twice
// their size as their capacity doubles).
constexpr uint64_t k_alloc = 16;        // malloc's header, per allocation
constexpr uint64_t k_slot = 16;         // a repeated element's pointer slot
constexpr uint64_t k_string = 32 + 16;  // a heap std::string (+ its characters)
constexpr uint64_t k_unknown = 32;      // an UnknownField entry
constexpr uint64_t k_group = 64;        // an unknown group's own UnknownFieldSet
constexpr uint64_t k_map_node = 64;     // a map entry's node and hash bucket (key, value apart)
constexpr int k_max_depth = 100;        // protobuf's default recursion limit

bool read_varint(const uint8_t*& p, const uint8_t* end, uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    const uint8_t b = *p++;
    out |= static_cast<uint64_t>(b & 0x7Fu) << shift;
    if ((b & 0x80u) == 0) return true;
  }
  return false;
}

// The wire type a field's values are written with (not packed).
uint32_t wire_type_of(const FieldDescriptor& f) {
  switch (f.type()) {
    case FieldDescriptor::TYPE_MESSAGE:
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BYTES:
      return 2;
    case FieldDescriptor::TYPE_GROUP:
      return 3;
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      return 1;
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
      return 5;
    default:
      return 0;
  }
}

class Estimator {
 public:
  DecodeEstimate run(const Descriptor& type, std::string_view wire) {
    const auto* p = reinterpret_cast<const uint8_t*>(wire.data());
    m_out.bytes = object(&type);
    m_out.malformed = !message(&type, p, p + wire.size(), 0, 0);
    return m_out;
  }

 private:
  // The decoded object of a message type (its prototype holds nothing else).
  uint64_t object(const Descriptor* d) {
    auto [it, inserted] = m_objects.emplace(d, 0);
    if (inserted) {
      // A map entry is decoded into the map's own node (its key and value are counted as the
      // entry's fields); the prototype of a map entry cannot measure itself.
      const auto* proto =
          d->options().map_entry()
              ? nullptr
              : google::protobuf::MessageFactory::generated_factory()->GetPrototype(d);
      it->second = (proto != nullptr ? proto->SpaceUsedLong() : k_map_node) + k_alloc;
    }
    return it->second;
  }

  void add(uint64_t bytes) {
    m_out.bytes += bytes;
    ++m_out.elements;
  }

  // A varint, fixed32 or fixed64 value of field `f` (null: unknown).
  void scalar(const FieldDescriptor* f, uint32_t wire) {
    if (f == nullptr || wire_type_of(*f) != wire)
      add(k_unknown);
    else if (f->is_repeated())
      add(16);  // at most 8 bytes, twice for the capacity
  }

  // Fields of `d` (null: an unknown group) from `p` up to `end`, or up to the end tag of group
  // `group` (0: none). Returns false on malformed input.
  bool message(const Descriptor* d, const uint8_t*& p, const uint8_t* end, int depth,
               uint64_t group) {
    if (depth > k_max_depth) return false;
    while (p < end) {
      uint64_t tag = 0;
      if (!read_varint(p, end, tag)) return false;
      const auto wire = static_cast<uint32_t>(tag & 7u);
      const uint64_t number = tag >> 3;
      if (number == 0 || number > 0x1FFFFFFFu) return false;
      if (wire == 4) return group != 0 && number == group;
      const FieldDescriptor* f =
          d != nullptr ? d->FindFieldByNumber(static_cast<int>(number)) : nullptr;
      switch (wire) {
        case 0: {
          uint64_t v = 0;
          if (!read_varint(p, end, v)) return false;
          scalar(f, wire);
          break;
        }
        case 1:
        case 5: {
          const size_t n = wire == 1 ? 8 : 4;
          if (static_cast<size_t>(end - p) < n) return false;
          p += n;
          scalar(f, wire);
          break;
        }
        case 2: {
          uint64_t len = 0;
          if (!read_varint(p, end, len) || len > static_cast<uint64_t>(end - p)) return false;
          const uint8_t* body = p;
          p += len;
          if (!length_delimited(f, body, body + len, depth)) return false;
          break;
        }
        case 3:
          add(k_unknown + k_group);
          if (!message(nullptr, p, end, depth + 1, number)) return false;
          break;
        default:
          return false;
      }
    }
    return group == 0;  // a group ends with its end tag, not with its enclosing bytes
  }

  bool length_delimited(const FieldDescriptor* f, const uint8_t* p, const uint8_t* end, int depth) {
    const auto len = static_cast<uint64_t>(end - p);
    if (f != nullptr && f->type() == FieldDescriptor::TYPE_MESSAGE) {
      add(object(f->message_type()) + (f->is_repeated() ? k_slot : 0));
      return message(f->message_type(), p, end, depth + 1, 0);
    }
    if (f != nullptr &&
        (f->type() == FieldDescriptor::TYPE_STRING || f->type() == FieldDescriptor::TYPE_BYTES)) {
      add(k_string + len + (f->is_repeated() ? k_slot : 0));
      return true;
    }
    if (f != nullptr && f->is_repeated() && f->is_packable()) {
      // Packed values: count them (each is at most 8 bytes decoded, twice for the capacity).
      uint64_t count = 0;
      switch (wire_type_of(*f)) {
        case 1:
          if (len % 8 != 0) return false;
          count = len / 8;
          break;
        case 5:
          if (len % 4 != 0) return false;
          count = len / 4;
          break;
        default:
          if (len > 0 && (end[-1] & 0x80u) != 0) return false;
          for (const uint8_t* q = p; q < end; ++q) count += (*q & 0x80u) == 0;
          break;
      }
      m_out.bytes += 16 * count + k_alloc;
      m_out.elements += count;
      return true;
    }
    add(k_unknown + k_string + len);  // unknown, or a wire type the field does not have
    return true;
  }

  DecodeEstimate m_out;
  std::unordered_map<const Descriptor*, uint64_t> m_objects;
};

}  // namespace

DecodeEstimate estimate_decode(const Descriptor& type, std::string_view wire) {
  return Estimator().run(type, wire);
}

Status check_decode(const DecodeEstimate& estimate, size_t wire_bytes, uint64_t max_bytes,
                    const std::string& max_key, const std::string& what) {
  const std::string figures = "about " + std::to_string(estimate.bytes) + " bytes of memory (" +
                              std::to_string(estimate.elements) + " elements in " +
                              std::to_string(wire_bytes) + " bytes of protobuf)";
  const uint64_t ratio_bound =
      k_max_decode_amplification * static_cast<uint64_t>(wire_bytes) + k_decode_amplification_floor;
  if (estimate.bytes > ratio_bound)
    return make_error(ErrorCode::invalid_input,
                      what + ": decoding it would take " + figures + ", more than " +
                          std::to_string(k_max_decode_amplification) +
                          " bytes per byte of protobuf (a decode bomb: many empty or tiny "
                          "entries); expected an entity as pyflyte package writes it");
  if (estimate.bytes > max_bytes)
    return make_error(ErrorCode::invalid_input,
                      what + ": decoding it would take " + figures +
                          ", more than the package memory budget of " + std::to_string(max_bytes) +
                          " bytes (" + max_key + "); expected a smaller entity, or raise " +
                          max_key);
  return ok_status();
}

}  // namespace flytecd::sinks
