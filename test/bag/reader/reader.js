// Independent reader of an fsmnodes bag directory, run by reader_test.go:
// @mcap/core reads every .mcap file through its index, @foxglove/rosmsg
// parses each channel's ros2msg schema and @foxglove/rosmsg2-serialization
// decodes every message. Prints one JSON object: per topic its type, count,
// QoS metadata and the first message decoded; what could not be read.
"use strict";

const fs = require("fs");
const path = require("path");
const { McapIndexedReader } = require("@mcap/core");
const { parse } = require("@foxglove/rosmsg");
const { MessageReader } = require("@foxglove/rosmsg2-serialization");

function fileReadable(fd) {
  return {
    size: async () => BigInt(fs.fstatSync(fd).size),
    read: async (offset, size) => {
      const buf = Buffer.alloc(Number(size));
      fs.readSync(fd, buf, 0, Number(size), Number(offset));
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    },
  };
}

// JSON of a decoded message: bigints as strings, typed arrays shortened.
function plain(v) {
  return JSON.parse(
    JSON.stringify(v, (_k, x) => {
      if (typeof x === "bigint") return x.toString();
      if (ArrayBuffer.isView(x)) return Array.from(x.slice(0, 8));
      return x;
    }),
  );
}

async function main() {
  const dir = process.argv[2];
  const out = { files: [], profiles: [], topics: {}, failures: [], rosbag2Metadata: 0, messages: 0 };
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".mcap")).sort();
  for (const f of files) {
    const fd = fs.openSync(path.join(dir, f), "r");
    try {
      const reader = await McapIndexedReader.Initialize({ readable: fileReadable(fd) });
      out.files.push(f);
      out.profiles.push(reader.header.profile);
      for await (const m of reader.readMetadata({ name: "rosbag2" })) {
        if (m.metadata.get("serialized_metadata")) out.rosbag2Metadata++;
      }
      const decoders = new Map();
      for (const [id, ch] of reader.channelsById) {
        const schema = reader.schemasById.get(ch.schemaId);
        const t = (out.topics[ch.topic] ??= { type: schema.name, count: 0, qos: "", encoding: ch.messageEncoding });
        t.schemaEncoding = schema.encoding;
        t.qos = ch.metadata.get("offered_qos_profiles") ?? "";
        try {
          decoders.set(id, new MessageReader(parse(new TextDecoder().decode(schema.data), { ros2: true })));
        } catch (e) {
          out.failures.push(`${f}: schema of ${ch.topic} (${schema.name}): ${e.message}`);
        }
      }
      for await (const msg of reader.readMessages()) {
        const ch = reader.channelsById.get(msg.channelId);
        const t = out.topics[ch.topic];
        const dec = decoders.get(msg.channelId);
        if (!dec) continue;
        try {
          const value = dec.readMessage(msg.data);
          t.count++;
          out.messages++;
          if (t.first === undefined) t.first = plain(value);
        } catch (e) {
          if (out.failures.length < 20) out.failures.push(`${f}: message on ${ch.topic}: ${e.message}`);
        }
      }
    } finally {
      fs.closeSync(fd);
    }
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ error: String(e && e.stack ? e.stack : e) }) + "\n");
  process.exit(1);
});
