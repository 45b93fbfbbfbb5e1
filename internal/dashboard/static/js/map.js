// Map: the robot's OccupancyGrid on a canvas with the robot pose (TF, or
// odometry when there is no TF), the laser scan, planned paths (nav_msgs/Path
// topics of the namespace), waypoints (numbered; blue pending, green
// visited, red unreachable), frontiers (rsm/explorationGoals and MarkerArray
// topics), failed goals and the current navigation goal. Drag to pan, wheel
// to zoom; in "Send goal" or "Add waypoint" mode a click (drag for the
// heading) sends a simple goal or adds a waypoint. In "Edit waypoints" mode,
// as the original's RViz waypoint markers: drag a waypoint to move it
// (rsm/moveWaypoint), click one to change its routine
// (rsm/setWaypointRoutine) or remove it (rsm/removeWaypoint).

import { h, fmt, join, yawOf, quatOfYaw, fitCanvas, throttledDraw, InfoLine, act } from './ui.js';
import { TfBuffer, compose } from './tf.js';
import { FALLBACK } from './schemas.js';

const COLORS = {
  unknown: [205, 211, 218],
  free: [255, 255, 255],
  occupied: [31, 41, 55],
  robot: '#2563eb',
  scan: '#e11d48',
  path: '#16a34a',
  pending: '#2563eb',
  visited: '#16a34a',
  unreachable: '#dc2626',
  frontier: '#f59e0b',
  failed: '#7c3aed',
  goal: '#db2777',
};

const LAYERS = [
  ['scan', 'Scan'], ['path', 'Path'], ['waypoints', 'Waypoints'], ['frontiers', 'Frontiers'], ['markers', 'Markers'], ['goal', 'Goal'],
];

export class MapView {
  /**
   * @param ctx {bridge, ns, control (RsmControl, for routines and adding waypoints)}
   */
  constructor(ctx) {
    this.ctx = ctx;
    this.bridge = ctx.bridge;
    this.ns = ctx.ns;
    this.unsubs = [];
    this.dynamic = new Map(); // topic -> unsubscribe, for Path/MarkerArray topics
    this.tf = new TfBuffer();
    this.grid = null; // {info, frame, image (canvas)}
    this.fixedFrame = 'map';
    this.odom = null;
    this.robotFrame = 'base_footprint';
    this.scan = null;
    this.paths = new Map();
    this.markers = new Map(); // topic -> Map(ns/id -> marker)
    this.waypoints = null;
    this.frontiers = [];
    this.failed = [];
    this.goal = null; // {pose, label}
    this.state = '';
    this.view = { scale: 40, x: 0, y: 0, fitted: false };
    this.layers = Object.fromEntries(LAYERS.map(([k]) => [k, true]));
    this.mode = 'pan';
    this.drag = null;
    this.selected = -1; // waypoint chosen in edit mode (-1: none)
    this.cursor = null;
    this.draw = throttledDraw(() => this.render());

    this.canvas = h('canvas', { id: 'map-canvas', class: 'map-canvas', attrs: { 'aria-label': 'map' } });
    this.info = new InfoLine('map-info');
    const modeRadio = (value, label) => h('label', { class: 'seg' },
      h('input', { type: 'radio', name: `mapmode-${this.ns}`, value, id: `map-mode-${value}`, checked: value === 'pan', onchange: () => this.setMode(value) }),
      h('span', { text: label }));
    const layerBox = ([k, label]) => h('label', {},
      h('input', { type: 'checkbox', checked: true, onchange: (e) => { this.layers[k] = e.target.checked; this.draw(); } }), label);
    this.readout = h('span', { class: 'readout', text: '' });
    this.legend = h('div', { class: 'legend' },
      legendItem(COLORS.robot, 'robot'), legendItem(COLORS.pending, 'waypoint'), legendItem(COLORS.visited, 'visited'),
      legendItem(COLORS.unreachable, 'unreachable'), legendItem(COLORS.frontier, 'frontier'), legendItem(COLORS.path, 'path'),
      legendItem(COLORS.goal, 'goal'), legendItem(COLORS.scan, 'scan'),
      h('span', { class: 'legend-item', title: 'MarkerArray topics of the namespace (e.g. explore/frontiers), drawn in their own colours' },
        h('i', { class: 'multi' }), 'markers (their colours)'));

    this.el = h('div', { class: 'panel map-panel', id: 'panel-map' },
      h('div', { class: 'map-toolbar' },
        h('h2', {}, 'Map ', h('span', { class: 'ns-tag', text: this.ns })),
        h('div', { class: 'segmented', attrs: { role: 'radiogroup', 'aria-label': 'click mode' } },
          modeRadio('pan', 'Pan'), modeRadio('goal', 'Send goal'), modeRadio('waypoint', 'Add waypoint'), modeRadio('edit', 'Edit waypoints')),
        h('div', { class: 'zoom' },
          h('button', { type: 'button', class: 'small', text: '−', title: 'zoom out', onclick: () => this.zoom(1 / 1.25) }),
          h('button', { type: 'button', class: 'small', text: '+', title: 'zoom in', onclick: () => this.zoom(1.25) }),
          h('button', { type: 'button', class: 'small', text: 'Fit', title: 'fit the map', onclick: () => this.fit() }))),
      h('div', { class: 'map-layers' }, LAYERS.map(layerBox)),
      h('div', { class: 'map-wrap' }, this.canvas),
      this.buildEditor(),
      h('div', { class: 'map-status' }, this.readout, this.info.el),
      this.legend);

    this.attachInput();
    this.subscribe();
    this.resizeObserver = new ResizeObserver(() => this.draw());
    this.resizeObserver.observe(this.canvas);
    this.goalTimer = setInterval(() => this.pollGoal(), 1000);
    this.waypointTimer = setInterval(() => this.pollWaypoints(), 2000);
  }

  subscribe() {
    const b = this.bridge;
    const ns = this.ns;
    const tf = (m) => {
      this.tf.add(m);
      this.draw();
    };
    const tfTopics = new Set(['/tf', '/tf_static', join(ns, 'tf'), join(ns, 'tf_static')]);
    for (const t of tfTopics) this.unsubs.push(b.subscribe(t, tf));
    this.unsubs.push(
      b.subscribe(join(ns, 'map'), (m) => this.onGrid(m)),
      b.subscribe(join(ns, 'odom'), (m) => {
        this.odom = m;
        if (m.child_frame_id) this.robotFrame = m.child_frame_id.replace(/^\/+/, '');
        this.draw();
      }),
      b.subscribe(join(ns, 'scan'), (m) => {
        this.scan = m;
        this.draw();
      }),
      b.subscribe(join(ns, 'rsm/waypoints'), (m) => {
        this.waypointsFromTopic = performance.now();
        this.onWaypoints(m);
      }),
      b.subscribe(join(ns, 'rsm/explorationGoals'), (m) => {
        this.frontiers = m.poses;
        this.draw();
      }),
      b.subscribe(join(ns, 'rsm/failedGoals'), (m) => {
        this.failed = m.poses;
        this.draw();
      }),
      b.subscribe(join(ns, 'rsm/stateInfo'), (m) => this.setState(m.data)),
    );
    const onChannels = () => this.syncDynamic();
    b.addEventListener('channels', onChannels);
    this.unsubs.push(() => b.removeEventListener('channels', onChannels));
    this.syncDynamic();
  }

  // syncDynamic follows the Path and MarkerArray topics of the namespace:
  // plans and frontier/other markers come and go with their publishers.
  syncDynamic() {
    const prefix = this.ns === '/' ? '/' : `${this.ns}/`;
    const want = new Map();
    for (const ch of this.bridge.channels.values()) {
      if (!ch.topic.startsWith(prefix) && this.ns !== '/') continue;
      if (ch.topic.includes('/_action/')) continue;
      if (ch.schemaName === 'nav_msgs/msg/Path') want.set(ch.topic, 'path');
      else if (ch.schemaName === 'visualization_msgs/msg/MarkerArray' && !/waypoint_markers$/.test(ch.topic)) want.set(ch.topic, 'markers');
    }
    for (const [topic, kind] of want) {
      if (this.dynamic.has(topic)) continue;
      const cb = kind === 'path'
        ? (m) => { this.paths.set(topic, m); this.draw(); }
        : (m) => { this.onMarkers(topic, m); this.draw(); };
      this.dynamic.set(topic, this.bridge.subscribe(topic, cb));
    }
    for (const [topic, unsub] of this.dynamic) {
      if (!want.has(topic) && this.bridge.connected) {
        unsub();
        this.dynamic.delete(topic);
        this.paths.delete(topic);
        this.markers.delete(topic);
      }
    }
  }

  onMarkers(topic, m) {
    let set = this.markers.get(topic);
    if (!set) {
      set = new Map();
      this.markers.set(topic, set);
    }
    for (const mk of m.markers) {
      const key = `${mk.ns}/${mk.id}`;
      if (mk.action === 3) set.clear(); // DELETEALL
      else if (mk.action === 2) set.delete(key); // DELETE
      else set.set(key, mk);
    }
  }

  setState(name) {
    this.state = name;
    if (!/Navigation/.test(name)) this.goal = null;
    this.draw();
  }

  // pollGoal reads the navigation goal while a navigation state runs; no
  // topic carries it for waypoint and simple goals.
  async pollGoal() {
    if (!/Navigation/.test(this.state) || !this.bridge.connected) return;
    try {
      const r = await this.bridge.call(join(this.ns, 'rsm/getNavigationGoal'), {}, { timeoutMs: 2000 });
      if (r.navigation_mode >= 0) {
        const label = ['exploration', 'waypoint', 'simple goal'][r.navigation_mode] || 'goal';
        this.goal = { pose: r.goal, label: r.navigation_mode === 1 ? `waypoint ${Number(r.waypoint_position) + 1}` : label };
        this.draw();
      }
    } catch {
      /* shown elsewhere; the map only draws what it gets */
    }
  }

  // pollWaypoints falls back to rsm/getWaypoints when rsm/waypoints is not
  // advertised (e.g. a service provider that does not publish it).
  async pollWaypoints() {
    if (!this.bridge.connected || this.bridge.topics.has(join(this.ns, 'rsm/waypoints'))) return;
    const svc = join(this.ns, 'rsm/getWaypoints');
    if (!this.bridge.services.has(svc)) return;
    try {
      const r = await this.bridge.call(svc, {}, { timeoutMs: 2000 });
      this.onWaypoints(r.waypoint_array);
    } catch {
      /* try again on the next tick */
    }
  }

  onWaypoints(m) {
    this.waypoints = m;
    if (this.selected >= m.waypoints.length) this.select(-1);
    else if (this.selected >= 0) this.fillEditor();
    this.draw();
  }

  onGrid(m) {
    const { width, height } = m.info;
    if (!width || !height || m.data.length < width * height) return;
    let image = this.grid && this.grid.image;
    if (!image || image.width !== width || image.height !== height) {
      image = document.createElement('canvas');
      image.width = width;
      image.height = height;
    }
    const ictx = image.getContext('2d');
    const img = ictx.createImageData(width, height);
    const px = img.data;
    const d = m.data;
    for (let i = 0; i < width * height; i++) {
      const v = d[i];
      let c;
      if (v < 0 || v > 100) c = COLORS.unknown;
      else if (v === 0) c = COLORS.free;
      else if (v === 100) c = COLORS.occupied;
      else {
        const f = v / 100;
        c = COLORS.free.map((x, k) => Math.round(x + (COLORS.occupied[k] - x) * f));
      }
      px[4 * i] = c[0];
      px[4 * i + 1] = c[1];
      px[4 * i + 2] = c[2];
      px[4 * i + 3] = 255;
    }
    ictx.putImageData(img, 0, 0);
    this.grid = { info: m.info, frame: m.header.frame_id.replace(/^\/+/, '') || 'map', image };
    this.fixedFrame = this.grid.frame;
    if (!this.view.fitted) this.fit();
    this.draw();
  }

  fit() {
    const r = this.canvas.getBoundingClientRect();
    if (!this.grid || r.width < 10) return;
    const { width, height, resolution, origin } = this.grid.info;
    const wm = width * resolution;
    const hm = height * resolution;
    this.view.scale = Math.min(r.width / wm, r.height / hm) * 0.95;
    // Centre of the grid in the map frame (the grid may be rotated).
    const yaw = yawOf(origin.orientation);
    const c = compose({ x: origin.position.x, y: origin.position.y, th: yaw }, { x: wm / 2, y: hm / 2, th: 0 });
    this.view.x = c.x;
    this.view.y = c.y;
    this.view.fitted = true;
    this.draw();
  }

  zoom(f, cx, cy) {
    const r = this.canvas.getBoundingClientRect();
    if (cx === undefined) {
      cx = r.width / 2;
      cy = r.height / 2;
    }
    const before = this.toWorld(cx, cy);
    this.view.scale = Math.min(2000, Math.max(2, this.view.scale * f));
    const after = this.toWorld(cx, cy);
    this.view.x += before.x - after.x;
    this.view.y += before.y - after.y;
    this.view.fitted = true;
    this.draw();
  }

  setMode(m) {
    this.mode = m;
    this.canvas.dataset.mode = m;
    if (m !== 'edit') this.select(-1);
    this.info.set(m === 'goal' ? 'click on the map to send a goal (drag to set the heading)'
      : m === 'waypoint' ? 'click on the map to add a waypoint (drag to set the heading)'
        : m === 'edit' ? 'drag a waypoint to move it; click one to change its routine or remove it' : '', 'hint');
  }

  // buildEditor makes the bar that edits the selected waypoint (edit mode).
  buildEditor() {
    this.editTitle = h('strong', { id: 'map-wp-title', text: '' });
    this.editRoutine = h('select', { id: 'map-wp-routine', attrs: { 'aria-label': 'routine of the waypoint' }, onchange: () => this.setRoutine() });
    this.editRemove = h('button', { type: 'button', id: 'map-wp-remove', class: 'small', text: 'Remove', onclick: () => this.removeSelected() });
    this.editor = h('div', { class: 'map-wp-editor', id: 'map-wp-editor', hidden: true },
      this.editTitle, h('label', {}, 'Routine ', this.editRoutine), this.editRemove,
      h('button', { type: 'button', class: 'small', text: 'Done', title: 'deselect', onclick: () => this.select(-1) }));
    return this.editor;
  }

  // select chooses waypoint i for the editor bar (-1: none).
  select(i) {
    const wps = this.waypoints ? this.waypoints.waypoints : [];
    this.selected = i >= 0 && i < wps.length ? i : -1;
    this.editor.hidden = this.selected < 0;
    if (this.selected >= 0) this.fillEditor();
    this.draw();
  }

  // fillEditor shows the selected waypoint: its number, place and routine
  // (the routines the service provider offers, and the waypoint's own).
  fillEditor() {
    const w = this.waypoints.waypoints[this.selected];
    this.editTitle.textContent = `Waypoint ${this.selected + 1} (${fmt(w.pose.position.x)}, ${fmt(w.pose.position.y)})`;
    if (document.activeElement === this.editRoutine) return;
    const names = this.ctx.control && this.ctx.control.routineNames ? this.ctx.control.routineNames() : [];
    if (w.routine && !names.includes(w.routine)) names.push(w.routine);
    const key = JSON.stringify([names, w.routine]);
    if (key === this.editKey) return;
    this.editKey = key;
    this.editRoutine.replaceChildren(h('option', { value: '', text: 'None' }), ...names.map((n) => h('option', { value: n, text: n })));
    this.editRoutine.value = w.routine;
  }

  // waypointAt returns the index of the waypoint drawn under canvas point p
  // (the topmost, i.e. the last drawn), or -1.
  waypointAt(p) {
    if (!this.layers.waypoints || !this.waypoints) return -1;
    const wps = this.waypoints.waypoints;
    for (let i = wps.length - 1; i >= 0; i--) {
      const q = this.toScreen(wps[i].pose.position.x, wps[i].pose.position.y);
      if (Math.hypot(q.x - p.x, q.y - p.y) <= 12) return i;
    }
    return -1;
  }

  // editCall calls an rsm/ waypoint service of the namespace and reports
  // the answer on the info line.
  editCall(name, req) {
    return act(null, this.info, () => this.bridge.call(join(this.ns, `rsm/${name}`), req));
  }

  // moveWaypoint moves waypoint i to (x, y), keeping its heading.
  async moveWaypoint(i, x, y) {
    const w = this.waypoints.waypoints[i];
    const pose = { position: { x, y, z: w.pose.position.z }, orientation: w.pose.orientation };
    // drawn at its new place at once; the next rsm/waypoints message (or
    // rsm/getWaypoints answer) shows what the provider holds, also after a
    // refusal
    w.pose = pose;
    if (i === this.selected) this.fillEditor();
    await this.editCall('moveWaypoint', { position: i, pose });
  }

  async setRoutine() {
    if (this.selected < 0) return;
    await this.editCall('setWaypointRoutine', { position: this.selected, routine: this.editRoutine.value });
  }

  async removeSelected() {
    if (this.selected < 0) return;
    const i = this.selected;
    this.select(-1);
    await this.editCall('removeWaypoint', { position: i });
  }

  // Canvas-local CSS pixels <-> map frame metres.
  toScreen(x, y) {
    const r = this.canvas.getBoundingClientRect();
    return { x: r.width / 2 + (x - this.view.x) * this.view.scale, y: r.height / 2 - (y - this.view.y) * this.view.scale };
  }

  toWorld(sx, sy) {
    const r = this.canvas.getBoundingClientRect();
    return { x: this.view.x + (sx - r.width / 2) / this.view.scale, y: this.view.y - (sy - r.height / 2) / this.view.scale };
  }

  /** Viewport (client) coordinates of a map point, for tests and tools. */
  worldToClient(x, y) {
    const r = this.canvas.getBoundingClientRect();
    const s = this.toScreen(x, y);
    return { x: r.left + s.x, y: r.top + s.y };
  }

  attachInput() {
    const c = this.canvas;
    const local = (e) => {
      const r = c.getBoundingClientRect();
      return { x: e.clientX - r.left, y: e.clientY - r.top };
    };
    c.addEventListener('pointerdown', (e) => {
      if (e.button !== 0 && e.button !== 1) return;
      c.setPointerCapture(e.pointerId);
      const p = local(e);
      const wp = this.mode === 'edit' && e.button === 0 && !e.shiftKey ? this.waypointAt(p) : -1;
      const pan = wp < 0 && (this.mode === 'pan' || this.mode === 'edit' || e.button === 1 || e.shiftKey);
      this.drag = { pan, wp, start: p, last: p, world: this.toWorld(p.x, p.y) };
    });
    c.addEventListener('pointermove', (e) => {
      const p = local(e);
      this.cursor = this.toWorld(p.x, p.y);
      if (this.drag) {
        if (this.drag.pan) {
          this.view.x -= (p.x - this.drag.last.x) / this.view.scale;
          this.view.y += (p.y - this.drag.last.y) / this.view.scale;
          this.view.fitted = true;
        }
        this.drag.last = p;
      }
      this.draw();
    });
    const end = (e) => {
      const d = this.drag;
      this.drag = null;
      if (!d || d.pan || e.type === 'pointercancel') {
        // edit mode: a plain click beside the waypoints deselects
        if (d && d.pan && this.mode === 'edit' && e.type !== 'pointercancel') {
          const q = local(e);
          if (Math.hypot(q.x - d.start.x, q.y - d.start.y) <= 4) this.select(-1);
        }
        this.draw();
        return;
      }
      const p = local(e);
      const dx = p.x - d.start.x;
      const dy = p.y - d.start.y;
      if (d.wp >= 0) {
        // edit mode: a drag moves the waypoint, a click selects it
        if (Math.hypot(dx, dy) > 4) {
          const w = this.toWorld(p.x, p.y);
          this.moveWaypoint(d.wp, w.x, w.y);
        } else {
          this.select(d.wp);
        }
        this.draw();
        return;
      }
      let yaw;
      if (Math.hypot(dx, dy) > 8) yaw = Math.atan2(-dy, dx);
      else {
        // A plain click faces away from the robot, as a path to it would.
        const rp = this.robotPose();
        yaw = rp ? Math.atan2(d.world.y - rp.y, d.world.x - rp.x) : 0;
      }
      this.onPick(d.world.x, d.world.y, yaw);
      this.draw();
    };
    c.addEventListener('pointerup', end);
    c.addEventListener('pointercancel', end);
    c.addEventListener('pointerleave', () => {
      this.cursor = null;
      this.draw();
    });
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      const p = local(e);
      this.zoom(Math.exp(-e.deltaY * 0.0015), p.x, p.y);
    }, { passive: false });
  }

  async onPick(x, y, yaw) {
    const pose = { position: { x, y, z: 0 }, orientation: quatOfYaw(yaw) };
    if (this.mode === 'goal') {
      if (!this.goalPub) {
        this.goalPub = this.bridge.advertise(join(this.ns, 'rsm/simpleGoal'), 'geometry_msgs/msg/PoseStamped', FALLBACK['geometry_msgs/msg/PoseStamped']);
      }
      const now = Date.now();
      const msg = { header: { stamp: { sec: Math.floor(now / 1000), nanosec: (now % 1000) * 1e6 }, frame_id: this.fixedFrame }, pose };
      try {
        if (this.goalPub.publish(msg)) {
          this.goal = { pose, label: 'simple goal' };
          this.info.set(`goal sent: (${fmt(x)}, ${fmt(y)}) yaw ${fmt(yaw)}`, 'ok');
        } else {
          this.info.set('not connected: goal not sent', 'error');
        }
      } catch (e) {
        this.info.set(e.message, 'error');
      }
    } else if (this.mode === 'waypoint') {
      await act(null, this.info, () => this.ctx.control.addWaypoint(pose));
    }
  }

  robotPose() {
    const tfPose = this.tf.lookup(this.fixedFrame, this.robotFrame);
    if (tfPose) return tfPose;
    if (this.odom) {
      // Without TF, assume the odometry frame is the map frame.
      const p = this.odom.pose.pose;
      return { x: p.position.x, y: p.position.y, th: yawOf(p.orientation) };
    }
    return null;
  }

  // inFixed converts a pose given in frame into the fixed frame (identity
  // when the frame is the fixed one or empty, null when TF cannot tell).
  frameToFixed(frame) {
    const f = (frame || '').replace(/^\/+/, '');
    if (!f || f === this.fixedFrame) return { x: 0, y: 0, th: 0 };
    return this.tf.lookup(this.fixedFrame, f);
  }

  render() {
    if (!this.canvas.isConnected) return;
    const { w, h: hgt, dpr } = fitCanvas(this.canvas);
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#eef1f5';
    ctx.fillRect(0, 0, w, hgt);
    const S = (x, y) => this.toScreen(x, y);
    const s = this.view.scale;

    if (this.grid) {
      const { resolution, origin } = this.grid.info;
      ctx.save();
      const o = S(0, 0);
      ctx.setTransform(dpr * s, 0, 0, -dpr * s, dpr * o.x, dpr * o.y);
      ctx.translate(origin.position.x, origin.position.y);
      ctx.rotate(yawOf(origin.orientation));
      ctx.scale(resolution, resolution);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(this.grid.image, 0, 0);
      ctx.restore();
    } else {
      ctx.fillStyle = '#64748b';
      ctx.font = '14px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.fillText(`waiting for ${join(this.ns, 'map')} …`, w / 2, hgt / 2);
    }
    this.drawGridLines(ctx, w, hgt);

    if (this.layers.markers) this.drawMarkers(ctx);
    if (this.layers.frontiers) {
      ctx.fillStyle = COLORS.frontier;
      for (const p of this.frontiers) {
        const q = S(p.position.x, p.position.y);
        diamond(ctx, q.x, q.y, 5);
      }
      ctx.strokeStyle = COLORS.failed;
      ctx.lineWidth = 2;
      for (const p of this.failed) {
        const q = S(p.position.x, p.position.y);
        cross(ctx, q.x, q.y, 5);
      }
    }
    if (this.layers.path) {
      ctx.strokeStyle = COLORS.path;
      ctx.lineWidth = 2.5;
      for (const path of this.paths.values()) {
        const t = this.frameToFixed(path.header.frame_id);
        if (!t || path.poses.length < 2) continue;
        ctx.beginPath();
        path.poses.forEach((ps, i) => {
          const p = compose(t, { x: ps.pose.position.x, y: ps.pose.position.y, th: 0 });
          const q = S(p.x, p.y);
          if (i === 0) ctx.moveTo(q.x, q.y);
          else ctx.lineTo(q.x, q.y);
        });
        ctx.stroke();
      }
    }
    if (this.layers.scan && this.scan) this.drawScan(ctx);
    if (this.layers.waypoints && this.waypoints) this.drawWaypoints(ctx);
    if (this.layers.goal && this.goal) {
      const g = this.goal.pose;
      const q = S(g.position.x, g.position.y);
      flag(ctx, q.x, q.y, yawOf(g.orientation), COLORS.goal, this.goal.label);
    }
    const rp = this.robotPose();
    if (rp) this.drawRobot(ctx, rp);
    if (this.drag && !this.drag.pan && this.drag.wp < 0) {
      const a = this.drag.start;
      const b = this.drag.last;
      ctx.strokeStyle = this.mode === 'goal' ? COLORS.goal : COLORS.pending;
      ctx.lineWidth = 3;
      arrow(ctx, a.x, a.y, b.x, b.y);
    }
    const parts = [];
    if (this.cursor) parts.push(`cursor (${fmt(this.cursor.x)}, ${fmt(this.cursor.y)})`);
    if (rp) parts.push(`robot (${fmt(rp.x)}, ${fmt(rp.y)}, ${fmt(rp.th)} rad)`);
    if (this.grid) parts.push(`${this.grid.info.width}×${this.grid.info.height} @ ${fmt(this.grid.info.resolution, 3)} m`);
    this.readout.textContent = parts.join(' · ');
  }

  drawGridLines(ctx, w, hgt) {
    // A 1 m grid (coarser when zoomed out) helps reading distances.
    let step = 1;
    while (step * this.view.scale < 30) step *= 2;
    const a = this.toWorld(0, hgt);
    const b = this.toWorld(w, 0);
    ctx.strokeStyle = 'rgba(100, 116, 139, 0.18)';
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let x = Math.ceil(a.x / step) * step; x <= b.x; x += step) {
      const q = this.toScreen(x, 0);
      ctx.moveTo(Math.round(q.x) + 0.5, 0);
      ctx.lineTo(Math.round(q.x) + 0.5, hgt);
    }
    for (let y = Math.ceil(a.y / step) * step; y <= b.y; y += step) {
      const q = this.toScreen(0, y);
      ctx.moveTo(0, Math.round(q.y) + 0.5);
      ctx.lineTo(w, Math.round(q.y) + 0.5);
    }
    ctx.stroke();
  }

  drawScan(ctx) {
    const sc = this.scan;
    // Without the sensor's transform (e.g. /tf_static not received yet),
    // draw the scan from the robot's base: close enough on a map.
    const t = this.frameToFixed(sc.header.frame_id) || this.robotPose();
    if (!t) return;
    ctx.fillStyle = COLORS.scan;
    const n = sc.ranges.length;
    for (let i = 0; i < n; i++) {
      const r = sc.ranges[i];
      if (!(r >= sc.range_min && r <= sc.range_max)) continue;
      const a = sc.angle_min + i * sc.angle_increment;
      const p = compose(t, { x: r * Math.cos(a), y: r * Math.sin(a), th: 0 });
      const q = this.toScreen(p.x, p.y);
      ctx.fillRect(q.x - 1.5, q.y - 1.5, 3, 3);
    }
  }

  drawWaypoints(ctx) {
    const wps = this.waypoints.waypoints;
    const pts = wps.map((w) => this.toScreen(w.pose.position.x, w.pose.position.y));
    const d = this.drag;
    if (d && d.wp >= 0 && d.wp < pts.length) pts[d.wp] = { x: d.last.x, y: d.last.y }; // where it is being dragged
    if (this.selected >= 0 && this.selected < pts.length) {
      const q = pts[this.selected];
      ctx.strokeStyle = '#0f172a';
      ctx.lineWidth = 2;
      ctx.setLineDash([3, 3]);
      ctx.beginPath();
      ctx.arc(q.x, q.y, 15, 0, 2 * Math.PI);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (pts.length > 1) {
      ctx.strokeStyle = 'rgba(37, 99, 235, 0.35)';
      ctx.setLineDash([6, 5]);
      ctx.lineWidth = 2;
      ctx.beginPath();
      pts.forEach((q, i) => (i ? ctx.lineTo(q.x, q.y) : ctx.moveTo(q.x, q.y)));
      ctx.stroke();
      ctx.setLineDash([]);
    }
    wps.forEach((w, i) => {
      const q = pts[i];
      const color = w.unreachable ? COLORS.unreachable : w.visited ? COLORS.visited : COLORS.pending;
      const yaw = yawOf(w.pose.orientation);
      ctx.strokeStyle = color;
      ctx.lineWidth = 2.5;
      ctx.beginPath();
      ctx.moveTo(q.x, q.y);
      ctx.lineTo(q.x + 18 * Math.cos(yaw), q.y - 18 * Math.sin(yaw));
      ctx.stroke();
      ctx.fillStyle = color;
      ctx.beginPath();
      ctx.arc(q.x, q.y, 10, 0, 2 * Math.PI);
      ctx.fill();
      ctx.fillStyle = '#fff';
      ctx.font = 'bold 11px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText(String(i + 1), q.x, q.y + 0.5);
    });
  }

  drawMarkers(ctx) {
    for (const set of this.markers.values()) {
      for (const mk of set.values()) {
        const t = this.frameToFixed(mk.header.frame_id);
        if (!t) continue;
        const base = compose(t, { x: mk.pose.position.x, y: mk.pose.position.y, th: yawOf(mk.pose.orientation) });
        const c = mk.color;
        const css = `rgba(${Math.round(c.r * 255)}, ${Math.round(c.g * 255)}, ${Math.round(c.b * 255)}, ${c.a || 1})`;
        ctx.fillStyle = css;
        ctx.strokeStyle = css;
        const at = (p) => {
          const w = compose(base, { x: p.x, y: p.y, th: 0 });
          return this.toScreen(w.x, w.y);
        };
        switch (mk.type) {
          case 4: // LINE_STRIP
          case 5: { // LINE_LIST
            ctx.lineWidth = Math.max(1.5, mk.scale.x * this.view.scale);
            ctx.beginPath();
            mk.points.forEach((p, i) => {
              const q = at(p);
              if (mk.type === 4 ? i === 0 : i % 2 === 0) ctx.moveTo(q.x, q.y);
              else ctx.lineTo(q.x, q.y);
            });
            ctx.stroke();
            break;
          }
          case 6: case 7: case 8: { // CUBE_LIST, SPHERE_LIST, POINTS
            const size = Math.max(2, mk.scale.x * this.view.scale);
            mk.points.forEach((p, i) => {
              const q = at(p);
              const pc = mk.colors[i];
              if (pc) ctx.fillStyle = `rgba(${Math.round(pc.r * 255)}, ${Math.round(pc.g * 255)}, ${Math.round(pc.b * 255)}, ${pc.a || 1})`;
              ctx.fillRect(q.x - size / 2, q.y - size / 2, size, size);
            });
            break;
          }
          case 9: { // TEXT_VIEW_FACING
            const q = at({ x: 0, y: 0 });
            ctx.font = `${Math.max(10, Math.min(24, mk.scale.z * this.view.scale))}px system-ui, sans-serif`;
            ctx.textAlign = 'center';
            ctx.fillText(mk.text, q.x, q.y);
            break;
          }
          case 0: { // ARROW
            const q = at({ x: 0, y: 0 });
            const len = Math.max(8, mk.scale.x * this.view.scale);
            ctx.lineWidth = 2;
            arrow(ctx, q.x, q.y, q.x + len * Math.cos(base.th), q.y - len * Math.sin(base.th));
            break;
          }
          default: { // CUBE, SPHERE, CYLINDER and the rest: a dot of the marker's size
            const q = at({ x: 0, y: 0 });
            ctx.beginPath();
            ctx.arc(q.x, q.y, Math.max(3, (mk.scale.x * this.view.scale) / 2), 0, 2 * Math.PI);
            ctx.fill();
          }
        }
      }
    }
  }

  drawRobot(ctx, p) {
    const q = this.toScreen(p.x, p.y);
    const r = Math.max(8, 0.18 * this.view.scale);
    ctx.save();
    ctx.translate(q.x, q.y);
    ctx.rotate(-p.th);
    ctx.fillStyle = 'rgba(37, 99, 235, 0.9)';
    ctx.strokeStyle = '#fff';
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc(0, 0, r, 0, 2 * Math.PI);
    ctx.fill();
    ctx.stroke();
    ctx.fillStyle = '#fff';
    ctx.beginPath();
    ctx.moveTo(r * 0.85, 0);
    ctx.lineTo(-r * 0.35, r * 0.5);
    ctx.lineTo(-r * 0.35, -r * 0.5);
    ctx.closePath();
    ctx.fill();
    ctx.restore();
  }

  destroy() {
    for (const u of this.unsubs) u();
    for (const u of this.dynamic.values()) u();
    this.dynamic.clear();
    clearInterval(this.goalTimer);
    clearInterval(this.waypointTimer);
    this.resizeObserver.disconnect();
    if (this.goalPub) this.goalPub.close();
  }
}

function legendItem(color, label) {
  return h('span', { class: 'legend-item' }, h('i', { style: { background: color } }), label);
}

function diamond(ctx, x, y, r) {
  ctx.beginPath();
  ctx.moveTo(x, y - r);
  ctx.lineTo(x + r, y);
  ctx.lineTo(x, y + r);
  ctx.lineTo(x - r, y);
  ctx.closePath();
  ctx.fill();
}

function cross(ctx, x, y, r) {
  ctx.beginPath();
  ctx.moveTo(x - r, y - r);
  ctx.lineTo(x + r, y + r);
  ctx.moveTo(x + r, y - r);
  ctx.lineTo(x - r, y + r);
  ctx.stroke();
}

function arrow(ctx, x0, y0, x1, y1) {
  const a = Math.atan2(y1 - y0, x1 - x0);
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.lineTo(x1, y1);
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - 10 * Math.cos(a - 0.45), y1 - 10 * Math.sin(a - 0.45));
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - 10 * Math.cos(a + 0.45), y1 - 10 * Math.sin(a + 0.45));
  ctx.stroke();
}

function flag(ctx, x, y, yaw, color, label) {
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  ctx.lineWidth = 3;
  arrow(ctx, x, y, x + 22 * Math.cos(yaw), y - 22 * Math.sin(yaw));
  ctx.beginPath();
  ctx.arc(x, y, 5, 0, 2 * Math.PI);
  ctx.fill();
  if (label) {
    ctx.font = '12px system-ui, sans-serif';
    ctx.textAlign = 'left';
    ctx.textBaseline = 'bottom';
    ctx.fillText(label, x + 8, y - 8);
  }
}
