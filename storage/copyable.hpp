#pragma once
/// A typed store that knows how to copy and compare its records, whatever the backends on either
/// side: `contentlake migrate` (storage/migrate.hpp) and the differential test iterate the stores
/// a view holds and ask each for its kinds of record, instead of listing them.
///
/// A store whose reads class derives from `copyable_store` (instead of `typed_store`) answers
/// `record_kinds()`; each kind is copied a page at a time (the page's writes applied on the target
/// in one transaction) from a position kept as text, and compared key by key.

#include "storage/typed_store.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace cl::storage {

class read_view;
class write_txn;

/// Records read in one page of a migration.
constexpr std::size_t copy_page_size = 200;

/// One page of a kind, read from the source.
struct copied_page {
  std::vector<std::function<void(write_txn&)>> writes;  ///< to apply on the target, in one transaction
  std::uint64_t copied = 0;                             ///< records read
  std::string next;                                     ///< the position after the page
  bool last = false;                                    ///< no page follows
};

/// A kind of record a store holds.
struct record_kind {
  std::string name;  ///< as `contentlake migrate` reports it and keeps its progress
  /// Copy order among stores: every kind of a lower stage is copied first (a store's own kinds in
  /// the order it lists them).
  int stage = 0;
  /// The page after `after` (empty: from the start).
  copied_page (*copy)(const read_view& from, const std::string& after) = nullptr;
  /// Up to a page of keys after `after`, in order (the last is the next `after`).
  std::vector<std::string> (*keys)(const read_view& store, const std::string& after) = nullptr;
  /// The record under `key` in a form two stores holding the same record answer alike.
  std::optional<std::string> (*record)(const read_view& store, const std::string& key) = nullptr;
};

/// Base of a typed store whose records are copied and compared.
class copyable_store : public typed_store {
public:
  virtual std::vector<record_kind> record_kinds() const = 0;
};

/// Every kind the stores of `view` hold, in copy order.
std::vector<record_kind> record_kinds_of(const read_view& view);

/// Positions of several parts, kept as one text (the parts joined by a separator no id holds).
namespace copy_position {
std::string join(std::initializer_list<std::string> parts);
std::vector<std::string> split(const std::string& position);
/// The part `i` of `position`, empty when it has fewer.
std::string part(const std::string& position, std::size_t i);
}  // namespace copy_position

/// `page` completed with what was read: a page of `read` items, the position after the last
/// (`key_of(item)`), and whether another page follows.
template <class Item, class KeyOf>
copied_page finished(copied_page page, const std::vector<Item>& read, KeyOf key_of) {
  page.copied = read.size();
  page.last = read.size() < copy_page_size;
  if (!read.empty()) page.next = key_of(read.back());
  return page;
}

/// The keys of a page of `read` items (`key_of(item)`), in order.
template <class Item, class KeyOf>
std::vector<std::string> keys_of(const std::vector<Item>& read, KeyOf key_of) {
  std::vector<std::string> out;
  out.reserve(read.size());
  for (const auto& item : read) out.push_back(key_of(item));
  return out;
}

}  // namespace cl::storage
