#include "storage/change_log.hpp"

#include "storage/encoding.hpp"

#include <boost/json.hpp>

namespace cl::storage {

using namespace encoding;

namespace {

constexpr char format_v2 = '\x02';
constexpr char format_v3 = '\x03';

bool valid_kind(unsigned v) { return v >= 1 && v <= 5; }
bool valid_op(unsigned v) { return v >= 1 && v <= 9; }

/// Format 1 wrote `{"op":"create|update|promote|version|grant|revoke","tenant","kind","id"}`.
std::optional<change_entry> decode_json(std::uint64_t seq, std::string_view bytes) {
  boost::system::error_code ec;
  auto v = boost::json::parse(bytes, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto& o = v.as_object();
  auto text = [&](const char* name) -> std::string {
    auto* m = o.if_contains(name);
    return m && m->is_string() ? std::string{m->as_string()} : std::string{};
  };
  change_entry e;
  e.seq = seq;
  e.tenant = text("tenant");
  e.id = text("id");
  auto kind = text("kind"), op = text("op");
  if (kind == "resource") e.kind = change_kind::resource;
  else if (kind == "work") e.kind = change_kind::work;
  else if (kind == "contract") e.kind = change_kind::contract;
  else return std::nullopt;
  if (op == "create") e.op = change_op::created;
  else if (op == "update") e.op = change_op::replaced;
  else if (op == "promote") e.op = change_op::promoted;
  else if (op == "version") e.op = e.kind == change_kind::contract ? change_op::contract_changed : change_op::snapshotted;
  else if (op == "grant") e.op = change_op::granted;
  else if (op == "revoke") e.op = change_op::revoked;
  else return std::nullopt;
  return e;
}

}  // namespace

std::string_view change_op_name(change_op op) {
  switch (op) {
    case change_op::created: return "created";
    case change_op::replaced: return "replaced";
    case change_op::patched: return "patched";
    case change_op::promoted: return "promoted";
    case change_op::snapshotted: return "snapshotted";
    case change_op::granted: return "granted";
    case change_op::revoked: return "revoked";
    case change_op::contract_changed: return "contract_changed";
    case change_op::policy_changed: return "policy_changed";
  }
  return "unknown";
}

std::string_view change_kind_name(change_kind kind) {
  switch (kind) {
    case change_kind::resource: return "resource";
    case change_kind::work: return "work";
    case change_kind::contract: return "contract";
    case change_kind::blob: return "blob";
    case change_kind::policy: return "policy";
  }
  return "unknown";
}

std::string encode_change(const change_entry& e) {
  std::string out;
  out.reserve(21 + e.tenant.size() + e.id.size() + e.version.size() + e.hash.size() + e.principal.size() + 10);
  out.push_back(format_v3);
  out.push_back(static_cast<char>(e.kind));
  out.push_back(static_cast<char>(e.op));
  put_u64(out, static_cast<std::uint64_t>(e.at_ms));
  put_u64(out, e.transaction);
  put_text(out, e.tenant);
  put_text(out, e.id);
  put_text(out, e.version);
  put_text(out, e.hash);
  put_text(out, e.principal);
  return out;
}

std::optional<change_entry> decode_change(std::uint64_t seq, std::string_view bytes) {
  if (bytes.empty()) return std::nullopt;
  if (bytes.front() == '{') return decode_json(seq, bytes);
  bool v3 = bytes.front() == format_v3;
  if ((!v3 && bytes.front() != format_v2) || bytes.size() < (v3 ? 19u : 11u)) return std::nullopt;
  auto kind = static_cast<unsigned char>(bytes[1]), op = static_cast<unsigned char>(bytes[2]);
  if (!valid_kind(kind) || !valid_op(op)) return std::nullopt;
  change_entry e;
  e.seq = seq;
  e.kind = static_cast<change_kind>(kind);
  e.op = static_cast<change_op>(op);
  e.at_ms = static_cast<std::int64_t>(get_u64(bytes.substr(3, 8)));
  if (v3) e.transaction = get_u64(bytes.substr(11, 8));
  auto rest = bytes.substr(v3 ? 19 : 11);
  if (!get_text(rest, e.tenant) || !get_text(rest, e.id)) return std::nullopt;
  if (v3 && (!get_text(rest, e.version) || !get_text(rest, e.hash) || !get_text(rest, e.principal))) return std::nullopt;
  if (!rest.empty()) return std::nullopt;
  return e;
}

}  // namespace cl::storage
