#pragma once
/// The Model Context Protocol endpoint's message rules (issue 30): JSON-RPC 2.0 messages of MCP
/// revision 2025-06-18 over Streamable HTTP, one message per POST. Pure: parsing, the answers'
/// shapes and the tools' descriptions; what a tool does is the plans' (actors/mcp/mcp_plans).

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cl::domain {

/// JSON-RPC 2.0 error codes the endpoint answers.
namespace jsonrpc {
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;
inline constexpr int internal_error = -32603;
}  // namespace jsonrpc

/// The revision the endpoint speaks first, and every one it accepts.
inline constexpr std::string_view mcp_latest_version = "2025-06-18";
bool mcp_version_supported(std::string_view version);

/// Whether an `Origin` header names a page served from this machine: `http` or `https`, the host
/// `localhost`, an IPv4 address in 127.0.0.0/8 or `[::1]`, and an optional port, nothing else.
/// Such a page cannot be a DNS rebinding (the browser sends the attacker's name there, never a
/// loopback one), so the MCP endpoint accepts it besides `mcp.allowed_origins`.
bool loopback_origin(std::string_view origin);

/// One message as it arrived.
struct mcp_message {
  enum class kind { request, notification, response, invalid } what = kind::invalid;
  boost::json::value id;       ///< a request's id (string or number), null otherwise
  std::string method;
  boost::json::object params;  ///< empty when absent
  int error_code = 0;          ///< `invalid`: parse_error or invalid_request
  std::string error_message;
};

/// Parses the body of a POST: one JSON-RPC message (batches are not part of 2025-06-18).
mcp_message parse_mcp_message(std::string_view body);

/// `{"jsonrpc":"2.0","id":...,"result":...}`.
std::string jsonrpc_result(const boost::json::value& id, const boost::json::value& result);
/// The same with `result` already serialized (a tool result kept from an earlier call).
std::string jsonrpc_result_text(const boost::json::value& id, std::string_view result);
/// `{"jsonrpc":"2.0","id":...,"error":{"code","message"}}` (id null when it could not be read).
std::string jsonrpc_error(const boost::json::value& id, int code, std::string_view message);

/// The `initialize` result for a client that asked for `requested` (the same revision when the
/// endpoint speaks it, else its latest), naming the server `version`.
boost::json::object mcp_initialize_result(std::string_view requested, std::string_view version);

/// The tools (`tools/list`): each with its title, description, inputSchema and outputSchema.
const boost::json::array& mcp_tools();

/// Whether `name` is one of the tools.
bool mcp_tool_exists(std::string_view name);

/// A tool's result: the structured answer, and its JSON as the text content block.
boost::json::object mcp_tool_result(boost::json::object structured, std::optional<std::string> text = std::nullopt);
/// A tool's failure (`isError: true`): the API's error (`reason`, `domain`, `code`, `message`,
/// `status`) under `structuredContent.error`, and its message as text.
boost::json::object mcp_tool_error(std::string_view reason, std::string_view domain, std::string_view code,
                                   int status, std::string_view message);

/// The attribution a Resource whose rights require ATTRIBUTION carries with its content in a tool
/// result: its title and id, and the contracts its rights rest on.
std::string mcp_attribution(const boost::json::object& resource);

/// Whether `rights` (a Resource's resolved `rights`) hold `ATTRIBUTION` as REQUIRED.
bool attribution_required(const boost::json::object& rights);

}  // namespace cl::domain
