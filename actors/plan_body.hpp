#pragma once
/// Request bodies and query parameters of route plans: a JSON object body, its unknown members,
/// the 400 that names a field. Included by plan sources only (it brings Boost.JSON's object).
#include "domain/exchange.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace cl::actors {

/// 415 UNSUPPORTED_MEDIA_TYPE unless the request's Content-Type is application/json (or
/// application/merge-patch+json; parameters such as charset allowed, case-insensitive); else nullopt.
std::optional<domain::api_reply> refuse_unless_json_body(const domain::api_request& request);

/// The request body as a JSON object, or the reply that refuses it: 415 UNSUPPORTED_MEDIA_TYPE
/// for another Content-Type, 400 INVALID_ARGUMENT for anything but a JSON object.
std::variant<boost::json::object, domain::api_reply> json_body(const domain::api_request& request);

/// 400 INVALID_ARGUMENT naming `body` when a route that takes no body got one; nullopt when empty.
std::optional<domain::api_reply> refuse_body(const domain::api_request& request);

/// 400 INVALID_ARGUMENT naming each member of `body` that is not in `allowed`; nullopt if none.
std::optional<domain::api_reply> unknown_members(const boost::json::object& body,
                                                 std::initializer_list<std::string_view> allowed);

/// 400 INVALID_ARGUMENT: "The request is not valid: <field> <why>.", with a detail naming `field`.
domain::api_reply invalid_field(const std::string& field, const std::string& why);

/// The decoded value of query parameter `name` (`+` as space, %XX decoded); empty when absent.
std::string query_param(std::string_view query, std::string_view name);

/// A whole number >= 1 from a query parameter or a JSON member; nullopt when malformed.
std::optional<std::int64_t> positive(std::string_view text);

}  // namespace cl::actors
