// Entry point of the dashboard: connects to the bridge that served the
// page, finds the robots in the graph (by the services their nodes serve),
// and shows the selected namespace's panels, the topic list or the log.
//
// Location hash: #ns=/diffbot&view=robot (view: robot, fsm, topics or log), so a
// reload or a link keeps the selection.

import { Bridge, defaultURL } from './foxglove.js';
import { h } from './ui.js';
import { RsmControl } from './rsm.js';
import { MapView } from './map.js';
import { HexapodPanel } from './hexapod.js';
import { VelmaPanel } from './velma.js';
import { TopicsView } from './topics.js';
import { FsmView } from './fsm.js';
import { RosoutStore, LogView } from './rosout.js';

/**
 * Finds robots from service names: RSM (…/rsm/setOperationMode), hexapod
 * controllers (…/<node>/stand_up with start_stop beside it) and Velma core
 * agents (…/<node>/motors/enable). Returns Map ns -> {rsm, hexapods, velmas}.
 */
export function discoverRobots(serviceNames) {
  const names = new Set(serviceNames);
  const robots = new Map();
  const get = (ns) => {
    const key = ns === '' ? '/' : ns;
    if (!robots.has(key)) robots.set(key, { rsm: false, hexapods: [], velmas: [] });
    return robots.get(key);
  };
  const parent = (path) => path.slice(0, path.lastIndexOf('/'));
  for (const n of names) {
    let m;
    if ((m = /^(.*)\/rsm\/setOperationMode$/.exec(n))) get(m[1]).rsm = true;
    else if ((m = /^(.*\/[^/]+)\/stand_up$/.exec(n)) && names.has(`${m[1]}/start_stop`)) get(parent(m[1])).hexapods.push(m[1]);
    else if ((m = /^(.*\/[^/]+)\/motors\/enable$/.exec(n))) get(parent(m[1])).velmas.push(m[1]);
  }
  for (const r of robots.values()) {
    r.hexapods.sort();
    r.velmas.sort();
  }
  return new Map([...robots].sort(([a], [b]) => a.localeCompare(b)));
}

function describe(r) {
  const kinds = [];
  if (r.rsm) kinds.push('RSM');
  if (r.hexapods.length) kinds.push('hexapod');
  if (r.velmas.length) kinds.push('Velma');
  return kinds.join(', ');
}

class App {
  constructor() {
    this.bridge = new Bridge(defaultURL());
    this.rosout = new RosoutStore(this.bridge);
    this.robots = new Map();
    this.robotsKey = '';
    this.views = [];
    const params = new URLSearchParams(location.hash.slice(1));
    this.ns = params.get('ns') || '';
    this.view = params.get('view') || 'robot';

    this.main = document.getElementById('main');
    this.nsSelect = document.getElementById('ns');
    this.conn = document.getElementById('conn');
    this.logBadge = document.getElementById('log-badge');
    this.nsSelect.addEventListener('change', () => this.select(this.nsSelect.value, this.view));
    for (const b of document.querySelectorAll('#tabs button')) {
      b.addEventListener('click', () => this.select(this.ns, b.dataset.view));
    }
    window.addEventListener('hashchange', () => {
      const p = new URLSearchParams(location.hash.slice(1));
      const ns = p.get('ns') || this.ns;
      const view = p.get('view') || this.view;
      if (ns !== this.ns || view !== this.view) this.select(ns, view);
    });

    this.bridge.addEventListener('status', (e) => this.onStatus(e.detail));
    this.bridge.addEventListener('services', () => this.onServices());
    this.rosout.addEventListener('entry', () => this.updateBadge());
    this.bridge.connect();
    this.render();
  }

  onStatus(d) {
    this.conn.dataset.state = d.connected ? 'up' : 'down';
    const text = this.conn.querySelector('.conn-text');
    text.textContent = d.connected ? `connected · ${d.serverInfo.name || 'bridge'}` : `disconnected${d.error ? ` (${d.error})` : ''} · retrying`;
    this.conn.title = d.url;
    document.body.dataset.connected = String(d.connected);
    if (this.view === 'robot' && !this.robots.get(this.ns)) this.render();
  }

  onServices() {
    clearTimeout(this.servicesTimer);
    // Advertisements arrive in bursts; look at the graph once it settles.
    this.servicesTimer = setTimeout(() => {
      const robots = discoverRobots(this.bridge.services.keys());
      const key = JSON.stringify([...robots]);
      if (key === this.robotsKey) return;
      this.robotsKey = key;
      const before = JSON.stringify(this.robots.get(this.ns) || null);
      this.robots = robots;
      if (!this.ns && robots.size) {
        // The first robot found becomes the namespace. Only the robot view
        // is built from it: another open view keeps what the user picked
        // in it (rebuilding the state machines view here, seconds after it
        // opened, dropped the node picked and the transitions lit meanwhile).
        if (this.view === 'robot') this.select(robots.keys().next().value, this.view);
        else this.locate(robots.keys().next().value, this.view);
      }
      this.fillSelect();
      // Rebuild the panels only when the selected robot changed.
      if (this.view === 'robot' && JSON.stringify(this.robots.get(this.ns) || null) !== before) this.render();
    }, 150);
  }

  fillSelect() {
    const opts = [...this.robots].map(([ns, r]) => h('option', { value: ns, text: `${ns} — ${describe(r)}` }));
    if (this.ns && !this.robots.has(this.ns)) opts.push(h('option', { value: this.ns, text: `${this.ns} (not found)` }));
    if (!opts.length) opts.push(h('option', { value: '', text: 'no robots found' }));
    this.nsSelect.replaceChildren(...opts);
    this.nsSelect.value = this.ns;
  }

  select(ns, view) {
    this.locate(ns, view);
    this.render();
  }

  /** Sets the namespace and view and the address's hash, without rebuilding. */
  locate(ns, view) {
    this.ns = ns;
    this.view = view;
    const p = new URLSearchParams();
    if (ns) p.set('ns', ns);
    p.set('view', view);
    history.replaceState(null, '', `#${p}`);
  }

  updateBadge() {
    const n = this.view === 'log' ? 0 : this.rosout.unseen;
    this.logBadge.hidden = n === 0;
    this.logBadge.textContent = n > 99 ? '99+' : String(n);
  }

  render() {
    for (const v of this.views) v.destroy();
    this.views = [];
    for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b.dataset.view === this.view);
    this.nsSelect.value = this.ns;
    document.body.dataset.view = this.view;
    const ctx = { bridge: this.bridge, ns: this.ns, rosout: this.rosout };
    const content = [];
    if (this.view === 'fsm') {
      const v = new FsmView(ctx);
      this.views.push(v);
      content.push(v.el);
    } else if (this.view === 'topics') {
      const v = new TopicsView(ctx);
      this.views.push(v);
      content.push(v.el);
    } else if (this.view === 'log') {
      const v = new LogView(ctx);
      this.views.push(v);
      content.push(v.el);
    } else {
      const r = this.robots.get(this.ns);
      if (!r) {
        content.push(h('div', { class: 'empty-state' },
          h('h2', { text: this.bridge.connected ? 'No robot selected' : 'Connecting to the bridge…' }),
          h('p', { text: this.bridge.connected
            ? 'No RSM, hexapod or Velma services found yet. Start the demo (make run) and pick a robot above.'
            : `Waiting for ${this.bridge.url}.` })));
      } else {
        if (r.rsm) {
          const control = new RsmControl(ctx);
          const map = new MapView({ ...ctx, control });
          this.views.push(control, map);
          content.push(h('div', { class: 'rsm-layout' }, control.el, map.el));
        }
        for (const node of r.hexapods) {
          const v = new HexapodPanel({ ...ctx, node });
          this.views.push(v);
          content.push(v.el);
        }
        for (const node of r.velmas) {
          const v = new VelmaPanel({ ...ctx, node });
          this.views.push(v);
          content.push(v.el);
        }
      }
    }
    this.main.replaceChildren(...content);
    this.updateBadge();
    // Expose the live objects for tests and for the console.
    window.fsmDashboard = { app: this, bridge: this.bridge, views: this.views };
  }
}

if (typeof document !== 'undefined' && document.getElementById('main')) new App();
