#pragma once
/// Field masks (spec 4.2, AIP-161): `fields=title,rights.usage_terms` or `fields=*`.

#include "domain/errors.hpp"

#include <boost/json/object.hpp>

#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cl::domain {

/// The fields a read may name, as a tree. An `open` node accepts any sub-path (its inner fields
/// are not fixed by the spec).
struct field_schema {
  std::map<std::string, field_schema, std::less<>> children;
  bool open = false;
};

/// The fields of a Resource read (spec 2.2, 2.3, 2.4).
const field_schema& resource_fields();
/// The fields of a search hit (`fields` of a search request): its members and its `rights`.
const field_schema& search_hit_fields();

/// A parsed, validated mask.
struct field_mask {
  bool all = false;                                ///< `*`
  std::vector<std::vector<std::string>> paths;     ///< each path split at '.'

  /// True when the mask asks for `top` or anything inside it (always for `*`).
  bool names(std::string_view top) const;
  /// True when one of the mask's paths names `top` or something inside it (`*` aside): what a
  /// caller asked for by name, which a missing scope must refuse even beside `*`.
  bool names_explicitly(std::string_view top) const;
  /// True when one of the mask's paths is `top.member` or inside it (`*` aside): for members a
  /// read shows only when asked by name (`rights.odrl`).
  bool names_member(std::string_view top, std::string_view member) const;
};

/// Parses a comma-separated mask against `schema`. Unknown or empty paths: INVALID_ARGUMENT with a
/// details entry per bad path (field `fields`).
std::variant<field_mask, api_error> parse_field_mask(std::string_view text, const field_schema& schema);

/// The parts of `full` the mask selects; paths traverse into arrays of objects element-wise.
boost::json::object apply_field_mask(const boost::json::object& full, const field_mask& mask);

/// A masked Resource read: what `mask` selects, and `rights` whatever the mask (spec 2.2: every
/// read carries them). A mask naming parts of `rights` (`rights.usage_terms`) narrows `rights`
/// to those parts plus `usable`.
boost::json::object apply_resource_mask(const boost::json::object& full, const field_mask& mask);

/// A masked answer whose mask names `rights.odrl` keeps the policy out of the DOM: the read puts a
/// null `rights.odrl` in its place, masks, and this writes `masked` as JSON text with `policy`
/// (JSON text) spliced in where that null stayed (nowhere when the mask dropped it).
std::string serialize_with_policy(boost::json::object masked, std::string_view policy);

}  // namespace cl::domain
