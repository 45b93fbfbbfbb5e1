// /rosout: a store that collects rcl_interfaces/msg/Log from page load on
// (bounded), and the Log view with a level filter, a text filter and a
// namespace filter.

import { h } from './ui.js';

export const LEVELS = [
  { value: 10, name: 'DEBUG' },
  { value: 20, name: 'INFO' },
  { value: 30, name: 'WARN' },
  { value: 40, name: 'ERROR' },
  { value: 50, name: 'FATAL' },
];

export function levelName(v) {
  const l = [...LEVELS].reverse().find((x) => v >= x.value);
  return l ? l.name : String(v);
}

export class RosoutStore extends EventTarget {
  constructor(bridge, max = 2000) {
    super();
    this.max = max;
    this.entries = [];
    this.unseen = 0; // warnings and errors since the view was last open
    this.seq = 0;
    this.unsub = bridge.subscribe('/rosout', (m) => this.add(m));
  }

  add(m) {
    this.entries.push({ ...m, seq: this.seq++ });
    if (this.entries.length > this.max) this.entries.splice(0, this.entries.length - this.max);
    if (m.level >= 30) this.unseen++;
    this.dispatchEvent(new CustomEvent('entry'));
  }
}

export class LogView {
  constructor(ctx) {
    this.ctx = ctx;
    this.store = ctx.rosout;
    this.level = h('select', { id: 'log-level', attrs: { 'aria-label': 'minimum level' }, onchange: () => this.render() },
      LEVELS.map((l) => h('option', { value: String(l.value), text: `${l.name} and above`, selected: l.value === 20 })));
    this.filter = h('input', { type: 'search', placeholder: 'filter text or node', oninput: () => this.render() });
    this.onlyNs = h('input', { type: 'checkbox', onchange: () => this.render() });
    this.body = h('tbody');
    this.count = h('span', { class: 'muted' });
    this.el = h('div', { class: 'panel log', id: 'panel-log' },
      h('div', { class: 'toolbar' }, h('h2', { text: '/rosout' }), this.level, this.filter,
        h('label', {}, this.onlyNs, `only ${ctx.ns || 'this namespace'}`), this.count),
      h('div', { class: 'table-wrap' }, h('table', { class: 'log-table', id: 'log-table' },
        h('thead', {}, h('tr', {}, ['time', 'level', 'node', 'message'].map((x) => h('th', { text: x })))),
        this.body)));
    this.onEntry = () => this.scheduleRender();
    this.store.addEventListener('entry', this.onEntry);
    this.store.unseen = 0;
    this.render();
  }

  scheduleRender() {
    this.store.unseen = 0;
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      this.render();
    }, 200);
  }

  render() {
    const min = Number(this.level.value);
    const f = this.filter.value.trim().toLowerCase();
    // Logger names use dots: /diffbot/rsmNode logs as diffbot.rsmNode.
    const ns = this.ctx.ns && this.ctx.ns !== '/' ? `${this.ctx.ns.replace(/^\//, '').replace(/\//g, '.')}.` : '';
    const shown = [];
    for (let i = this.store.entries.length - 1; i >= 0 && shown.length < 500; i--) {
      const e = this.store.entries[i];
      if (e.level < min) continue;
      if (this.onlyNs.checked && ns && !e.name.startsWith(ns)) continue;
      if (f && !e.msg.toLowerCase().includes(f) && !e.name.toLowerCase().includes(f)) continue;
      shown.push(e);
    }
    this.count.textContent = `${shown.length} shown of ${this.store.entries.length}`;
    this.body.replaceChildren(...shown.map((e) => {
      const lv = levelName(e.level);
      const t = new Date(e.stamp.sec * 1000 + Math.floor(e.stamp.nanosec / 1e6));
      return h('tr', { dataset: { level: lv } },
        h('td', { class: 'mono muted', text: t.toLocaleTimeString([], { hour12: false }) + `.${String(t.getMilliseconds()).padStart(3, '0')}` }),
        h('td', {}, h('span', { class: `level ${lv.toLowerCase()}`, text: lv })),
        h('td', { class: 'mono', text: e.name }),
        h('td', { class: 'msg', text: e.msg, title: e.file ? `${e.file}:${e.line} ${e.function}` : '' }));
    }));
  }

  destroy() {
    clearTimeout(this.pending);
    this.store.removeEventListener('entry', this.onEntry);
  }
}
