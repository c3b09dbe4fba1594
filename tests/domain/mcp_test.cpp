// The MCP endpoint's message rules (domain/mcp.hpp): one JSON-RPC message per request, what kind
// it is, the initialize negotiation, the tools' descriptions, tool results and attribution.

#include "domain/mcp.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::domain;
namespace json = boost::json;

TEST_CASE("an MCP message is one JSON-RPC 2.0 object of a known kind", "[mcp]") {
  auto request = parse_mcp_message(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}})");
  CHECK(request.what == mcp_message::kind::request);
  CHECK(request.id == json::value(7));
  CHECK(request.method == "tools/list");
  CHECK(request.params.at("cursor") == "x");
  CHECK(parse_mcp_message(R"({"jsonrpc":"2.0","id":"a","method":"ping"})").id == json::value("a"));
  CHECK(parse_mcp_message(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").what
        == mcp_message::kind::notification);
  CHECK(parse_mcp_message(R"({"jsonrpc":"2.0","id":3,"result":{}})").what == mcp_message::kind::response);
  CHECK(parse_mcp_message(R"({"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}})").what
        == mcp_message::kind::response);

  auto not_json = parse_mcp_message("{oops");
  CHECK(not_json.what == mcp_message::kind::invalid);
  CHECK(not_json.error_code == jsonrpc::parse_error);
  CHECK(not_json.id.is_null());
  for (const char* bad : {R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", R"("ping")", R"({"id":1,"method":"ping"})",
                          R"({"jsonrpc":"1.0","id":1,"method":"ping"})", R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})",
                          R"({"jsonrpc":"2.0","id":{},"method":"ping"})", R"({"jsonrpc":"2.0","id":1,"method":7})",
                          R"({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})", R"({"jsonrpc":"2.0","id":1})",
                          R"({"jsonrpc":"2.0"})"}) {
    INFO(bad);
    auto m = parse_mcp_message(bad);
    CHECK(m.what == mcp_message::kind::invalid);
    CHECK(m.error_code == jsonrpc::invalid_request);
  }
}

TEST_CASE("JSON-RPC answers and the initialize negotiation", "[mcp]") {
  CHECK(json::parse(jsonrpc_result(json::value(1), json::object{})) == json::parse(R"({"jsonrpc":"2.0","id":1,"result":{}})"));
  CHECK(json::parse(jsonrpc_error(nullptr, -32700, "bad")) ==
        json::parse(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}})"));
  CHECK(mcp_version_supported("2025-06-18"));
  CHECK(mcp_version_supported("2025-03-26"));
  CHECK_FALSE(mcp_version_supported("2025-11-25"));
  CHECK_FALSE(mcp_version_supported(""));
  CHECK(mcp_initialize_result("2025-03-26", "1.2.3").at("protocolVersion") == "2025-03-26");
  auto latest = mcp_initialize_result("2099-01-01", "1.2.3");
  CHECK(latest.at("protocolVersion") == "2025-06-18");
  CHECK(latest.at("serverInfo").at("version") == "1.2.3");
  CHECK(latest.at("capabilities").as_object().contains("tools"));
}

TEST_CASE("every tool has a name, an input schema and an output schema that allows its errors", "[mcp]") {
  std::vector<std::string> names;
  for (const auto& t : mcp_tools()) {
    const auto& tool = t.as_object();
    names.emplace_back(tool.at("name").as_string());
    CHECK(tool.at("inputSchema").at("type") == "object");
    CHECK(tool.at("outputSchema").at("type") == "object");
    CHECK(tool.at("outputSchema").at("properties").as_object().contains("error"));
    CHECK_FALSE(tool.at("outputSchema").as_object().contains("required"));  // a refusal carries only `error`
  }
  CHECK(names == std::vector<std::string>{"search", "read_resource", "list_works"});
  CHECK(mcp_tool_exists("read_resource"));
  CHECK_FALSE(mcp_tool_exists("read"));
}

TEST_CASE("tool results, refusals and attribution", "[mcp]") {
  auto ok = mcp_tool_result(json::object{{"a", 1}});
  CHECK(ok.at("isError") == false);
  CHECK(ok.at("content").at(0).at("text") == R"({"a":1})");
  CHECK(mcp_tool_result(json::object{}, std::string{"shown"}).at("content").at(0).at("text") == "shown");
  auto refused = mcp_tool_error("USAGE_PROHIBITED", "contentlake.service.com", "PERMISSION_DENIED", 403, "No.");
  CHECK(refused.at("isError") == true);
  CHECK(refused.at("structuredContent").at("error").at("reason") == "USAGE_PROHIBITED");
  CHECK(refused.at("structuredContent").at("error").at("status") == 403);

  auto resource = json::parse(R"({"id":"res_1","title":"Tide","rights":{"handling_terms":[
      {"handling_type":"ATTRIBUTION","status":"REQUIRED"}],"basis":[{"contract_id":"ctr_1"},{"contract_id":"ctr_2"}]}})")
                    .as_object();
  CHECK(attribution_required(resource.at("rights").as_object()));
  CHECK(mcp_attribution(resource) == "\"Tide\" (res_1), licensed through the Content Lake under ctr_1, ctr_2");
  CHECK_FALSE(attribution_required(json::parse(R"({"handling_terms":[{"handling_type":"ATTRIBUTION","status":"PERMITTED"}]})").as_object()));
  CHECK_FALSE(attribution_required(json::parse(R"({"handling_terms":"x"})").as_object()));
  CHECK(mcp_attribution(json::parse(R"({"id":"res_2"})").as_object()) == "(res_2), from the Content Lake");
}

TEST_CASE("a loopback Origin is a page of this machine; nothing that only starts like one is", "[mcp]") {
  using cl::domain::loopback_origin;
  for (auto yes : {"http://localhost", "http://localhost:3000", "https://localhost:443", "http://127.0.0.1",
                   "http://127.0.0.1:8080", "http://127.255.0.9:1", "http://[::1]", "http://[::1]:6274"})
    CHECK(loopback_origin(yes));
  for (auto no : {"", "null", "localhost", "ftp://localhost", "http://localhost.evil.example", "http://localhost:",
                  "http://localhost:3000/", "http://localhost:99999", "http://localhost:30a", "http://evil.example",
                  "http://127.0.0.1.evil.example", "http://127.0.0.1:80@evil.example", "http://128.0.0.1",
                  "http://127.0.0", "http://127.0.0.256", "http://127.00.0.1", "http://[::1].evil.example",
                  "http://[::ffff:127.0.0.1]", "http://0.0.0.0", "http://user@localhost", "HTTP://evil.example"})
    CHECK_FALSE(loopback_origin(no));
}
