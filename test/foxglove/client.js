// An independent Foxglove WebSocket client for the protocol test of
// foxglove_bridge: Foxglove's own npm packages (@foxglove/ws-protocol for
// the protocol, @foxglove/rosmsg to parse the advertised ros2msg schemas,
// @foxglove/rosmsg2-serialization for CDR) drive the bridge the way
// Foxglove does. foxglove_test.go runs it and checks what it reports.
//
//   node client.js ws://127.0.0.1:PORT /diffbot
//
// Progress goes to stderr; the last line on stdout is a JSON object with
// the results. Any protocol error ends the script with a non-zero status.
"use strict";

const { FoxgloveClient } = require("@foxglove/ws-protocol");
const { parse } = require("@foxglove/rosmsg");
const { MessageReader, MessageWriter } = require("@foxglove/rosmsg2-serialization");
const WebSocket = require("ws");

const [url, ns] = process.argv.slice(2);
const results = { schemaFailures: [] };
const log = (...a) => console.error("[client]", ...a);

function fail(msg) {
  console.error("[client] FAIL:", msg);
  console.log(JSON.stringify({ ...results, error: String(msg) }));
  process.exit(1);
}
setTimeout(() => fail("the whole script took longer than 90 s"), 90000).unref();

const client = new FoxgloveClient({ ws: new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]) });
const channels = new Map(); // id -> channel
const services = new Map(); // name -> service
const readers = new Map(); // channel id -> MessageReader
const waiters = [];

function notify() {
  for (const w of waiters.splice(0)) w();
}
// until resolves once cond() holds; it is checked after every event.
function until(what, cond, ms = 30000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    const check = () => {
      let v;
      try {
        v = cond();
      } catch (e) {
        clearTimeout(timer);
        return reject(e);
      }
      if (v) {
        clearTimeout(timer);
        resolve(v);
      } else {
        waiters.push(check);
      }
    };
    check();
  });
}

client.on("error", (e) => fail(`WebSocket error: ${e && e.message}`));
client.on("close", () => log("connection closed"));
client.on("serverInfo", (info) => {
  results.serverInfo = info;
  notify();
});
const statuses = [];
client.on("status", (s) => {
  log("status", JSON.stringify(s));
  statuses.push(s);
  notify();
});
client.on("advertise", (list) => {
  for (const ch of list) {
    channels.set(ch.id, ch);
    // Every advertised schema must parse and yield a reader, as Foxglove
    // builds one for every channel it shows.
    try {
      readers.set(ch.id, new MessageReader(parse(ch.schema, { ros2: true })));
    } catch (e) {
      results.schemaFailures.push(`${ch.topic} (${ch.schemaName}): ${e.message}`);
    }
  }
  notify();
});
client.on("unadvertise", (ids) => {
  for (const id of ids) channels.delete(id);
  notify();
});
client.on("advertiseServices", (list) => {
  for (const s of list) services.set(s.name, s);
  notify();
});
const messages = new Map(); // subscription id -> decoded messages
client.on("message", ({ subscriptionId, timestamp, data }) => {
  const sub = subscriptions.get(subscriptionId);
  if (!sub) fail(`message for unknown subscription ${subscriptionId}`);
  const msg = readers.get(sub.channelId).readMessage(data);
  const list = messages.get(subscriptionId) || [];
  list.push({ timestamp, msg });
  if (list.length > 200) list.shift();
  messages.set(subscriptionId, list);
  notify();
});
const responses = new Map(); // call id -> response or failure
client.on("serviceCallResponse", (r) => {
  responses.set(r.callId, r);
  notify();
});
client.on("serviceCallFailure", (f) => {
  responses.set(f.callId, f);
  notify();
});
const paramReplies = new Map(); // request id -> parameters
const paramUpdates = [];
client.on("parameterValues", (pv) => {
  if (pv.id !== undefined) paramReplies.set(pv.id, pv.parameters);
  else paramUpdates.push(...pv.parameters);
  notify();
});
const graph = { published: new Map(), subscribed: new Map(), services: new Map(), updates: 0 };
client.on("connectionGraphUpdate", (u) => {
  graph.updates++;
  for (const t of u.publishedTopics) graph.published.set(t.name, t.publisherIds);
  for (const t of u.subscribedTopics) graph.subscribed.set(t.name, t.subscriberIds);
  for (const s of u.advertisedServices) graph.services.set(s.name, s.providerIds);
  for (const n of u.removedTopics) {
    graph.published.delete(n);
    graph.subscribed.delete(n);
  }
  for (const n of u.removedServices) graph.services.delete(n);
  notify();
});

const subscriptions = new Map(); // subscription id -> { channelId }
function subscribe(topic) {
  const ch = [...channels.values()].find((c) => c.topic === topic);
  if (!ch) fail(`no channel for ${topic}`);
  if (!readers.has(ch.id)) fail(`no reader for ${topic}`);
  const id = client.subscribe(ch.id);
  subscriptions.set(id, { channelId: ch.id });
  return id;
}
const latest = (subId) => {
  const l = messages.get(subId);
  return l && l.length ? l[l.length - 1].msg : undefined;
};

let nextCall = 1;
async function call(name, request) {
  const svc = services.get(name);
  if (!svc) fail(`service ${name} is not advertised`);
  const schema = svc.request ? svc.request.schema : svc.requestSchema;
  const rschema = svc.response ? svc.response.schema : svc.responseSchema;
  const data = new MessageWriter(parse(schema, { ros2: true })).writeMessage(request);
  const callId = nextCall++;
  client.sendServiceCallRequest({ serviceId: svc.id, callId, encoding: "cdr", data });
  const r = await until(`the response of ${name}`, () => responses.get(callId));
  if (r.op === "serviceCallFailure" || r.message !== undefined) fail(`${name} failed: ${r.message}`);
  return new MessageReader(parse(rschema, { ros2: true })).readMessage(r.data);
}

async function getParams(names, id) {
  client.getParameters(names, id);
  return until(`parameterValues ${id}`, () => paramReplies.get(id));
}

async function main() {
  await until("serverInfo", () => results.serverInfo);
  log("serverInfo", JSON.stringify(results.serverInfo));
  const odomTopic = `${ns}/odom`;
  await until(`channel ${odomTopic} and service ${ns}/rsm/setOperationMode`, () =>
    [...channels.values()].some((c) => c.topic === odomTopic) &&
    [...channels.values()].some((c) => c.topic === `${ns}/rsm/operationMode`) &&
    services.has(`${ns}/rsm/setOperationMode`));
  results.channels = [...channels.values()].map((c) => ({
    topic: c.topic, encoding: c.encoding, schemaName: c.schemaName, schemaEncoding: c.schemaEncoding,
  }));
  results.services = [...services.values()].map((s) => ({ name: s.name, type: s.type }));
  const odomChannel = [...channels.values()].find((c) => c.topic === odomTopic);
  results.odomSchema = odomChannel.schema;

  // Odometry, decoded from the advertised schema.
  const odomSub = subscribe(odomTopic);
  await until("a first odometry message", () => latest(odomSub));
  const first = messages.get(odomSub)[0];
  const start = latest(odomSub).pose.pose.position;
  results.odomStart = { x: start.x, y: start.y, frame: latest(odomSub).header.frame_id,
    child: latest(odomSub).child_frame_id, receiveTimeNs: first.timestamp.toString() };
  log("odometry at", JSON.stringify(results.odomStart));

  // Teleoperation: publish a Twist from the client, as a teleop panel
  // does, until the robot has moved.
  const twistSchema = [...channels.values()].find((c) => c.schemaName === "geometry_msgs/msg/Twist");
  if (!twistSchema) fail("no Twist channel to take the schema from");
  const cmdTopic = `${ns}/teleoperation/cmd_vel`;
  const pubId = client.advertise({ topic: cmdTopic, encoding: "cdr", schemaName: "geometry_msgs/msg/Twist",
    schema: twistSchema.schema, schemaEncoding: "ros2msg" });
  const twist = new MessageWriter(parse(twistSchema.schema, { ros2: true })).writeMessage({
    linear: { x: 0.3, y: 0, z: 0 }, angular: { x: 0, y: 0, z: 0 } });
  let sent = 0;
  const pubTimer = setInterval(() => {
    client.sendMessage(pubId, twist);
    sent++;
  }, 50);
  const moved = () => {
    const p = latest(odomSub).pose.pose.position;
    return Math.hypot(p.x - start.x, p.y - start.y);
  };
  await until("the robot to move 0.2 m under teleoperation", () => moved() > 0.2, 30000);
  clearInterval(pubTimer);
  client.unadvertise(pubId);
  results.teleop = { twistsSent: sent, moved: moved() };
  log("teleoperation moved the robot", results.teleop.moved.toFixed(3), "m with", sent, "messages");

  // The software e-stop through rsm/setOperationMode, observed on
  // rsm/operationMode.
  const opSub = subscribe(`${ns}/rsm/operationMode`);
  const stopResp = await call(`${ns}/rsm/setOperationMode`, { operation_mode: { emergency_stop: true, mode: 0 } });
  await until("operationMode with emergency_stop", () => {
    const m = latest(opSub);
    return m && m.emergency_stop === true;
  });
  const releaseResp = await call(`${ns}/rsm/setOperationMode`, { operation_mode: { emergency_stop: false, mode: 0 } });
  await until("operationMode without emergency_stop", () => {
    const m = latest(opSub);
    return m && m.emergency_stop === false;
  });
  results.estop = { stop: stopResp, release: releaseResp };
  log("e-stop on and off:", JSON.stringify(results.estop));

  // Parameters, named /node.param. A read-only one is refused with the
  // node's reason; a writable one is set, read back and reported to
  // subscribers.
  const readOnly = `${ns}/robotControlMuxNode.initial_operation_mode`;
  results.readOnlyBefore = (await getParams([readOnly], "get-ro"))[0];
  const nStatus = statuses.length;
  client.setParameters([{ name: readOnly, value: 1 }], "set-ro");
  results.readOnlySetReply = (await until("the reply of the read-only set", () => paramReplies.get("set-ro")))[0];
  results.readOnlyError = (await until("an error status for the read-only set", () =>
    statuses.slice(nStatus).find((s) => s.level === 2 && s.message.includes(readOnly)))).message;
  const param = `${ns}/diff_drive_sim.max_angular_velocity`;
  client.subscribeParameterUpdates([param]);
  results.paramBefore = (await getParams([param], "get-1"))[0];
  results.paramNewValue = results.paramBefore.value + 0.5;
  client.setParameters([{ name: param, value: results.paramNewValue, type: "float64" }], "set-1");
  results.paramSetReply = (await until("the reply of setParameters", () => paramReplies.get("set-1")))[0];
  results.paramUpdate = await until("a parameter update", () => paramUpdates.find((p) => p.name === param));
  results.paramAfter = (await getParams([param], "get-2"))[0];
  const all = await getParams([], "get-all");
  results.allParams = all.length;
  results.allParamNodes = [...new Set(all.map((p) => p.name.split(".")[0]))].sort();
  log("parameter", JSON.stringify(results.paramBefore), "->", JSON.stringify(results.paramAfter));

  // The connection graph.
  client.subscribeConnectionGraph();
  await until("the connection graph", () => graph.published.has(odomTopic));
  results.graph = {
    odomPublishers: graph.published.get(odomTopic),
    cmdVelSubscribers: graph.subscribed.get(`${ns}/cmd_vel`),
    setOperationModeProviders: graph.services.get(`${ns}/rsm/setOperationMode`),
  };
  results.errorStatuses = statuses.filter((s) => s.level >= 2 && !s.message.includes(readOnly)).map((s) => s.message);
  console.log(JSON.stringify(results, (k, v) => (typeof v === "bigint" ? v.toString() : v)));
  client.close();
  process.exit(0);
}

main().catch((e) => fail(e && e.stack ? e.stack : e));
