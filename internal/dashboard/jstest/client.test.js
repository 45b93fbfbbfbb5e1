// Tests of the Foxglove protocol client (against a scripted fake WebSocket),
// robot discovery, the TF buffer and the hexapod leg kinematics (against
// the Go forward kinematics, DASHBOARD_HEXAPOD_FK).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

// Node 18 has no global CustomEvent.
if (typeof globalThis.CustomEvent === 'undefined') {
  globalThis.CustomEvent = class extends Event {
    constructor(type, init = {}) {
      super(type);
      this.detail = init.detail;
    }
  };
}

const { Bridge, SUBPROTOCOL, CallError, defaultURL } = await import('../static/js/foxglove.js');
const { encode, decode } = await import('../static/js/cdr.js');
const { parseSchema } = await import('../static/js/ros2msg.js');
const { discoverRobots } = await import('../static/js/app.js');
const { TfBuffer } = await import('../static/js/tf.js');
const { legPoints } = await import('../static/js/hexapod.js');
const { toText } = await import('../static/js/topics.js');

// FakeSocket records what the client sends; the test plays the server.
class FakeSocket {
  static last = null;
  constructor(url, protocols) {
    this.url = url;
    this.protocols = protocols;
    this.readyState = 0;
    this.sent = [];
    this.protocol = '';
    FakeSocket.last = this;
  }

  send(data) {
    this.sent.push(typeof data === 'string' ? JSON.parse(data) : new Uint8Array(data));
  }

  close() {
    this.readyState = 3;
    this.onclose?.({});
  }

  // server side
  open() {
    this.readyState = 1;
    this.protocol = SUBPROTOCOL;
    this.onopen?.({});
  }

  json(obj) {
    this.onmessage({ data: JSON.stringify(obj) });
  }

  binary(bytes) {
    this.onmessage({ data: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) });
  }

  take(pred) {
    const i = this.sent.findIndex(pred);
    assert.ok(i >= 0, `expected a sent message; sent: ${JSON.stringify(this.sent.map((s) => (s instanceof Uint8Array ? `binary ${s[0]}` : s.op)))}`);
    return this.sent.splice(i, 1)[0];
  }
}

const STRING = { name: 'std_msgs/msg/String', text: 'string data' };
const SETBOOL_REQ = 'bool data';
const SETBOOL_RESP = 'bool success\nstring message';

function serverInfo(ws, caps = ['clientPublish', 'services', 'parameters', 'connectionGraph']) {
  ws.json({ op: 'serverInfo', name: 'test bridge', capabilities: caps, supportedEncodings: ['cdr'] });
}

function messageData(subId, payload) {
  const b = new Uint8Array(13 + payload.length);
  const v = new DataView(b.buffer);
  b[0] = 1;
  v.setUint32(1, subId, true);
  v.setBigUint64(5, 123456789n, true);
  b.set(payload, 13);
  return b;
}

test('subscribe before advertise, decode messageData, unsubscribe', () => {
  const br = new Bridge('ws://x/', { WebSocketImpl: FakeSocket }).connect();
  const ws = FakeSocket.last;
  assert.deepEqual(ws.protocols, [SUBPROTOCOL]);
  const got = [];
  const unsub = br.subscribe('/chatter', (m, info) => got.push([m.data, info.receiveTime, info.topic]));
  ws.open();
  serverInfo(ws);
  assert.equal(ws.sent.length, 0, 'nothing to subscribe yet');
  ws.json({ op: 'advertise', channels: [{ id: 7, topic: '/chatter', encoding: 'cdr', schemaName: STRING.name, schema: STRING.text, schemaEncoding: 'ros2msg' }] });
  const sub = ws.take((m) => m.op === 'subscribe');
  assert.equal(sub.subscriptions.length, 1);
  assert.equal(sub.subscriptions[0].channelId, 7);
  const id = sub.subscriptions[0].id;
  const schema = parseSchema(STRING.text, STRING.name);
  ws.binary(messageData(id, encode(schema, { data: 'hi' })));
  ws.binary(messageData(id + 100, encode(schema, { data: 'not ours' })));
  const warn = console.warn;
  console.warn = () => {}; // the client reports the malformed message; expected here
  try {
    ws.binary(messageData(id, new Uint8Array([0, 1, 0, 0, 9, 0, 0, 0]))); // malformed: counted, dropped
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(got, [['hi', 123456789n, '/chatter']]);
  assert.equal(br.stats.decodeErrors, 1);
  unsub();
  assert.deepEqual(ws.take((m) => m.op === 'unsubscribe').subscriptionIds, [id]);
});

test('reconnect re-subscribes and re-advertises', async () => {
  const br = new Bridge('ws://x/', { WebSocketImpl: FakeSocket, reconnectMs: 5 }).connect();
  let ws = FakeSocket.last;
  br.subscribe('/chatter', () => {});
  const pub = br.advertise('/cmd', STRING.name, STRING.text);
  ws.open();
  serverInfo(ws);
  ws.take((m) => m.op === 'advertise');
  ws.close();
  assert.equal(br.connected, false);
  await new Promise((r) => setTimeout(r, 30));
  ws = FakeSocket.last;
  assert.notEqual(ws.readyState, 3);
  ws.open();
  serverInfo(ws);
  const adv = ws.take((m) => m.op === 'advertise');
  assert.equal(adv.channels[0].topic, '/cmd');
  ws.json({ op: 'advertise', channels: [{ id: 3, topic: '/chatter', encoding: 'cdr', schemaName: STRING.name, schema: STRING.text }] });
  assert.equal(ws.take((m) => m.op === 'subscribe').subscriptions[0].channelId, 3);
  pub.close();
  br.close();
});

test('client publish: advertise with schema, binary frame, unadvertise', () => {
  const br = new Bridge('ws://x/', { WebSocketImpl: FakeSocket }).connect();
  const ws = FakeSocket.last;
  ws.open();
  serverInfo(ws);
  const pub = br.advertise('/chatter_in', STRING.name, STRING.text);
  const adv = ws.take((m) => m.op === 'advertise');
  const ch = adv.channels[0];
  assert.equal(ch.encoding, 'cdr');
  assert.equal(ch.schemaEncoding, 'ros2msg');
  assert.equal(ch.schemaName, STRING.name);
  assert.ok(pub.publish({ data: 'yo' }));
  const frame = ws.take((m) => m instanceof Uint8Array);
  assert.equal(frame[0], 1);
  assert.equal(new DataView(frame.buffer).getUint32(1, true), ch.id);
  assert.equal(decode(parseSchema(STRING.text, STRING.name), frame.subarray(5)).data, 'yo');
  assert.throws(() => pub.publish({ data: 5 }), /string needs a string/);
  pub.close();
  assert.deepEqual(ws.take((m) => m.op === 'unadvertise').channelIds, [ch.id]);
});

test('no clientPublish capability: nothing is advertised or sent', () => {
  const br = new Bridge('ws://x/', { WebSocketImpl: FakeSocket }).connect();
  const ws = FakeSocket.last;
  ws.open();
  serverInfo(ws, ['services']);
  const pub = br.advertise('/x', STRING.name, STRING.text);
  assert.equal(pub.publish({ data: 'a' }), false);
  assert.equal(ws.sent.length, 0);
});

function serviceResponse(serviceId, callId, payload, encoding = 'cdr') {
  const enc = new TextEncoder().encode(encoding);
  const b = new Uint8Array(13 + enc.length + payload.length);
  const v = new DataView(b.buffer);
  b[0] = 3;
  v.setUint32(1, serviceId, true);
  v.setUint32(5, callId, true);
  v.setUint32(9, enc.length, true);
  b.set(enc, 13);
  b.set(payload, 13 + enc.length);
  return b;
}

test('service call: waits for the advertisement, frames the request, decodes the response', async () => {
  const br = new Bridge('ws://x/', { WebSocketImpl: FakeSocket }).connect();
  const ws = FakeSocket.last;
  ws.open();
  serverInfo(ws);
  const p = br.call('/rsm/startStopExploration', { data: true }, { timeoutMs: 2000 });
  await new Promise((r) => setTimeout(r, 5));
  // Old-style advertisement (requestSchema/responseSchema).
  ws.json({ op: 'advertiseServices', services: [{ id: 4, name: '/rsm/startStopExploration', type: 'std_srvs/srv/SetBool', requestSchema: SETBOOL_REQ, responseSchema: SETBOOL_RESP }] });
  await new Promise((r) => setTimeout(r, 5));
  const req = ws.take((m) => m instanceof Uint8Array);
  const v = new DataView(req.buffer);
  assert.equal(req[0], 2);
  assert.equal(v.getUint32(1, true), 4);
  const callId = v.getUint32(5, true);
  const encLen = v.getUint32(9, true);
  assert.equal(new TextDecoder().decode(req.subarray(13, 13 + encLen)), 'cdr');
  assert.deepEqual(decode(parseSchema(SETBOOL_REQ, 'std_srvs/srv/SetBool_Request'), req.subarray(13 + encLen)), { data: true });
  const resp = encode(parseSchema(SETBOOL_RESP, 'std_srvs/srv/SetBool_Response'), { success: true, message: 'Exploration started' });
  ws.binary(serviceResponse(4, callId, resp));
  assert.deepEqual(await p, { success: true, message: 'Exploration started' });
});

test('service call failure, timeout, unknown service, lost connection', async () => {
  const br = new Bridge('ws://x/', { WebSocketImpl: FakeSocket, reconnectMs: 100000 }).connect();
  const ws = FakeSocket.last;
  ws.open();
  serverInfo(ws);
  ws.json({ op: 'advertiseServices', services: [{ id: 1, name: '/s', type: 'std_srvs/srv/SetBool',
    request: { encoding: 'cdr', schemaName: 'std_srvs/srv/SetBool_Request', schemaEncoding: 'ros2msg', schema: SETBOOL_REQ },
    response: { encoding: 'cdr', schemaName: 'std_srvs/srv/SetBool_Response', schemaEncoding: 'ros2msg', schema: SETBOOL_RESP } }] });
  const p1 = br.call('/s', { data: false });
  await new Promise((r) => setTimeout(r, 1));
  const callId = new DataView(ws.take((m) => m instanceof Uint8Array).buffer).getUint32(5, true);
  ws.json({ op: 'serviceCallFailure', serviceId: 1, callId, message: 'Service does not exist' });
  await assert.rejects(p1, (e) => e instanceof CallError && /does not exist/.test(e.message));
  await assert.rejects(br.call('/nope', {}, { timeoutMs: 20 }), /not available/);
  await assert.rejects(br.call('/s', { data: 3 }), /bool needs true or false/, 'bad request rejected before sending');
  await assert.rejects(br.call('/s', {}, { timeoutMs: 30 }), /no answer/);
  const p2 = br.call('/s', {});
  await new Promise((r) => setTimeout(r, 1));
  ws.close();
  await assert.rejects(p2, /connection lost/);
  br.close();
});

test('parameters: get and set with request ids', async () => {
  const br = new Bridge('ws://x/', { WebSocketImpl: FakeSocket }).connect();
  const ws = FakeSocket.last;
  ws.open();
  serverInfo(ws);
  const p = br.getParameters(['/hexapod/hexapod_controller.COXA_LENGTH']);
  const req = ws.take((m) => m.op === 'getParameters');
  assert.deepEqual(req.parameterNames, ['/hexapod/hexapod_controller.COXA_LENGTH']);
  ws.json({ op: 'parameterValues', id: req.id, parameters: [{ name: req.parameterNames[0], value: 0.083 }] });
  assert.deepEqual(await p, [{ name: '/hexapod/hexapod_controller.COXA_LENGTH', value: 0.083 }]);
  const s = br.setParameters([{ name: '/a.b', value: 2 }]);
  const sreq = ws.take((m) => m.op === 'setParameters');
  ws.json({ op: 'parameterValues', id: sreq.id, parameters: [{ name: '/a.b', value: 2 }] });
  assert.equal((await s)[0].value, 2);
});

test('unadvertise drops the subscription; a new channel for the topic is subscribed again', () => {
  const br = new Bridge('ws://x/', { WebSocketImpl: FakeSocket }).connect();
  const ws = FakeSocket.last;
  ws.open();
  serverInfo(ws);
  br.subscribe('/t', () => {});
  ws.json({ op: 'advertise', channels: [{ id: 1, topic: '/t', encoding: 'cdr', schemaName: STRING.name, schema: STRING.text }] });
  ws.take((m) => m.op === 'subscribe');
  ws.json({ op: 'unadvertise', channelIds: [1] });
  ws.json({ op: 'advertise', channels: [{ id: 2, topic: '/t', encoding: 'cdr', schemaName: STRING.name, schema: STRING.text }] });
  assert.equal(ws.take((m) => m.op === 'subscribe').subscriptions[0].channelId, 2);
});

test('discoverRobots finds the demo robots by their services', () => {
  const services = [
    '/diffbot/rsm/setOperationMode', '/diffbot/rsm/stateInfo', '/diffbot/navigator/get_type_description',
    '/hexapod/hexapod_controller/start_stop', '/hexapod/hexapod_controller/stand_up',
    '/velma/velma_core/motors/enable', '/velma/velma_core/relax',
    '/rsm/setOperationMode', '/other/stand_up',
  ];
  const r = discoverRobots(services);
  assert.deepEqual([...r.keys()], ['/', '/diffbot', '/hexapod', '/velma']);
  assert.equal(r.get('/diffbot').rsm, true);
  assert.deepEqual(r.get('/hexapod').hexapods, ['/hexapod/hexapod_controller']);
  assert.deepEqual(r.get('/velma').velmas, ['/velma/velma_core']);
  assert.equal(r.get('/').rsm, true);
  assert.deepEqual(r.get('/').hexapods, [], 'stand_up without start_stop is no hexapod');
});

test('TF buffer composes a chain and inverts it', () => {
  const tf = new TfBuffer();
  const tr = (parent, child, x, y, yaw) => ({
    header: { frame_id: parent }, child_frame_id: child,
    transform: { translation: { x, y, z: 0 }, rotation: { x: 0, y: 0, z: Math.sin(yaw / 2), w: Math.cos(yaw / 2) } },
  });
  tf.add({ transforms: [tr('map', 'odom', 1, 0, Math.PI / 2), tr('/odom', 'base_footprint', 1, 0, 0), tr('base_footprint', 'base_scan', 0.1, 0, 0)] });
  const p = tf.lookup('map', 'base_scan');
  assert.ok(Math.abs(p.x - 1) < 1e-9 && Math.abs(p.y - 1.1) < 1e-9 && Math.abs(p.th - Math.PI / 2) < 1e-9, JSON.stringify(p));
  const q = tf.lookup('base_scan', 'map');
  assert.ok(Math.abs(q.th + Math.PI / 2) < 1e-9);
  assert.equal(tf.lookup('map', 'elsewhere'), null);
  tf.add({ transforms: [tr('a', 'b', NaN, 0, 0)] });
  assert.equal(tf.has('b'), false, 'non-finite transforms are dropped');
});

test('hexapod leg drawing equals the Go forward kinematics', () => {
  const path = process.env.DASHBOARD_HEXAPOD_FK;
  assert.ok(path, 'DASHBOARD_HEXAPOD_FK not set: run go test ./internal/dashboard -run JavaScript');
  const g = {
    COXA_LENGTH: 0.083, FEMUR_LENGTH: 0.1, TIBIA_LENGTH: 0.1618,
    COXA_TO_CENTER_X: [-0.12, 0, 0.12, -0.12, 0, 0.12],
    COXA_TO_CENTER_Y: [-0.055, -0.09, -0.055, 0.055, 0.09, 0.055],
    INIT_COXA_ANGLE: [-60, 0, 60, -60, 0, 60],
  };
  const cases = JSON.parse(readFileSync(path, 'utf8'));
  assert.ok(cases.length >= 24);
  for (const c of cases) {
    const foot = legPoints(g, c.leg, ...c.angles)[3];
    const d = Math.hypot(foot.x - c.foot[0], foot.y - c.foot[1], foot.z - c.foot[2]);
    assert.ok(d < 1e-9, `leg ${c.leg} ${c.angles}: ${JSON.stringify(foot)} vs ${c.foot}`);
  }
});

test('message text view shortens long arrays', () => {
  const s = toText({ a: 1.5, b: new Float32Array(40), c: [{ x: 1 }], d: 'q', e: 12345678901234567890n });
  assert.match(s, /a: 1\.5/);
  assert.match(s, /… \(40 items\)/);
  assert.match(s, /- x: 1/);
  assert.match(s, /e: 12345678901234567890/);
});

test('defaultURL passes a token from the hash on and keeps it for the tab', () => {
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  assert.equal(defaultURL({ protocol: 'http:', host: '127.0.0.1:8765', hash: '' }, storage), 'ws://127.0.0.1:8765/');
  assert.equal(defaultURL({ protocol: 'https:', host: 'robot:8765', hash: '#ns=/diffbot&token=a b' }, storage),
    'wss://robot:8765/?token=a%20b');
  // A link that changes the hash keeps the token of the tab.
  assert.equal(defaultURL({ protocol: 'http:', host: 'robot:8765', hash: '#ns=/hexapod' }, storage), 'ws://robot:8765/?token=a%20b');
  // No storage (a sandboxed page) is not an error.
  assert.equal(defaultURL({ protocol: 'http:', host: 'h:1', hash: '' }, undefined), 'ws://h:1/');
});
