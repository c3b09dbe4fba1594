// Drives the MCP endpoint with the official TypeScript SDK (npm @modelcontextprotocol/sdk,
// StreamableHTTPClientTransport), as an AI client would: connect (initialize), list tools, call
// tools. Reads a script of sessions from the JSON file named by argv[2]:
//   {"url": ..., "sessions": [{"token": ..., "list": true, "calls": [{"tool", "args"}]}]}
// and prints one JSON line per session: {"connected", "error"?, "protocol"?, "tools"?, "results": [...]},
// each call's result as the SDK returned it, or {"thrown": {"code", "message"}}.
const fs = require("fs");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

async function session(url, s) {
  const out = { connected: false, results: [] };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: s.token ? { Authorization: "Bearer " + s.token } : {} },
  });
  const client = new Client({ name: "contentlake-test", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (e) {
    out.error = { code: e.code, message: String(e.message) };
    return out;
  }
  out.connected = true;
  out.protocol = transport.protocolVersion;
  out.session = transport.sessionId || null;
  if (s.list) out.tools = (await client.listTools()).tools;
  for (const call of s.calls || []) {
    if (call.restart) {
      // Says so, then waits until the test has restarted the service (it writes the file).
      console.log(JSON.stringify({ waiting: call.restart }));
      while (!fs.existsSync(call.restart)) await new Promise((r) => setTimeout(r, 20));
      continue;
    }
    try {
      out.results.push(await client.callTool({ name: call.tool, arguments: call.args || {} }));
    } catch (e) {
      out.results.push({ thrown: { code: e.code, message: String(e.message) } });
    }
  }
  await client.close();
  return out;
}

(async () => {
  const script = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  for (const s of script.sessions) console.log(JSON.stringify(await session(script.url, s)));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
