// Topics: every channel the bridge advertises, with its type, publishers
// (connection graph), message rate and bandwidth, and the last message of a
// selected topic. Rates are measured by subscribing to the topics while the
// view is open. Action topics (…/_action/…) are listed but not subscribed:
// an action server may take a vanishing subscriber for a client that went
// away.

import { h, RateMeter, fmt } from './ui.js';

export class TopicsView {
  constructor(ctx) {
    this.ctx = ctx;
    this.bridge = ctx.bridge;
    this.meters = new Map(); // topic -> RateMeter
    this.subs = new Map(); // topic -> unsubscribe
    this.last = new Map(); // topic -> last message
    this.selected = null;

    this.filter = h('input', { type: 'search', placeholder: 'filter topics', id: 'topics-filter', oninput: () => this.renderTable() });
    this.onlyNs = h('input', { type: 'checkbox', checked: false, onchange: () => this.renderTable() });
    this.body = h('tbody');
    this.detailTitle = h('h3', { text: 'select a topic' });
    this.detail = h('pre', { class: 'msg-view', id: 'topics-detail' });
    this.count = h('span', { class: 'muted' });
    this.el = h('div', { class: 'panel topics', id: 'panel-topics' },
      h('div', { class: 'topics-main' },
        h('div', { class: 'toolbar' }, h('h2', { text: 'Topics' }), this.filter,
          h('label', {}, this.onlyNs, `only ${ctx.ns || 'this namespace'}`), this.count),
        h('div', { class: 'table-wrap' }, h('table', { class: 'topic-table', id: 'topic-table' },
          h('thead', {}, h('tr', {}, ['topic', 'type', 'pub', 'rate', 'bandwidth'].map((x) => h('th', { text: x })))),
          this.body))),
      h('div', { class: 'topic-detail' }, this.detailTitle, this.detail));

    this.onChannels = () => {
      this.sync();
      this.renderTable();
    };
    this.bridge.addEventListener('channels', this.onChannels);
    this.bridge.addEventListener('graph', this.onChannels);
    this.bridge.watchGraph();
    this.sync();
    this.renderTable();
    this.timer = setInterval(() => this.renderTable(), 1000);
  }

  sync() {
    const topics = new Set(this.bridge.topics.keys());
    for (const t of topics) {
      if (this.subs.has(t) || t.includes('/_action/')) continue;
      const meter = new RateMeter(3000);
      this.meters.set(t, meter);
      this.subs.set(t, this.bridge.subscribe(t, (m, info) => {
        meter.add(info.size);
        this.last.set(t, m);
        if (t === this.selected) this.showDetail();
      }));
    }
    for (const [t, unsub] of this.subs) {
      if (!topics.has(t) && this.bridge.connected) {
        unsub();
        this.subs.delete(t);
        this.meters.delete(t);
        this.last.delete(t);
      }
    }
  }

  renderTable() {
    const f = this.filter.value.trim().toLowerCase();
    const ns = this.ctx.ns && this.ctx.ns !== '/' ? `${this.ctx.ns}/` : '/';
    const chans = [...this.bridge.topics.values()]
      .filter((c) => !f || c.topic.toLowerCase().includes(f) || c.schemaName.toLowerCase().includes(f))
      .filter((c) => !this.onlyNs.checked || c.topic.startsWith(ns))
      .sort((a, b) => a.topic.localeCompare(b.topic));
    this.count.textContent = `${chans.length} of ${this.bridge.topics.size}`;
    const rows = chans.map((c) => {
      const m = this.meters.get(c.topic);
      const r = m ? m.read() : null;
      const pubs = this.bridge.graph.published.get(c.topic);
      return h('tr', {
        class: c.topic === this.selected ? 'selected' : '',
        dataset: { topic: c.topic },
        onclick: () => {
          this.selected = c.topic;
          this.renderTable();
          this.showDetail();
        },
      },
      h('td', { class: 'mono', text: c.topic }),
      h('td', { class: 'mono muted', text: c.schemaName }),
      h('td', { text: pubs ? String(pubs.length) : '' , title: pubs ? pubs.join('\n') : '' }),
      h('td', { class: 'num', text: r ? (r.hz > 0 ? `${fmt(r.hz, r.hz < 10 ? 2 : 1)} Hz` : '—') : '—', title: r ? '' : 'action topics are not subscribed (an action server may take a vanishing subscriber for a lost client)' }),
      h('td', { class: 'num', text: r && r.bps > 0 ? formatBytes(r.bps) : '' }));
    });
    this.body.replaceChildren(...rows);
  }

  showDetail() {
    const t = this.selected;
    const c = this.bridge.topics.get(t);
    this.detailTitle.textContent = c ? `${t} — ${c.schemaName}` : t;
    const m = this.last.get(t);
    this.detail.textContent = m ? toText(m).replace(/^\n/, '') : 'no message yet';
  }

  destroy() {
    clearInterval(this.timer);
    this.bridge.removeEventListener('channels', this.onChannels);
    this.bridge.removeEventListener('graph', this.onChannels);
    for (const u of this.subs.values()) u();
  }
}

function formatBytes(bps) {
  if (bps >= 1e6) return `${(bps / 1e6).toFixed(2)} MB/s`;
  if (bps >= 1e3) return `${(bps / 1e3).toFixed(1)} kB/s`;
  return `${bps.toFixed(0)} B/s`;
}

/** YAML-like text of a decoded message; long arrays are shortened. */
export function toText(v, indent = '') {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Math.round(v * 1e6) / 1e6);
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return String(v);
  if (ArrayBuffer.isView(v) || Array.isArray(v)) {
    const arr = Array.from(v);
    if (arr.length === 0) return '[]';
    if (arr.every((x) => typeof x !== 'object')) {
      const shown = arr.slice(0, 16).map((x) => toText(x)).join(', ');
      return `[${shown}${arr.length > 16 ? `, … (${arr.length} items)` : ''}]`;
    }
    const shown = arr.slice(0, 8).map((x) => `\n${indent}- ${toText(x, `${indent}  `).trimStart()}`).join('');
    return shown + (arr.length > 8 ? `\n${indent}- … (${arr.length} items)` : '');
  }
  if (v && typeof v === 'object') {
    return Object.entries(v).map(([k, x]) => {
      const s = toText(x, `${indent}  `);
      return typeof x === 'object' && x !== null && !ArrayBuffer.isView(x) && !(Array.isArray(x) && x.every((e) => typeof e !== 'object'))
        ? `\n${indent}${k}:${s.startsWith('\n') ? s : ` ${s}`}` : `\n${indent}${k}: ${s}`;
    }).join('');
  }
  return String(v);
}
