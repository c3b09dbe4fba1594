#pragma once
/// Canonical JSON: object members sorted by key at every depth, so two documents that differ only
/// in member order (or whitespace, once serialised) compare equal.

#include <boost/json/value.hpp>

namespace cl::domain {

/// `v` with object members sorted by key at every depth.
boost::json::value canonical_json(const boost::json::value& v);

}  // namespace cl::domain
