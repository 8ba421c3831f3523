// web_foxglove.js - an independent Foxglove client (npm @foxglove/ws-protocol's FoxgloveClient
// over the ws package, @foxglove/rosmsg and @foxglove/rosmsg2-serialization) against a running
// `ard web`. usage: node web_foxglove.js MODE URL (env: ARD, TLOGW, ARD_DOMAIN, NODE_PATH)
//   read  (server without --allow-set): serverInfo; the advertise of a connection that
//         appears (tlogw's "every basic type" writer), >= 100 packets decoded to exactly the
//         values it sent, a page-protocol client getting data at the same time, unadvertise
//         when the connection is removed and a new channel when it is re-created with another
//         type, clientPublish refused.
//   slow  a viewer that stops reading: another keeps its rate, the stuck one is disconnected.
//   write (server with --allow-set): a message published on an existing connection is read
//         back by ard show (a C reader) with every value; refused while a live writer owns
//         the connection, naming its pid; the connection graph names the writer.
// Exits 1 with "FAIL: ..." naming the first mismatch.
"use strict";
const { FoxgloveClient } = require("@foxglove/ws-protocol");
const WebSocket = require("ws");
const { parse } = require("@foxglove/rosmsg");
const { MessageReader, MessageWriter } = require("@foxglove/rosmsg2-serialization");
const { spawn, execFileSync } = require("child_process");
const fs = require("fs");

const [mode, url] = process.argv.slice(2);
const { ARD, TLOGW, ARD_DOMAIN } = process.env;
const kids = [];
function fail(msg) {
  console.error("FAIL: " + msg);
  for (const k of kids) k.kill("SIGKILL");
  process.exit(1);
}
setTimeout(() => fail("timed out in mode " + mode), 60000).unref();
const ard = (...a) => execFileSync(ARD, a, { encoding: "utf8" });

// tlogw.c's packet k (the "all" writer).
function expected(k) {
  const K = BigInt(k);
  return {
    a: (k % 200) - 100, b: k % 256, c: -k, d: (k * 3) % 65536, e: -k * 100000,
    f: (k * 4000000) % 4294967296, g: -K * 10000000000n, h: K * 1000000000000000n + 1n,
    x: k * 0.5, y: k / 3, arr: [k * 0.25, (k + 1) * 0.25, (k + 2) * 0.25], f11: [k % 65536, 65535],
    stamp: 1700000000000000000n + K * 1000000n,
  };
}
function same(a, b) {
  if (typeof a === "bigint" || typeof b === "bigint") return BigInt(a) === BigInt(b);
  if (ArrayBuffer.isView(a) || Array.isArray(a)) {
    const x = Array.from(a), y = Array.from(b);
    return x.length === y.length && x.every((v, i) => same(v, y[i]));
  }
  return a === b;
}

// Events of the client as a queue: next(pred) resolves with the first event matching pred.
function connect(u) {
  const client = new FoxgloveClient({ ws: new WebSocket(u, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]) });
  const events = [], waiters = [];
  const push = (e) => {
    const i = waiters.findIndex((w) => w.pred(e));
    if (i >= 0) waiters.splice(i, 1)[0].resolve(e);
    else events.push(e);
  };
  for (const t of ["serverInfo", "advertise", "unadvertise", "status", "connectionGraphUpdate"])
    client.on(t, (d) => push({ t, d }));
  client.on("message", (d) => push({ t: "message", d }));
  client.on("error", (e) => fail("client error: " + (e && e.message)));
  client.on("close", () => push({ t: "close" }));
  client.next = (pred, what) => {
    const i = events.findIndex(pred);
    if (i >= 0) return Promise.resolve(events.splice(i, 1)[0]);
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      waiters.push(w);
      setTimeout(() => { const k = waiters.indexOf(w); if (k >= 0) { waiters.splice(k, 1); reject(new Error("no " + what)); } }, 15000).unref();
    }).catch((e) => fail(e.message));
  };
  client.messages = () => { const m = events.filter((e) => e.t === "message"); m.forEach((e) => events.splice(events.indexOf(e), 1)); return m; };
  return client;
}
const chanOf = (ev, topic) => ev.t === "advertise" && ev.d.find((c) => c.topic === topic);

async function read() {
  const c = connect(url);
  const info = (await c.next((e) => e.t === "serverInfo", "serverInfo")).d;
  if (info.metadata.domain !== ARD_DOMAIN) fail("serverInfo domain " + info.metadata.domain);
  if (!info.metadata.host) fail("serverInfo without host");
  if (info.capabilities.includes("clientPublish")) fail("clientPublish offered without --allow-set");
  if (!info.capabilities.includes("connectionGraph")) fail("no connectionGraph capability");
  if (!(info.supportedEncodings || []).includes("cdr")) fail("supportedEncodings lacks cdr");

  // A connection that appears is advertised, with the recorder's schema name and schema.
  const w = spawn(TLOGW, ["all", "fox.all", "250", "400"], { stdio: ["ignore", "pipe", "inherit"] });
  kids.push(w);
  const adv = chanOf(await c.next((e) => chanOf(e, "/fox/all"), "advertise of /fox/all"), "/fox/all");
  if (adv.encoding !== "cdr" || adv.schemaEncoding !== "ros2msg") fail("encodings " + adv.encoding + " " + adv.schemaEncoding);
  if (adv.schemaName !== "ardnet_msgs/msg/FoxAll") fail("schemaName " + adv.schemaName);
  if (!/^float64\[3\] arr$/m.test(adv.schema) || !/^uint16\[2\] f11$/m.test(adv.schema)) fail("schema:\n" + adv.schema);
  const reader = new MessageReader(parse(adv.schema, { ros2: true }));
  const sub = c.subscribe(adv.id);

  // The page's own protocol at the same time.
  const page = new WebSocket(url.replace(/\/\?/, "/ws?"));
  let pageFrames = 0;
  page.on("open", () => page.send("sub fox.all 10000 x"));
  page.on("message", (m) => { const j = JSON.parse(m.toString()); if (j.error) fail("page: " + j.error); if (j.b && j.b.length) pageFrames++; });

  const seen = new Set();
  let k = 0;
  for (;;) {
    const e = await c.next((e) => e.t === "message", "message " + (seen.size + 1) + " (got " + seen.size + ")");
    if (e.d.subscriptionId !== sub) fail("message of subscription " + e.d.subscriptionId);
    const m = reader.readMessage(new Uint8Array(e.d.data.buffer, e.d.data.byteOffset, e.d.data.byteLength));
    k = Number(m.stamp - 1700000000000000000n) / 1e6;
    const want = expected(k);
    for (const key of Object.keys(want))
      if (!same(m[key], want[key])) fail("packet " + k + " field " + key + ": " + m[key] + " != " + want[key]);
    const now = BigInt(Date.now()) * 1000000n;
    if (e.d.timestamp > now + 1000000000n || e.d.timestamp < now - 60000000000n) fail("receive time " + e.d.timestamp + " is not now");
    seen.add(k);
    if (k === 400) break;
  }
  if (seen.size < 100) fail("only " + seen.size + " packets decoded");
  await new Promise((r) => setTimeout(r, 500));
  if (pageFrames === 0) fail("the page protocol got no data while a Foxglove client did");
  page.close();
  console.log("decoded " + seen.size + " packets exactly; page frames " + pageFrames);

  // Removed: unadvertise. Re-created with another type: a new channel.
  w.kill("SIGKILL");
  fs.unlinkSync("/dev/shm/ard." + ARD_DOMAIN + ".fox.all");
  const un = await c.next((e) => e.t === "unadvertise" && e.d.includes(adv.id), "unadvertise of " + adv.id);
  ard("set", "fox.all", "--type", "v:f64", "v=2.5");
  const re = chanOf(await c.next((e) => chanOf(e, "/fox/all"), "advertise of the re-created /fox/all"), "/fox/all");
  if (re.id === adv.id || !/^float64 v$/m.test(re.schema)) fail("re-created channel " + JSON.stringify(re));
  console.log("unadvertised " + un.d + ", re-created as channel " + re.id);

  // clientPublish is refused by a read-only server.
  const cid = c.advertise({ topic: "/fox/all", encoding: "cdr", schemaName: re.schemaName });
  const st = await c.next((e) => e.t === "status", "status refusing advertise");
  if (st.d.level !== 2 || !/read-only/.test(st.d.message)) fail("status " + JSON.stringify(st.d));
  c.sendMessage(cid, new Uint8Array([0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
  await c.next((e) => e.t === "status" && /read-only|not advertised/.test(e.d.message), "status refusing data");
  if (ard("show", "fox.all", "--field", "v").indexOf("2.5") < 0) fail("read-only server wrote fox.all");
  console.log("read-only: " + st.d.message);
  c.close();
  await hostile();
}

// Bad messages get a status naming what was wrong; the server goes on serving.
async function hostile() {
  const raw = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  const statuses = [];
  let advertised = null;
  raw.on("message", (m, bin) => {
    if (bin) return;
    const j = JSON.parse(m.toString());
    if (j.op === "status") statuses.push(j.message);
    if (j.op === "advertise") advertised = advertised || j.channels[0];
  });
  await new Promise((r) => raw.on("open", r));
  const bad = [
    ["not json", /bad message/],
    ["[" .repeat(100) + "]".repeat(100), /nested too deeply|bad message/],
    ['{"op":"subscribe","subscriptions":[{"id":"x","channelId":1}]}', /integer id and channelId/],
    ['{"op":"subscribe","subscriptions":[{"id":1,"channelId":99999}]}', /no channel 99999/],
    ['{"op":"getParameters","parameterNames":[]}', /not supported/],
    ['{"op":"unsubscribe","subscriptionIds":[42]}', /no subscription 42/],
    ['{"op":"subscribe"}', /expected "subscriptions"/],
    ['{"nop":1}', /without "op"/],
  ];
  for (const [msg, want] of bad) {
    const n = statuses.length;
    raw.send(msg);
    for (let i = 0; i < 50 && statuses.length === n; i++) await new Promise((r) => setTimeout(r, 20));
    if (statuses.length === n || !want.test(statuses[n])) fail("bad message " + msg.slice(0, 40) + ": status " + statuses[n]);
  }
  const n = statuses.length;
  raw.send(Buffer.from([9, 0, 0, 0, 0]));
  for (let i = 0; i < 50 && statuses.length === n; i++) await new Promise((r) => setTimeout(r, 20));
  if (!/opcode 9/.test(statuses[n] || "")) fail("binary opcode 9: status " + statuses[n]);
  if (!advertised) fail("no channel advertised to the hostile client");
  console.log("bad messages answered: " + statuses.length + " statuses");
  raw.close();
}

async function write() {
  const c = connect(url);
  const info = (await c.next((e) => e.t === "serverInfo", "serverInfo")).d;
  if (!info.capabilities.includes("clientPublish")) fail("no clientPublish with --allow-set");
  const ch = chanOf(await c.next((e) => chanOf(e, "/fox/in"), "advertise of /fox/in"), "/fox/in");
  console.log("schemaName " + ch.schemaName);
  const writer = new MessageWriter(parse(ch.schema, { ros2: true }));
  const v = expected(77);
  const cid = c.advertise({ topic: "/fox/in", encoding: "cdr", schemaName: ch.schemaName, schema: ch.schema, schemaEncoding: "ros2msg" });
  c.sendMessage(cid, writer.writeMessage(v));
  let got = null;
  for (let i = 0; i < 100 && !got; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const raw = ard("show", "fox.in", "--json");
    const j = JSON.parse(raw);
    // 64-bit integers from the text itself (JSON numbers lose digits above 2^53).
    for (const key of ["g", "h", "stamp"]) j.fields[key] = BigInt(raw.match(new RegExp('"' + key + '":(-?[0-9]+)'))[1]);
    if (j.seq >= 2) got = j;
  }
  if (!got) fail("ard show never saw the published packet");
  const f = got.fields;
  const want = { ...v, Big: v.f11 };
  delete want.f11;
  for (const key of Object.keys(want))
    if (!same(f[key], want[key])) fail("fox.in " + key + ": " + JSON.stringify(f[key]) + " != " + want[key]);
  console.log("published packet read back by ard show with every value");

  // A live writer owns fox.busy: refused, naming it.
  const busy = spawn(TLOGW, ["all", "fox.busy", "100", "1"], { stdio: ["ignore", "pipe", "inherit"] });
  kids.push(busy);
  const bch = chanOf(await c.next((e) => chanOf(e, "/fox/busy"), "advertise of /fox/busy"), "/fox/busy");
  const bid = c.advertise({ topic: "/fox/busy", encoding: "cdr", schemaName: bch.schemaName });
  c.sendMessage(bid, writer.writeMessage(v));
  const st = await c.next((e) => e.t === "status", "status refusing fox.busy");
  if (!st.d.message.includes(String(busy.pid))) fail("refusal does not name the writer " + busy.pid + ": " + st.d.message);
  console.log("refused: " + st.d.message);

  // The connection graph: the live writer publishes /fox/busy.
  c.subscribeConnectionGraph();
  const g = await c.next((e) => e.t === "connectionGraphUpdate" && e.d.publishedTopics.some((t) => t.name === "/fox/busy" && t.publisherIds.some((p) => p.startsWith(busy.pid + "/"))), "graph naming the writer");
  console.log("graph: " + JSON.stringify(g.d.publishedTopics.find((t) => t.name === "/fox/busy")));
  busy.kill("SIGKILL");
  c.close();
}

// A viewer that stops reading stalls nobody: next to it, another keeps receiving a 4 kB
// packet at 5 kHz in every 1 s window; the stuck one is disconnected (5 s behind).
async function slow() {
  const w = spawn(ARD, ["pub", "fox.big", "--type", "v:f64[500] n:u32", "--rate", "5000", "n=1"], { stdio: "ignore" });
  kids.push(w);
  const c = connect(url);
  const ch = chanOf(await c.next((e) => chanOf(e, "/fox/big"), "advertise of /fox/big"), "/fox/big");
  const stuck = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  let stuckClosed = false;
  stuck.on("close", () => { stuckClosed = true; });
  stuck.on("error", () => {});
  await new Promise((r) => stuck.on("open", r));
  stuck.send(JSON.stringify({ op: "subscribe", subscriptions: [{ id: 1, channelId: ch.id }] }));
  await new Promise((r) => setTimeout(r, 200));
  stuck._socket.pause(); // reads nothing from here on
  c.subscribe(ch.id);
  const counts = [];
  for (let s = 0; s < 9; s++) {
    await new Promise((r) => setTimeout(r, 1000));
    counts.push(c.messages().length);
  }
  console.log("messages per second next to a stuck viewer: " + counts.join(" "));
  counts.slice(1).forEach((n, i) => { if (n < 500) fail("second " + (i + 2) + ": only " + n + " messages (a stuck viewer stalls the others?)"); });
  stuck._socket.resume();
  for (let i = 0; i < 100 && !stuckClosed; i++) await new Promise((r) => setTimeout(r, 100));
  if (!stuckClosed) fail("the stuck viewer was not disconnected");
  console.log("the stuck viewer was disconnected");
  c.close();
}

(mode === "read" ? read() : mode === "slow" ? slow() : write()).then(() => { for (const k of kids) k.kill("SIGKILL"); process.exit(0); }, (e) => fail(e.stack));
