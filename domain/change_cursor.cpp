#include "domain/change_cursor.hpp"

#include "domain/aead.hpp"
#include "domain/base64url.hpp"
#include "domain/sealed_fields.hpp"

#include <algorithm>
#include <stdexcept>

namespace cl::domain {

namespace {

constexpr char layout = '1';        ///< no epoch (a data dir never restored)
constexpr char epoch_layout = '2';  ///< the epoch, then as layout 1
constexpr char deployment_layout = '3';  ///< the deployment, the epoch (maybe empty), then as layout 1

}  // namespace

std::string feed_binding(std::vector<std::string> types) {
  std::sort(types.begin(), types.end());
  types.erase(std::unique(types.begin(), types.end()), types.end());
  std::string out = "1;";
  for (const auto& t : types) out += t + ",";
  return out;
}

std::string feed_binding_any() {
  return "1;*";
}

feed_cursor_codec::feed_cursor_codec(std::string_view secret, std::string epoch, std::string deployment)
    : seal_key_(hmac_sha256(secret, "contentlake feed cursor 1")),
      id_key_(hmac_sha256(secret, "contentlake event id 1")),
      epoch_(std::move(epoch)),
      deployment_(std::move(deployment)) {
  if (secret.size() < 32) throw std::invalid_argument("the feed cursor secret must have at least 32 bytes");
}

std::string feed_cursor_codec::seal(const feed_position& p) const {
  std::string plain;
  char shape = layout;
  if (!deployment_.empty()) {
    put_field(plain, deployment_);
    put_field(plain, epoch_);
    shape = deployment_layout;
  } else if (!epoch_.empty()) {
    put_field(plain, epoch_);
    shape = epoch_layout;
  }
  put_field(plain, p.tenant);
  put_field(plain, p.binding);
  for (int shift = 56; shift >= 0; shift -= 8) plain.push_back(static_cast<char>((p.after >> shift) & 0xff));
  if (!p.within.empty()) put_field(plain, p.within);
  return base64url_encode(std::string(1, shape) + aead_seal(seal_key_, plain));
}

std::optional<std::uint64_t> feed_cursor_codec::open(std::string_view cursor, std::string_view tenant,
                                                     std::string_view binding, cursor_problem* why,
                                                     std::string* within) const {
  return open_bound(cursor, tenant, &binding, why, within);
}

std::optional<std::uint64_t> feed_cursor_codec::open_position(std::string_view cursor, std::string_view tenant,
                                                              cursor_problem* why) const {
  return open_bound(cursor, tenant, nullptr, why, nullptr);
}

std::optional<std::uint64_t> feed_cursor_codec::open_bound(std::string_view cursor, std::string_view tenant,
                                                           const std::string_view* binding, cursor_problem* why,
                                                           std::string* within) const {
  auto fail = [why](cursor_problem p) -> std::optional<std::uint64_t> {
    if (why) *why = p;
    return std::nullopt;
  };
  auto raw = cursor.size() > 4096 ? std::nullopt : base64url_decode(cursor);
  auto shape = raw && !raw->empty() ? (*raw)[0] : '\0';
  if (!raw || raw->size() < 1 + aead_overhead || (shape != layout && shape != epoch_layout && shape != deployment_layout))
    return fail(cursor_problem::malformed);
  auto plain = aead_open(seal_key_, std::string_view{*raw}.substr(1));
  if (!plain) return fail(cursor_problem::malformed);
  std::string_view in{*plain};
  std::string sealed_deployment, sealed_epoch;
  if (shape == deployment_layout) {
    if (!get_field(in, sealed_deployment) || !get_field(in, sealed_epoch)) return fail(cursor_problem::malformed);
    // Another deployment's (the same secrets, another database): not one this API answered here.
    // One sealed before deployments were named (layouts 1 and 2) opens as this deployment's.
    if (sealed_deployment != deployment_) return fail(cursor_problem::foreign);
  } else if (shape == epoch_layout && !get_field(in, sealed_epoch)) {
    return fail(cursor_problem::malformed);
  }
  if (sealed_epoch != epoch_) return fail(cursor_problem::restored);
  std::string sealed_tenant, sealed_binding;
  if (!get_field(in, sealed_tenant) || !get_field(in, sealed_binding) || in.size() < 8) return fail(cursor_problem::malformed);
  if (sealed_tenant != tenant || (binding && sealed_binding != *binding)) return fail(cursor_problem::mismatch);
  std::uint64_t after = 0;
  for (char c : in.substr(0, 8)) after = (after << 8) | static_cast<unsigned char>(c);
  in.remove_prefix(8);
  std::string inside;
  if (!in.empty() && (!get_field(in, inside) || !in.empty())) return fail(cursor_problem::malformed);
  if (within) *within = std::move(inside);
  return after;
}

std::string feed_cursor_codec::event_id(std::string_view tenant, std::uint64_t seq, std::string_view part) const {
  std::string data;
  put_field(data, tenant);
  for (int shift = 56; shift >= 0; shift -= 8) data.push_back(static_cast<char>((seq >> shift) & 0xff));
  put_field(data, part);
  if (!epoch_.empty()) put_field(data, epoch_);
  return "evt_" + hex_encode(hmac_sha256(id_key_, data).substr(0, 12));
}

std::string feed_cursor_codec::event_id(std::string_view tenant, std::uint64_t seq) const {
  std::string data;
  put_field(data, tenant);
  for (int shift = 56; shift >= 0; shift -= 8) data.push_back(static_cast<char>((seq >> shift) & 0xff));
  if (!epoch_.empty()) put_field(data, epoch_);
  return "evt_" + hex_encode(hmac_sha256(id_key_, data).substr(0, 12));
}

}  // namespace cl::domain
