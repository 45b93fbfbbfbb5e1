// Client of the Foxglove WebSocket protocol (subprotocol
// foxglove.websocket.v1) for ROS 2 servers: channels with ros2msg schemas
// and CDR payloads, services, client publishing and parameters.
//
// The client keeps what the page wants (subscriptions by topic, publishers
// by topic) apart from what the server currently offers (channels,
// services), so subscriptions made before a topic exists, or before a
// reconnect, start as soon as the server advertises the topic.

import { parseSchema } from './ros2msg.js';
import { decode, encode } from './cdr.js';

export const SUBPROTOCOL = 'foxglove.websocket.v1';

// Binary opcodes.
const OP_MESSAGE_DATA = 0x01; // server -> client
const OP_SERVICE_RESPONSE = 0x03; // server -> client
const OP_CLIENT_MESSAGE = 0x01; // client -> server
const OP_SERVICE_REQUEST = 0x02; // client -> server

const utf8 = new TextEncoder();
const utf8dec = new TextDecoder();

/** Error of a service call: the server's failure message or a timeout. */
export class CallError extends Error {
  constructor(msg) {
    super(msg);
    this.name = 'CallError';
  }
}

// A schema cache shared by all channels with the same name and text.
const schemaCache = new Map();
function cachedSchema(name, text) {
  const k = `${name}\u0000${text}`;
  let s = schemaCache.get(k);
  if (!s) {
    s = parseSchema(text, name);
    schemaCache.set(k, s);
  }
  return s;
}

/**
 * Bridge is one connection to a Foxglove WebSocket server, re-opened with
 * back-off when it drops. Events (EventTarget): "status" (detail:
 * {connected, url, serverInfo, error}), "channels", "services",
 * "serverStatus" (detail: the status message), "graph", "parameters".
 */
export class Bridge extends EventTarget {
  constructor(url, { WebSocketImpl = globalThis.WebSocket, reconnectMs = 1000 } = {}) {
    super();
    this.url = url;
    this.WebSocketImpl = WebSocketImpl;
    this.reconnectMs = reconnectMs;
    this.ws = null;
    this.connected = false;
    this.serverInfo = null;
    this.channels = new Map(); // id -> channel
    this.topics = new Map(); // topic -> channel
    this.services = new Map(); // name -> service
    this.servicesById = new Map();
    this.wanted = new Map(); // topic -> {listeners: Set, subId, channelId}
    this.subs = new Map(); // subId -> wanted entry
    this.nextSubId = 1;
    this.pubs = new Map(); // topic -> {schemaName, refs, chanId}
    this.nextChanId = 1;
    this.calls = new Map(); // callId -> {resolve, reject, timer, service}
    this.nextCallId = 1;
    this.paramRequests = new Map(); // id -> {resolve, reject, timer}
    this.nextParamId = 1;
    this.waiters = new Set(); // functions re-checked on advertisements
    this.graph = { published: new Map(), subscribed: new Map(), services: new Map() };
    this.graphWanted = false;
    this.stats = { received: 0, bytes: 0, decodeErrors: 0 };
    this.closed = false;
    this.retry = null;
  }

  /** Opens the connection (and keeps re-opening it until close()). */
  connect() {
    this.closed = false;
    this.open();
    return this;
  }

  /** Closes the connection for good. */
  close() {
    this.closed = true;
    clearTimeout(this.retry);
    if (this.ws) this.ws.close();
  }

  open() {
    let ws;
    try {
      ws = new this.WebSocketImpl(this.url, [SUBPROTOCOL]);
    } catch (e) {
      this.emitStatus(String(e));
      this.scheduleReconnect();
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      if (ws.protocol && ws.protocol !== SUBPROTOCOL) {
        this.emitStatus(`server chose subprotocol ${ws.protocol}`);
        ws.close();
      }
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data === 'string') this.onJSON(ev.data);
      else this.onBinary(new Uint8Array(ev.data));
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.reset();
      this.emitStatus('connection closed');
      if (!this.closed) this.scheduleReconnect();
    };
    ws.onerror = () => {};
  }

  scheduleReconnect() {
    clearTimeout(this.retry);
    this.retry = setTimeout(() => this.open(), this.reconnectMs);
  }

  // reset forgets what the server offered; the page's wishes stay.
  reset() {
    this.connected = false;
    this.serverInfo = null;
    this.channels.clear();
    this.topics.clear();
    this.services.clear();
    this.servicesById.clear();
    for (const w of this.wanted.values()) {
      w.subId = null;
      w.channelId = null;
    }
    this.subs.clear();
    for (const p of this.pubs.values()) p.advertised = false;
    for (const c of this.calls.values()) {
      clearTimeout(c.timer);
      c.reject(new CallError('connection lost'));
    }
    this.calls.clear();
    for (const r of this.paramRequests.values()) {
      clearTimeout(r.timer);
      r.reject(new CallError('connection lost'));
    }
    this.paramRequests.clear();
    this.graph = { published: new Map(), subscribed: new Map(), services: new Map() };
    this.dispatchEvent(new CustomEvent('channels'));
    this.dispatchEvent(new CustomEvent('services'));
  }

  emitStatus(error) {
    this.dispatchEvent(new CustomEvent('status', {
      detail: { connected: this.connected, url: this.url, serverInfo: this.serverInfo, error },
    }));
  }

  sendJSON(obj) {
    if (this.ws && this.ws.readyState === 1) this.ws.send(JSON.stringify(obj));
  }

  onJSON(text) {
    let m;
    try {
      m = JSON.parse(text);
    } catch (e) {
      console.warn('bridge: bad JSON', e);
      return;
    }
    switch (m.op) {
      case 'serverInfo':
        this.serverInfo = m;
        this.connected = true;
        this.emitStatus(null);
        for (const [topic, p] of this.pubs) this.advertisePub(topic, p);
        if (this.graphWanted) this.sendJSON({ op: 'subscribeConnectionGraph' });
        break;
      case 'advertise':
        for (const c of m.channels || []) this.addChannel(c);
        this.syncSubscriptions();
        this.dispatchEvent(new CustomEvent('channels'));
        this.wake();
        break;
      case 'unadvertise':
        for (const id of m.channelIds || []) this.removeChannel(id);
        this.dispatchEvent(new CustomEvent('channels'));
        break;
      case 'advertiseServices':
        for (const s of m.services || []) this.addService(s);
        this.dispatchEvent(new CustomEvent('services'));
        this.wake();
        break;
      case 'unadvertiseServices':
        for (const id of m.serviceIds || []) {
          const s = this.servicesById.get(id);
          if (s) {
            this.servicesById.delete(id);
            if (this.services.get(s.name) === s) this.services.delete(s.name);
          }
        }
        this.dispatchEvent(new CustomEvent('services'));
        break;
      case 'serviceCallFailure': {
        const c = this.calls.get(m.callId);
        if (c) {
          this.calls.delete(m.callId);
          clearTimeout(c.timer);
          c.reject(new CallError(m.message || 'service call failed'));
        }
        break;
      }
      case 'parameterValues': {
        const r = m.id !== undefined ? this.paramRequests.get(m.id) : undefined;
        if (r) {
          this.paramRequests.delete(m.id);
          clearTimeout(r.timer);
          r.resolve(m.parameters || []);
        }
        this.dispatchEvent(new CustomEvent('parameters', { detail: m }));
        break;
      }
      case 'connectionGraphUpdate':
        this.applyGraph(m);
        break;
      case 'status':
        this.dispatchEvent(new CustomEvent('serverStatus', { detail: m }));
        break;
      default:
        break;
    }
  }

  addChannel(c) {
    const old = this.channels.get(c.id);
    if (old) this.removeChannel(c.id);
    const ch = { ...c, schemaObj: null, schemaError: null };
    this.channels.set(c.id, ch);
    this.topics.set(c.topic, ch);
  }

  removeChannel(id) {
    const ch = this.channels.get(id);
    if (!ch) return;
    this.channels.delete(id);
    if (this.topics.get(ch.topic) === ch) this.topics.delete(ch.topic);
    const w = this.wanted.get(ch.topic);
    if (w && w.channelId === id) {
      this.subs.delete(w.subId);
      w.subId = null;
      w.channelId = null;
    }
  }

  addService(s) {
    const svc = { ...s, reqSchema: null, respSchema: null };
    this.servicesById.set(s.id, svc);
    this.services.set(s.name, svc);
  }

  applyGraph(m) {
    for (const t of m.publishedTopics || []) this.graph.published.set(t.name, t.publisherIds || []);
    for (const t of m.subscribedTopics || []) this.graph.subscribed.set(t.name, t.subscriberIds || []);
    for (const s of m.advertisedServices || []) this.graph.services.set(s.name, s.providerIds || []);
    for (const n of m.removedTopics || []) {
      this.graph.published.delete(n);
      this.graph.subscribed.delete(n);
    }
    for (const n of m.removedServices || []) this.graph.services.delete(n);
    this.dispatchEvent(new CustomEvent('graph'));
  }

  /** Asks the server for connection graph updates (if it offers them). */
  watchGraph() {
    this.graphWanted = true;
    if (this.connected) this.sendJSON({ op: 'subscribeConnectionGraph' });
  }

  hasCapability(c) {
    return !!(this.serverInfo && (this.serverInfo.capabilities || []).includes(c));
  }

  channelSchema(ch) {
    if (!ch.schemaObj && !ch.schemaError) {
      try {
        ch.schemaObj = cachedSchema(ch.schemaName, ch.schema);
      } catch (e) {
        ch.schemaError = e;
        console.warn(`bridge: schema of ${ch.topic} (${ch.schemaName}):`, e);
      }
    }
    return ch.schemaObj;
  }

  /**
   * Calls cb(message, info) for every message on topic, decoded from CDR;
   * info = {topic, schemaName, receiveTime (ns, BigInt), size}. Returns a
   * function that ends this subscription.
   */
  subscribe(topic, cb) {
    let w = this.wanted.get(topic);
    if (!w) {
      w = { topic, listeners: new Set(), subId: null, channelId: null };
      this.wanted.set(topic, w);
    }
    const entry = { cb };
    w.listeners.add(entry);
    this.syncSubscriptions();
    return () => {
      w.listeners.delete(entry);
      if (w.listeners.size === 0) {
        this.wanted.delete(topic);
        if (w.subId !== null) {
          this.sendJSON({ op: 'unsubscribe', subscriptionIds: [w.subId] });
          this.subs.delete(w.subId);
        }
      }
    };
  }

  syncSubscriptions() {
    if (!this.connected) return;
    const add = [];
    for (const w of this.wanted.values()) {
      const ch = this.topics.get(w.topic);
      if (!ch || w.channelId === ch.id) continue;
      if (ch.encoding !== 'cdr') continue;
      if (w.subId !== null) {
        this.sendJSON({ op: 'unsubscribe', subscriptionIds: [w.subId] });
        this.subs.delete(w.subId);
      }
      w.subId = this.nextSubId++;
      w.channelId = ch.id;
      this.subs.set(w.subId, w);
      add.push({ id: w.subId, channelId: ch.id });
    }
    if (add.length) this.sendJSON({ op: 'subscribe', subscriptions: add });
  }

  onBinary(b) {
    if (b.length < 1) return;
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    switch (b[0]) {
      case OP_MESSAGE_DATA: {
        if (b.length < 13) return;
        const w = this.subs.get(v.getUint32(1, true));
        if (!w) return;
        const ch = this.channels.get(w.channelId);
        if (!ch) return;
        const payload = b.subarray(13);
        this.stats.received++;
        this.stats.bytes += payload.length;
        const schema = this.channelSchema(ch);
        if (!schema) return;
        let msg;
        try {
          msg = decode(schema, payload);
        } catch (e) {
          this.stats.decodeErrors++;
          console.warn(`bridge: cannot decode ${ch.topic}:`, e);
          return;
        }
        const info = { topic: ch.topic, schemaName: ch.schemaName, receiveTime: v.getBigUint64(5, true), size: payload.length };
        for (const l of [...w.listeners]) {
          try {
            l.cb(msg, info);
          } catch (e) {
            console.error(`bridge: listener of ${ch.topic}:`, e);
          }
        }
        break;
      }
      case OP_SERVICE_RESPONSE: {
        if (b.length < 13) return;
        const callId = v.getUint32(5, true);
        const encLen = v.getUint32(9, true);
        const c = this.calls.get(callId);
        if (!c) return;
        this.calls.delete(callId);
        clearTimeout(c.timer);
        const enc = utf8dec.decode(b.subarray(13, 13 + encLen));
        if (enc !== 'cdr') {
          c.reject(new CallError(`response encoded as ${enc}, not cdr`));
          return;
        }
        try {
          c.resolve(decode(c.respSchema, b.subarray(13 + encLen)));
        } catch (e) {
          c.reject(new CallError(`cannot decode the response of ${c.service}: ${e.message}`));
        }
        break;
      }
      default:
        break;
    }
  }

  wake() {
    for (const f of [...this.waiters]) f();
  }

  /** Resolves with the service once the server advertises it. */
  waitForService(name, timeoutMs) {
    const s = this.services.get(name);
    if (s) return Promise.resolve(s);
    return new Promise((resolve, reject) => {
      const check = () => {
        const svc = this.services.get(name);
        if (svc) {
          this.waiters.delete(check);
          clearTimeout(timer);
          resolve(svc);
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new CallError(`service ${name} is not available`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  serviceSchemas(svc) {
    if (!svc.reqSchema) {
      const req = svc.request || { schemaName: `${svc.type}_Request`, schema: svc.requestSchema || '' };
      const resp = svc.response || { schemaName: `${svc.type}_Response`, schema: svc.responseSchema || '' };
      svc.reqSchema = cachedSchema(req.schemaName || `${svc.type}_Request`, req.schema || '');
      svc.respSchema = cachedSchema(resp.schemaName || `${svc.type}_Response`, resp.schema || '');
    }
    return svc;
  }

  /**
   * Calls a service and resolves with the decoded response. Waits up to
   * the timeout (10 s: a loaded robot or a slow link answers late, and the
   * bridge itself waits 30 s) for the service to be advertised and for the
   * answer.
   */
  async call(name, request = {}, { timeoutMs = 10000 } = {}) {
    const start = Date.now();
    const svc = this.serviceSchemas(await this.waitForService(name, timeoutMs));
    const payload = encode(svc.reqSchema, request);
    const callId = this.nextCallId++;
    const enc = utf8.encode('cdr');
    const frame = new Uint8Array(13 + enc.length + payload.length);
    const v = new DataView(frame.buffer);
    frame[0] = OP_SERVICE_REQUEST;
    v.setUint32(1, svc.id, true);
    v.setUint32(5, callId, true);
    v.setUint32(9, enc.length, true);
    frame.set(enc, 13);
    frame.set(payload, 13 + enc.length);
    if (!this.ws || this.ws.readyState !== 1) throw new CallError('not connected');
    return new Promise((resolve, reject) => {
      const left = Math.max(500, timeoutMs - (Date.now() - start));
      const timer = setTimeout(() => {
        this.calls.delete(callId);
        reject(new CallError(`${name}: no answer within ${left} ms`));
      }, left);
      this.calls.set(callId, { resolve, reject, timer, service: name, respSchema: svc.respSchema });
      this.ws.send(frame);
    });
  }

  /** Finds the ros2msg schema text of a type among advertised channels. */
  findSchema(schemaName) {
    for (const ch of this.channels.values()) {
      if (ch.schemaName === schemaName && ch.encoding === 'cdr') return ch.schema;
    }
    return null;
  }

  /**
   * Returns a publisher for topic with type schemaName. fallbackSchema is
   * the ros2msg text used when no advertised channel carries the type.
   * publisher.publish(obj) encodes and sends; publisher.close() ends it.
   */
  advertise(topic, schemaName, fallbackSchema) {
    let p = this.pubs.get(topic);
    if (!p) {
      p = { schemaName, fallbackSchema, refs: 0, chanId: this.nextChanId++, advertised: false, schema: null };
      this.pubs.set(topic, p);
      if (this.connected) this.advertisePub(topic, p);
    }
    p.refs++;
    let open = true;
    return {
      publish: (obj) => {
        if (!open) throw new Error(`publisher of ${topic} is closed`);
        if (!p.advertised) this.advertisePub(topic, p);
        if (!p.advertised) return false;
        const payload = encode(p.schema, obj);
        const frame = new Uint8Array(5 + payload.length);
        frame[0] = OP_CLIENT_MESSAGE;
        new DataView(frame.buffer).setUint32(1, p.chanId, true);
        frame.set(payload, 5);
        this.ws.send(frame);
        return true;
      },
      close: () => {
        if (!open) return;
        open = false;
        if (--p.refs === 0) {
          this.pubs.delete(topic);
          if (p.advertised) this.sendJSON({ op: 'unadvertise', channelIds: [p.chanId] });
        }
      },
    };
  }

  advertisePub(topic, p) {
    if (!this.connected || !this.ws || this.ws.readyState !== 1) return;
    if (!this.hasCapability('clientPublish')) return;
    const text = this.findSchema(p.schemaName) || p.fallbackSchema;
    if (!p.schema) p.schema = cachedSchema(p.schemaName, text);
    this.sendJSON({
      op: 'advertise',
      channels: [{ id: p.chanId, topic, encoding: 'cdr', schemaName: p.schemaName, schemaEncoding: 'ros2msg', schema: text }],
    });
    p.advertised = true;
  }

  /** Resolves with [{name, value, type}] for the named parameters. */
  getParameters(names, { timeoutMs = 5000 } = {}) {
    return this.paramRequest({ op: 'getParameters', parameterNames: names }, timeoutMs);
  }

  /** Sets parameters [{name, value, type?}] and resolves with the new values. */
  setParameters(params, { timeoutMs = 5000 } = {}) {
    return this.paramRequest({ op: 'setParameters', parameters: params }, timeoutMs);
  }

  paramRequest(msg, timeoutMs) {
    if (!this.connected) return Promise.reject(new CallError('not connected'));
    const id = `dash-${this.nextParamId++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.paramRequests.delete(id);
        reject(new CallError(`${msg.op}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.paramRequests.set(id, { resolve, reject, timer });
      this.sendJSON({ ...msg, id });
    });
  }
}

/**
 * The WebSocket URL of the bridge that served the page. A bridge on a
 * non-loopback address wants a token: opened as …/#token=T, the page
 * passes it on as ?token=T (kept for the tab in sessionStorage, so links
 * that change the hash do not lose it).
 */
export function defaultURL(loc = globalThis.location, store = globalThis.sessionStorage) {
  const proto = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  let token = new URLSearchParams((loc.hash || '').slice(1)).get('token') || '';
  try {
    if (token) store?.setItem('fsmnodes.token', token);
    else token = store?.getItem('fsmnodes.token') || '';
  } catch { /* storage may be unavailable */ }
  return `${proto}//${loc.host}/` + (token ? `?token=${encodeURIComponent(token)}` : '');
}
