// State machines: the FSM introspection of one node (docs/fsm.md). The
// graph of each machine (~/fsm/graph) is laid out and drawn here, as SVG,
// with nothing fetched from the network; the current state (~/fsm/status,
// then each ~/fsm/transition) is highlighted, a transition lights its edge
// up for a moment, and the history lists every transition with its cause.

import { h } from './ui.js';

// The SVG namespace, as the HTML parser gives it to an <svg> element.
let svgNS = null;
function SVGNS() {
  if (!svgNS) {
    const tmp = document.createElement('div');
    tmp.innerHTML = '<svg></svg>';
    svgNS = tmp.firstChild.namespaceURI;
  }
  return svgNS;
}
const BOX_W = 150;
const BOX_H = 34;
const COL = 215;
const ROW = 62;
const PAD = 24;
const HISTORY = 200;
const FIRED_MS = 1500;

/** The nodes that publish state machines: topics …/fsm/graph, sorted. */
export function fsmNodes(topicNames) {
  const out = [];
  for (const t of topicNames) {
    const m = /^(.*)\/fsm\/graph$/.exec(t);
    if (m) out.push(m[1] || '/');
  }
  return out.sort();
}

/**
 * Lays a machine out in layers: a state's layer is its distance from the
 * initial state along the transitions (states not reached from it go after
 * the last layer), and within a layer states are ordered by the mean
 * position of their neighbours in the layer before (a few sweeps), which
 * keeps most edges short and uncrossed. Returns Map name -> {x, y, layer,
 * row} (centres, pixels) and the drawing's width and height.
 */
export function layout(machine) {
  const names = machine.states.map((s) => s.name);
  const out = new Map(names.map((n) => [n, []]));
  const inc = new Map(names.map((n) => [n, []]));
  for (const e of machine.transitions) {
    if (!out.has(e.from_state) || !out.has(e.to_state) || e.from_state === e.to_state) continue;
    out.get(e.from_state).push(e.to_state);
    inc.get(e.to_state).push(e.from_state);
  }
  const layer = new Map();
  const start = names.includes(machine.initial_state) ? machine.initial_state : names[0];
  if (start !== undefined) layer.set(start, 0);
  const queue = start !== undefined ? [start] : [];
  while (queue.length) {
    const n = queue.shift();
    for (const m of out.get(n)) {
      if (!layer.has(m)) {
        layer.set(m, layer.get(n) + 1);
        queue.push(m);
      }
    }
  }
  let last = Math.max(0, ...layer.values());
  for (const n of names) if (!layer.has(n)) layer.set(n, last + 1);
  last = Math.max(0, ...layer.values());
  const layers = Array.from({ length: last + 1 }, () => []);
  for (const n of names) layers[layer.get(n)].push(n);
  const row = new Map();
  const index = () => layers.forEach((l) => l.forEach((n, i) => row.set(n, i)));
  index();
  for (let sweep = 0; sweep < 4; sweep++) {
    for (let k = 1; k < layers.length; k++) {
      const key = (n) => {
        const ns = inc.get(n).concat(out.get(n)).filter((m) => layer.get(m) < k);
        return ns.length ? ns.reduce((a, m) => a + row.get(m), 0) / ns.length : row.get(n);
      };
      const keys = new Map(layers[k].map((n) => [n, key(n)]));
      layers[k].sort((a, b) => keys.get(a) - keys.get(b));
      index();
    }
  }
  const tallest = Math.max(1, ...layers.map((l) => l.length));
  const pos = new Map();
  layers.forEach((l, k) => {
    const offset = ((tallest - l.length) * ROW) / 2;
    l.forEach((n, i) => pos.set(n, { x: PAD + BOX_W / 2 + k * COL, y: PAD + BOX_H / 2 + offset + i * ROW, layer: k, row: i }));
  });
  return { pos, width: 2 * PAD + BOX_W + last * COL, height: 2 * PAD + BOX_H + (tallest - 1) * ROW };
}

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVGNS(), tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) el.append(c);
  return el;
}

function title(text) {
  const t = document.createElementNS(SVGNS(), 'title');
  t.textContent = text;
  return t;
}

/** The point where the segment from the box centre c towards p leaves the box. */
function boxExit(c, p) {
  const dx = p.x - c.x;
  const dy = p.y - c.y;
  if (dx === 0 && dy === 0) return { ...c };
  const s = Math.min(dx ? (BOX_W / 2) / Math.abs(dx) : Infinity, dy ? (BOX_H / 2) / Math.abs(dy) : Infinity);
  return { x: c.x + dx * s, y: c.y + dy * s };
}

/** The SVG drawing of one machine; returns {el, states: Map, edges: Map 'from\u2192to' -> path}. */
export function drawMachine(machine) {
  const { pos, width, height } = layout(machine);
  const root = svg('svg', { class: 'fsm-graph', width: '100%',
    'data-machine': machine.name, role: 'img', 'aria-label': `state machine ${machine.name}` });
  root.append(svg('defs', {},
    svg('marker', { id: `arrow-${machine.name}`, viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '7', markerHeight: '7', orient: 'auto-start-reverse' },
      svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'fsm-arrow' }))));
  // One path per ordered pair, the guards joined in its tooltip; a pair in
  // both directions bends apart.
  const pairs = new Map();
  for (const e of machine.transitions) {
    const k = `${e.from_state}\u2192${e.to_state}`;
    if (!pairs.has(k)) pairs.set(k, { from: e.from_state, to: e.to_state, guards: [] });
    pairs.get(k).guards.push(e.guard);
  }
  const edges = new Map();
  const edgeLayer = svg('g', { class: 'fsm-edges' });
  let top = 0;
  let bottom = height;
  let left = 0;
  let right = width;
  for (const [k, p] of pairs) {
    const a = pos.get(p.from);
    const b = pos.get(p.to);
    if (!a || !b) continue;
    let d;
    if (p.from === p.to) {
      const x = a.x + BOX_W / 4;
      const y = a.y - BOX_H / 2;
      d = `M ${x - 12} ${y} C ${x - 22} ${y - 34}, ${x + 22} ${y - 34}, ${x + 12} ${y}`;
      top = Math.min(top, y - 32);
    } else {
      // Bend to the left of the direction of travel: opposite edges part,
      // and edges between far layers clear the boxes between them.
      const mx = (a.x + b.x) / 2;
      const my = (a.y + b.y) / 2;
      const dx = b.x - a.x;
      const dy = b.y - a.y;
      const len = Math.hypot(dx, dy) || 1;
      // Within a layer, arc aside the boxes between; across far layers,
      // arc over (or under) the layers between.
      let bend = 18;
      if (a.layer === b.layer) bend += 0.3 * Math.abs(dy);
      else if (Math.abs(dx) > COL * 1.5) bend += 0.12 * len;
      const c = { x: mx - (dy / len) * bend, y: my + (dx / len) * bend };
      top = Math.min(top, (my + c.y) / 2 - 6);
      bottom = Math.max(bottom, (my + c.y) / 2 + 6);
      left = Math.min(left, (mx + c.x) / 2 - 6);
      right = Math.max(right, (mx + c.x) / 2 + 6);
      const s = boxExit(a, c);
      const t = boxExit(b, c);
      d = `M ${s.x} ${s.y} Q ${c.x} ${c.y} ${t.x} ${t.y}`;
    }
    const path = svg('path', { d, class: 'fsm-edge', 'marker-end': `url(#arrow-${machine.name})`,
      'data-from': p.from, 'data-to': p.to }, title(`${p.from} → ${p.to}\n${p.guards.join('\n')}`));
    edges.set(k, path);
    edgeLayer.append(path);
  }
  root.append(edgeLayer);
  // As wide as the panel allows (scaled down, never up), the arcs inside.
  root.setAttribute('viewBox', `${left} ${top} ${right - left} ${bottom - top}`);
  root.setAttribute('style', `max-width: ${right - left}px`);
  const states = new Map();
  const bounds = new Map(machine.states.map((s) => [s.name, s.max_dwell]));
  for (const [name, p] of pos) {
    const bound = bounds.get(name);
    const g = svg('g', { class: 'fsm-state', 'data-state': name, transform: `translate(${p.x - BOX_W / 2} ${p.y - BOX_H / 2})` },
      svg('rect', { width: BOX_W, height: BOX_H, rx: 8, ry: 8 }),
      title(bound > 0 ? `${name} (at most ${bound} s)` : name));
    const label = svg('text', { x: BOX_W / 2, y: BOX_H / 2 + 4, 'text-anchor': 'middle' });
    label.textContent = name.length > 22 ? `${name.slice(0, 21)}…` : name;
    g.append(label);
    if (name === machine.initial_state) g.classList.add('initial');
    if (bound > 0) g.append(svg('circle', { cx: BOX_W - 8, cy: 8, r: 3, class: 'fsm-bound' }));
    states.set(name, g);
    root.append(g);
  }
  return { el: root, states, edges };
}

function stampText(stamp) {
  if (!stamp) return '';
  const d = new Date(Number(stamp.sec) * 1000 + Math.floor(Number(stamp.nanosec) / 1e6));
  return `${d.toLocaleTimeString([], { hour12: false })}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

export class FsmView {
  /** @param ctx {bridge, ns} */
  constructor(ctx) {
    this.ctx = ctx;
    this.bridge = ctx.bridge;
    this.unsubs = [];
    this.node = null;
    this.machines = new Map(); // name -> {drawing, current, seq, counters}
    this.history = [];
    this.timers = new Set();

    this.select = h('select', { id: 'fsm-node', 'aria-label': 'node', onchange: () => this.show(this.select.value) });
    this.graphs = h('div', { class: 'fsm-machines', id: 'fsm-machines' });
    this.list = h('ol', { class: 'fsm-history', id: 'fsm-history', reversed: true });
    this.note = h('div', { class: 'muted small-text', id: 'fsm-note' });
    this.el = h('div', { class: 'panel fsm', id: 'panel-fsm' },
      h('div', { class: 'fsm-main' },
        h('div', { class: 'toolbar' }, h('h2', { text: 'State machines' }), h('label', {}, 'Node ', this.select), this.note),
        this.graphs),
      h('div', { class: 'fsm-side' }, h('h3', { text: 'Transitions (newest first)' }), this.list));

    this.onChannels = () => this.fillNodes();
    this.bridge.addEventListener('channels', this.onChannels);
    this.fillNodes();
  }

  fillNodes() {
    const nodes = fsmNodes(this.bridge.topics.keys());
    const key = nodes.join('\n');
    if (key === this.nodesKey) return;
    this.nodesKey = key;
    this.select.replaceChildren(...(nodes.length ? nodes : ['']).map((n) => h('option', { value: n, text: n || 'no node publishes ~/fsm/graph yet' })));
    let want = this.node;
    if (!want || !nodes.includes(want)) {
      const mine = nodes.filter((n) => this.ctx.ns && (n === this.ctx.ns || n.startsWith(`${this.ctx.ns}/`)));
      want = mine[0] || nodes[0] || null;
    }
    if (want) this.select.value = want;
    if (want !== this.node) this.show(want);
  }

  show(node) {
    for (const u of this.unsubs) u();
    this.unsubs = [];
    this.node = node;
    this.machines.clear();
    this.history = [];
    this.graphs.replaceChildren();
    this.list.replaceChildren();
    this.note.textContent = node ? 'waiting for the graph…' : '';
    if (!node) return;
    const base = node === '/' ? '' : node;
    this.unsubs.push(
      this.bridge.subscribe(`${base}/fsm/graph`, (m) => this.onGraph(m)),
      this.bridge.subscribe(`${base}/fsm/status`, (m) => {
        for (const t of m.machines) this.setCurrent(t, false);
      }),
      this.bridge.subscribe(`${base}/fsm/transition`, (m) => this.onTransition(m)),
    );
  }

  onGraph(msg) {
    this.graphs.replaceChildren();
    const old = this.machines;
    this.machines = new Map();
    for (const mm of msg.machines) {
      const drawing = drawMachine(mm);
      const prev = old.get(mm.name);
      const entry = { drawing, machine: mm, current: prev ? prev.current : mm.initial_state, seq: prev ? prev.seq : -1,
        fired: prev ? prev.fired : -1, last: prev && prev.last };
      this.machines.set(mm.name, entry);
      const head = h('div', { class: 'fsm-head' }, h('h3', { text: mm.name }), h('span', { class: 'fsm-current', dataset: { machine: mm.name } }));
      this.graphs.append(h('section', { class: 'fsm-machine', dataset: { machine: mm.name } }, head,
        h('div', { class: 'fsm-canvas' }, drawing.el)));
      this.paint(entry);
    }
    this.note.textContent = `${msg.machines.length} machine${msg.machines.length === 1 ? '' : 's'}`;
  }

  /**
   * Makes t's target its machine's current state unless a newer one is
   * known. A transition (fire) lights its edge up once, unless it is part
   * of the history the node keeps: the first status names the newest
   * transition when the page subscribed, and only later ones light up.
   */
  setCurrent(t, fire) {
    const entry = this.machines.get(t.machine);
    const seq = Number(t.sequence);
    if (entry && !fire && entry.fired < 0) entry.fired = seq; // the first status
    if (entry && seq < entry.seq) return;
    if (entry && fire && entry.fired >= 0 && seq > entry.fired) {
      entry.fired = seq;
      this.light(entry, t);
    }
    if (!entry) {
      // The graph has not come yet: remember the state for it.
      this.pending = this.pending || new Map();
      this.pending.set(t.machine, t);
      return;
    }
    entry.seq = seq;
    entry.current = t.to_state;
    entry.last = t;
    this.paint(entry);
  }

  /** Lights the edge of t up for FIRED_MS. */
  light(entry, t) {
    const path = t.from_state && entry.drawing.edges.get(`${t.from_state}\u2192${t.to_state}`);
    if (!path) return;
    path.classList.add('fired');
    const timer = setTimeout(() => {
      path.classList.remove('fired');
      this.timers.delete(timer);
    }, FIRED_MS);
    this.timers.add(timer);
  }

  paint(entry) {
    if (this.pending && this.pending.has(entry.machine.name)) {
      const t = this.pending.get(entry.machine.name);
      this.pending.delete(entry.machine.name);
      if (entry.fired < 0) entry.fired = Number(t.sequence);
      if (Number(t.sequence) >= entry.seq) {
        entry.seq = Number(t.sequence);
        entry.current = t.to_state;
        entry.last = t;
      }
    }
    for (const [name, g] of entry.drawing.states) g.classList.toggle('active', name === entry.current);
    const label = this.graphs.querySelector(`.fsm-current[data-machine="${CSS.escape(entry.machine.name)}"]`);
    if (label) {
      const t = entry.last;
      const counts = [];
      if (t && Number(t.unknown_transitions) > 0) counts.push(`${t.unknown_transitions} not in graph`);
      if (t && Number(t.dwell_overruns) > 0) counts.push(`${t.dwell_overruns} dwell overruns`);
      label.textContent = `${entry.current}${t ? ` · ${t.sequence} transitions` : ''}${counts.length ? ` · ${counts.join(', ')}` : ''}`;
      label.dataset.state = entry.current;
      label.dataset.warn = String(counts.length > 0);
    }
  }

  onTransition(t) {
    this.setCurrent(t, true);
    if (this.history.some((x) => x.machine === t.machine && x.sequence === t.sequence)) return;
    this.history.push(t);
    if (this.history.length > HISTORY) this.history.shift();
    const li = h('li', { class: t.in_graph ? '' : 'unknown', dataset: { machine: t.machine, from: t.from_state, to: t.to_state } },
      h('span', { class: 'fsm-time', text: stampText(t.stamp) }), ' ',
      h('b', { text: t.machine }), ': ',
      h('span', { text: `${t.from_state || '[start]'} → ${t.to_state}` }), ' ',
      h('span', { class: 'fsm-cause', text: `(${t.cause})` }),
      t.in_graph ? null : h('span', { class: 'fsm-flag', text: ' not in graph' }),
      Number(t.suppressed) > 0 ? h('span', { class: 'muted', text: ` · ${t.suppressed} not published` }) : null);
    this.list.prepend(li);
    while (this.list.children.length > HISTORY) this.list.lastElementChild.remove();
  }

  destroy() {
    for (const u of this.unsubs) u();
    for (const t of this.timers) clearTimeout(t);
    this.bridge.removeEventListener('channels', this.onChannels);
  }
}
