// A webhook receiver for the tests: verifies every delivery with npm `standardwebhooks` under the
// secrets it was given (each separately, so a test sees which secrets signed), and answers by path:
//   /ok/NAME           200
//   /fail/N/NAME       500 for the first N attempts of each message, then 200
//   /gone/NAME         410
//   /redirect/NAME     302 to /ok/NAME-redirected (a client that follows it shows up there)
//   /retry-after/NAME  503 with Retry-After: 1 on a message's first attempt, then 200
//   /hold/NAME         503 with Retry-After: 2 until NAME is released, then 200
//   /hang/NAME         never answers (until POST /_drop_hung closes every such connection)
//   /gate/N/NAME       holds each request until N requests of NAME are open at once, then answers
//                      them all 200 (and every later one at once)
// Every delivery's log entry has `hanging`: the ids (arrival numbers) of /hang/ requests open then;
// `conn`: the number of the connection it came on (1, 2, ... in the order they were opened);
// `open`: the requests of its NAME in flight when it arrived, itself included.
// Connections are kept (HTTP/1.1) for 60 s unused.
// Control: POST /_secrets {"NAME": ["whsec_..."]}; POST /_release {"NAME": true}; POST /_drop_hung;
// POST /_close_idle: closes every connection without a request in flight;
// GET /_log: every delivery
// {path, name, id, timestamp, body, verified: {secret: bool}, at_ms, status, conn, open}.
// Prints "listening PORT" once it listens (port 0: any).
"use strict";
const http = require("http");
const { Webhook } = require("standardwebhooks");

const secrets = {};  // name -> [whsec_...]
const log = [];
const attempts = {};  // name \0 id -> count
const released = {};  // name -> true: /hold/NAME answers 200
const hanging = new Map();  // arrival number -> the open /hang/ request's socket
const open = {};  // name -> requests in flight
const gates = {};  // name -> {opened, waiting: [answer functions]}
let arrivals = 0;
let connections = 0;

function answer(res, status, headers, body) {
  res.writeHead(status, Object.assign({ "content-type": "text/plain" }, headers || {}));
  res.end(body || "");
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString();
    if (req.url === "/_secrets" && req.method === "POST") {
      Object.assign(secrets, JSON.parse(body));
      return answer(res, 204);
    }
    if (req.url === "/_release" && req.method === "POST") {
      Object.assign(released, JSON.parse(body));
      return answer(res, 204);
    }
    if (req.url === "/_drop_hung" && req.method === "POST") {
      for (const socket of hanging.values()) socket.destroy();
      hanging.clear();
      return answer(res, 204);
    }
    if (req.url === "/_close_idle" && req.method === "POST") {
      server.closeIdleConnections();
      return answer(res, 204, { connection: "close" });
    }
    if (req.url === "/_log") return answer(res, 200, { "content-type": "application/json" }, JSON.stringify(log));
    const parts = req.url.split("/").filter((p) => p);
    const kind = parts[0];
    const name = parts[parts.length - 1];
    const verified = {};
    for (const s of secrets[name] || []) {
      try {
        new Webhook(s).verify(body, req.headers);
        verified[s] = true;
      } catch (e) {
        verified[s] = false;
      }
    }
    const id = req.headers["webhook-id"];
    const key = name + "\0" + id;
    attempts[key] = (attempts[key] || 0) + 1;
    let status = 200, headers = {};
    if (kind === "fail" && attempts[key] <= parseInt(parts[1], 10)) status = 500;
    else if (kind === "gone") status = 410;
    else if (kind === "redirect") {
      status = 302;
      headers = { location: "/ok/" + name + "-redirected" };
    } else if (kind === "hold" && !released[name]) {
      status = 503;
      headers = { "retry-after": "2" };
    } else if (kind === "retry-after" && attempts[key] === 1) {
      status = 503;
      headers = { "retry-after": "1" };
    }
    const arrival = ++arrivals;
    open[name] = (open[name] || 0) + 1;
    res.on("close", () => { open[name] -= 1; });
    log.push({ path: req.url, name, id, timestamp: req.headers["webhook-timestamp"],
               signature: req.headers["webhook-signature"], body, verified, at_ms: Date.now(),
               status: kind === "hang" ? 0 : status, arrival, hanging: [...hanging.keys()],
               conn: req.socket.connection_number, open: open[name] });
    if (kind === "hang") {
      hanging.set(arrival, req.socket);
      req.socket.on("close", () => hanging.delete(arrival));
      return;
    }
    if (kind === "gate") {
      const gate = gates[name] || (gates[name] = { opened: false, waiting: [] });
      if (gate.opened) return answer(res, status, headers);
      gate.waiting.push(() => answer(res, status, headers));
      if (open[name] >= parseInt(parts[1], 10)) {
        gate.opened = true;
        gate.waiting.splice(0).forEach((f) => f());
      }
      return;
    }
    answer(res, status, headers);
  });
});
server.keepAliveTimeout = 60000;
server.on("connection", (socket) => { socket.connection_number = ++connections; });
server.listen(parseInt(process.argv[2] || "0", 10), "127.0.0.1", () => {
  console.log("listening " + server.address().port);
});
