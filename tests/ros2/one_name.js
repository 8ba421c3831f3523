// one_name.js - the type names and .msg texts of some topics, as independent readers see them:
//   node one_name.js mcap FILE TOPIC...  a recording read by @mcap/core (McapStreamReader)
//   node one_name.js fox URL TOPIC...    a live `ard web` read by @foxglove/ws-protocol's
//                                        FoxgloveClient (its advertise messages)
// Writes, for each topic, the files OUT/<n>.name and OUT/<n>.msg (OUT: $OUT, n: the topic's
// index on the command line): the schema name and the schema text, byte for byte; and for
// mcap, OUT/<n>.meta with the channel's metadata (key=value lines). Exits 1 naming what is
// missing: a topic not found, a schema encoding other than ros2msg, a message encoding other
// than cdr.
"use strict";
const fs = require("fs");
const path = require("path");

const [mode, where, ...topics] = process.argv.slice(2);
const OUT = process.env.OUT;
function fail(msg) {
  console.error("FAIL: " + msg);
  process.exit(1);
}
setTimeout(() => fail("timed out (" + mode + ")"), 30000).unref();
function put(topic, name, encoding, schemaEncoding, text, meta) {
  const i = topics.indexOf(topic);
  if (i < 0) return false;
  if (schemaEncoding !== "ros2msg") fail(topic + ": schema encoding " + schemaEncoding);
  if (encoding !== "cdr") fail(topic + ": message encoding " + encoding);
  fs.writeFileSync(path.join(OUT, i + ".name"), name);
  fs.writeFileSync(path.join(OUT, i + ".msg"), text);
  if (meta) fs.writeFileSync(path.join(OUT, i + ".meta"), meta);
  return true;
}

if (mode === "mcap") {
  const { McapStreamReader } = require("@mcap/core");
  const data = fs.readFileSync(where);
  const reader = new McapStreamReader({ validateCrcs: true });
  reader.append(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  const schemas = new Map(), done = new Set();
  for (let r; (r = reader.nextRecord()); ) {
    if (r.type === "Schema") schemas.set(r.id, r);
    if (r.type === "Channel" && !done.has(r.topic)) {
      const s = schemas.get(r.schemaId);
      if (!s) fail("channel " + r.topic + " before its schema");
      const meta = [...r.metadata].map(([k, v]) => k + "=" + v + "\n").join("");
      if (put(r.topic, s.name, r.messageEncoding, s.encoding, Buffer.from(s.data), meta))
        done.add(r.topic);
    }
  }
  const missing = topics.filter((t) => !done.has(t));
  if (missing.length) fail("not in the file: " + missing.join(" "));
} else if (mode === "fox") {
  const { FoxgloveClient } = require("@foxglove/ws-protocol");
  const WebSocket = require("ws");
  const client = new FoxgloveClient({
    ws: new WebSocket(where, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]),
  });
  const done = new Set();
  client.on("error", (e) => fail("client: " + (e && e.message ? e.message : e)));
  client.on("advertise", (chs) => {
    for (const c of chs)
      if (put(c.topic, c.schemaName, c.encoding, c.schemaEncoding, Buffer.from(c.schema, "utf8")))
        done.add(c.topic);
    if (topics.every((t) => done.has(t))) {
      client.close();
      process.exit(0);
    }
  });
} else {
  fail("usage: node one_name.js mcap FILE TOPIC... | fox URL TOPIC...");
}
