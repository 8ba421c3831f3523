// mcap_check.js - reads an ardnet recording with libraries nobody in ardnet wrote (@mcap/core,
// @foxglove/rosmsg, @foxglove/rosmsg2-serialization, fzstd from the npm registry) and checks
// it: usage: node mcap_check.js NPM_DIR FILE complete|cut
// Prints one JSON object (channels, schemas, counts, first/last times) and exits 1 naming the
// first mismatch: a packet of the "all" or opaque test writers (tlogw.c) whose decoded values
// differ from what the writer sent, a publish time that is not the writer's stamp, a log time
// before the publish time, a file that is not complete (or not cut) as expected, or an index
// (summary statistics, chunk indexes) that disagrees with the messages read from the stream.
"use strict";
const path = require("path");
const fs = require("fs");
const [npmDir, file, expect] = process.argv.slice(2);
const req = (m) => require(path.join(npmDir, "node_modules", m));
const { McapStreamReader, McapIndexedReader } = req("@mcap/core");
const { parse } = req("@foxglove/rosmsg");
const { MessageReader } = req("@foxglove/rosmsg2-serialization");
const fzstd = req("fzstd");

function fail(msg) {
  console.error("FAIL: " + msg);
  process.exit(1);
}
const decompressHandlers = {
  zstd: (data, size) => {
    const out = fzstd.decompress(data);
    if (BigInt(out.length) !== size) fail("zstd chunk size " + out.length + " != " + size);
    return out;
  },
};

// The values tlogw.c writes into packet k (its sequence number).
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

const data = fs.readFileSync(file);
const reader = new McapStreamReader({ decompressHandlers, validateCrcs: true });
reader.append(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
// A channel's ardnet name: its metadata "ardnet.name", whose topic must be the documented
// mapping of it ("arm.state" -> "/arm/state", docs/recording.md).
function nm(ch) {
  const n = ch.metadata.get("ardnet.name");
  if (n === undefined) fail("channel " + ch.topic + " without ardnet.name");
  if (ch.topic !== "/" + n.split(".").join("/")) fail("channel " + n + " has topic " + ch.topic);
  return n;
}
const schemas = new Map(), channels = new Map(), decoders = new Map(), out = {};
let header = null, dataEnd = false, stats = null, chunkIndexes = 0, metadata = {};
for (let r; (r = reader.nextRecord()); ) {
  if (r.type === "Header") header = r;
  else if (r.type === "Schema") schemas.set(r.id, r);
  else if (r.type === "Channel" && !channels.has(r.id)) {
    const s = schemas.get(r.schemaId);
    if (!s) fail("channel " + r.topic + " before its schema");
    const text = new TextDecoder().decode(s.data);
    channels.set(r.id, r);
    decoders.set(r.id, new MessageReader(parse(text, { ros2: true })));
    out[nm(r)] = {
      topic: r.topic,
      schemaName: s.name, schemaEncoding: s.encoding, schema: text, messageEncoding: r.messageEncoding,
      ardnetType: r.metadata.get("ardnet.type"), ardnetSize: r.metadata.get("ardnet.size"),
      qos: r.metadata.get("offered_qos_profiles"),
      count: 0, firstLog: null, lastLog: null, firstPub: null, lastPub: null, firstSeq: null, lastSeq: null,
    };
  } else if (r.type === "Message") {
    const ch = channels.get(r.channelId);
    if (!ch) fail("message on unknown channel " + r.channelId);
    const o = out[nm(ch)];
    const m = decoders.get(r.channelId).readMessage(r.data);
    if (r.logTime < r.publishTime) fail(nm(ch) + ": log time before publish time");
    if (nm(ch).startsWith("all")) {
      const k = Number(m.stamp - 1700000000000000000n) / 1e6;
      const e = expected(k);
      for (const key of Object.keys(e))
        if (!same(m[key], e[key])) fail(nm(ch) + " packet " + k + " field " + key + ": " + m[key] + " != " + e[key]);
      if (r.publishTime !== e.stamp) fail(nm(ch) + " packet " + k + ": publish time " + r.publishTime + " != writer stamp " + e.stamp);
      if (BigInt(r.sequence) !== BigInt(k)) fail(nm(ch) + " packet " + k + ": sequence " + r.sequence);
    } else if (nm(ch).startsWith("opaque")) {
      const k = Number(r.publishTime - 1700000000000000000n) / 1e6;
      const bytes = Array.from(m.data);
      if (bytes.length !== 40) fail("opaque packet of " + bytes.length + " bytes");
      bytes.forEach((v, i) => { if (v !== ((k + i) & 255)) fail("opaque packet " + k + " byte " + i + ": " + v); });
    }
    o.count++;
    const lt = r.logTime.toString(), pt = r.publishTime.toString();
    if (o.firstLog === null) { o.firstLog = lt; o.firstPub = pt; o.firstSeq = r.sequence; }
    o.lastLog = lt; o.lastPub = pt; o.lastSeq = r.sequence;
  } else if (r.type === "DataEnd") dataEnd = true;
  else if (r.type === "Statistics") stats = r;
  else if (r.type === "ChunkIndex") chunkIndexes++;
  else if (r.type === "Metadata") metadata[r.name] = Object.fromEntries(r.metadata);
}
if (!header || header.profile !== "ros2") fail("no ros2 header");
const complete = reader.done();
if (expect === "complete" && !complete) fail("file is not complete");
if (expect === "cut" && complete) fail("file is complete, expected one cut short");

async function indexed() {
  if (!complete) return null;
  const readable = {
    size: async () => BigInt(data.byteLength),
    read: async (off, size) => new Uint8Array(data.buffer, data.byteOffset + Number(off), Number(size)),
  };
  const ir = await McapIndexedReader.Initialize({ readable, decompressHandlers });
  const counts = {};
  for await (const m of ir.readMessages()) {
    const t = nm(ir.channelsById.get(m.channelId));
    counts[t] = (counts[t] || 0) + 1;
  }
  for (const [id, n] of ir.statistics.channelMessageCounts) {
    const t = nm(ir.channelsById.get(id));
    if (BigInt(out[t].count) !== n) fail(t + ": statistics count " + n + " != " + out[t].count + " read");
    if (counts[t] !== out[t].count) fail(t + ": indexed read " + counts[t] + " != " + out[t].count);
  }
  return { chunks: ir.chunkIndexes.length, metadataIndexes: ir.metadataIndexes.length };
}
indexed().then((idx) => {
  console.log(JSON.stringify({ complete, dataEnd, indexed: idx, metadata, channels: out }, null, 1));
}).catch((e) => fail("indexed reader: " + e.message));
