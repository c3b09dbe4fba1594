#pragma once
/// Reading the members of a stored JSON record (storage-internal: the stores that keep their
/// records as JSON objects, the blob and webhook stores). A member that is absent or of another
/// type reads as empty or zero: records written by an older build lack the newer members.

#include <boost/json/object.hpp>

#include <string>

namespace cl::storage::json_record {

inline std::string text(const boost::json::object& o, const char* name) {
  auto* v = o.if_contains(name);
  return v && v->is_string() ? std::string{v->as_string()} : std::string{};
}

template <class Int>
Int number(const boost::json::object& o, const char* name) {
  auto* v = o.if_contains(name);
  return v && v->is_number() ? v->to_number<Int>() : Int{};
}

}  // namespace cl::storage::json_record
