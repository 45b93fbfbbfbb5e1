// Hexapod panel: the motion state (~/state), the four command services of
// hexapod_controller (start_stop, stand_up, sit_down, stand_walk), a
// cmd_vel pad, and a top and a side view of the six legs computed from
// joint_states with the node's kinematics parameters (forward kinematics as
// motion_control's LegFK: coxa, femur and tibia in one vertical plane per
// leg).

import { h, group, InfoLine, act, join, fitCanvas, throttledDraw } from './ui.js';
import { TeleopPad } from './teleop.js';

export const LEGS = ['RR', 'RM', 'RF', 'LR', 'LM', 'LF'];
const PARAMS = ['COXA_LENGTH', 'FEMUR_LENGTH', 'TIBIA_LENGTH', 'COXA_TO_CENTER_X', 'COXA_TO_CENTER_Y', 'INIT_COXA_ANGLE'];

// Defaults of params/hexapod.yaml, used until the parameters arrive.
const DEFAULT_GEOMETRY = {
  COXA_LENGTH: 0.083, FEMUR_LENGTH: 0.1, TIBIA_LENGTH: 0.1618,
  COXA_TO_CENTER_X: [-0.12, 0, 0.12, -0.12, 0, 0.12],
  COXA_TO_CENTER_Y: [-0.055, -0.09, -0.055, 0.055, 0.09, 0.055],
  INIT_COXA_ANGLE: [-60, 0, 60, -60, 0, 60],
};

/**
 * Forward kinematics of one leg in the body frame (x forward, y left, z up,
 * origin in the coxa plane): the coxa, femur, knee and foot points.
 */
export function legPoints(g, i, coxa, femur, tibia) {
  const side = g.COXA_TO_CENTER_Y[i] < 0 ? -1 : 1;
  const psi = coxa + (g.INIT_COXA_ANGLE[i] * Math.PI) / 180;
  const u = { x: Math.sin(psi), y: side * Math.cos(psi) };
  const c = { x: g.COXA_TO_CENTER_X[i], y: g.COXA_TO_CENTER_Y[i], z: 0 };
  const at = (reach, z) => ({ x: c.x + reach * u.x, y: c.y + reach * u.y, z });
  const kneeReach = g.COXA_LENGTH + g.FEMUR_LENGTH * Math.cos(femur);
  const kneeZ = g.FEMUR_LENGTH * Math.sin(femur);
  return [
    c,
    at(g.COXA_LENGTH, 0),
    at(kneeReach, kneeZ),
    at(kneeReach + g.TIBIA_LENGTH * Math.cos(femur + tibia), kneeZ + g.TIBIA_LENGTH * Math.sin(femur + tibia)),
  ];
}

export class HexapodPanel {
  /** @param ctx {bridge, ns, node: full node name, e.g. /hexapod/hexapod_controller} */
  constructor(ctx) {
    this.ctx = ctx;
    this.bridge = ctx.bridge;
    this.node = ctx.node;
    this.unsubs = [];
    this.geometry = { ...DEFAULT_GEOMETRY };
    this.geometrySource = 'defaults';
    this.joints = null;
    this.state = '—';
    this.draw = throttledDraw(() => this.render());

    this.info = new InfoLine();
    this.stateText = h('span', { class: 'state-name', id: 'hexapod-state', text: '—' });
    const btn = (id, label, service, title) => h('button', {
      type: 'button', id: `hexapod-${id}`, text: label, title,
      onclick: (e) => act(e.currentTarget, this.info, () => this.bridge.call(join(this.node, service), {})),
    });
    this.teleop = new TeleopPad(this.bridge, join(ctx.ns, 'cmd_vel'), { linear: 0.1, angular: 0.5, maxLinear: 0.2, maxAngular: 1 });
    // Twist or TwistStamped, as the controller takes it.
    this.teleop.followParameter(`${this.node}.enable_stamped_cmd_vel`);
    this.top = h('canvas', { class: 'hex-canvas', id: 'hexapod-top', attrs: { 'aria-label': 'hexapod top view' } });
    this.side = h('canvas', { class: 'hex-canvas', id: 'hexapod-side', attrs: { 'aria-label': 'hexapod side view' } });
    this.geomText = h('div', { class: 'muted small-text' });

    this.el = h('div', { class: 'panel hexapod', id: 'panel-hexapod' },
      h('div', { class: 'side-col' },
        h('h2', {}, 'Hexapod ', h('span', { class: 'ns-tag', text: this.node })),
        group('Motion',
          h('div', { class: 'row state-row' }, 'State: ', this.stateText),
          h('div', { class: 'row buttons' },
            btn('start', 'Start / Stop', 'start_stop', 'power the servos up or down (Idle ↔ Sitting)'),
            btn('stand', 'Stand up', 'stand_up', 'Sitting → Standing up → Walking'),
            btn('sit', 'Sit down', 'sit_down', 'back to Sitting'),
            btn('walk', 'Stand / Walk', 'stand_walk', 'toggle between walking and body posing')),
          this.info.el),
        group('Walk (cmd_vel)', this.teleop.el),
        this.geomText),
      h('div', { class: 'views' },
        h('figure', {}, this.top, h('figcaption', { text: 'top view (front up)' })),
        h('figure', {}, this.side, h('figcaption', { text: 'side view (front right)' }))));

    this.unsubs.push(
      this.bridge.subscribe(join(this.node, 'state'), (m) => {
        this.state = m.data;
        this.stateText.textContent = m.data;
        this.stateText.dataset.kind = m.data === 'Idle' ? 'idle' : 'active';
      }),
      this.bridge.subscribe(join(ctx.ns, 'joint_states'), (m) => {
        this.joints = m;
        this.draw();
      }),
    );
    this.resizeObserver = new ResizeObserver(() => this.draw());
    this.resizeObserver.observe(this.top);
    this.loadGeometry();
    this.draw();
  }

  async loadGeometry() {
    for (let attempt = 0; attempt < 20 && !this.destroyed; attempt++) {
      if (this.bridge.connected && this.bridge.hasCapability('parameters')) {
        try {
          const params = await this.bridge.getParameters(PARAMS.map((p) => `${this.node}.${p}`));
          const g = { ...DEFAULT_GEOMETRY };
          let n = 0;
          for (const p of params) {
            const key = p.name.slice(p.name.lastIndexOf('.') + 1);
            if (PARAMS.includes(key) && p.value !== undefined) {
              g[key] = p.value;
              n++;
            }
          }
          if (n === PARAMS.length && g.COXA_TO_CENTER_X.length === 6) {
            this.geometry = g;
            this.geometrySource = 'parameters';
            this.geomText.textContent = `geometry from ${this.node} parameters: coxa ${g.COXA_LENGTH} m, femur ${g.FEMUR_LENGTH} m, tibia ${g.TIBIA_LENGTH} m`;
            this.draw();
            return;
          }
        } catch {
          /* retry */
        }
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
    this.geomText.textContent = 'geometry: defaults of params/hexapod.yaml (parameters not available)';
  }

  legs() {
    const m = this.joints;
    const out = [];
    for (let i = 0; i < 6; i++) {
      const get = (j) => {
        if (!m) return NaN;
        const k = m.name.indexOf(`${j}_${LEGS[i]}`);
        return k >= 0 ? m.position[k] : NaN;
      };
      let a = [get('COXA'), get('FEMUR'), get('TIBIA')];
      if (!a.every(Number.isFinite)) a = [0, 0.5, -2]; // folded until joint_states arrive
      out.push(legPoints(this.geometry, i, ...a));
    }
    return out;
  }

  render() {
    if (!this.top.isConnected) return;
    const legs = this.legs();
    const g = this.geometry;
    // Top view: x forward = up on screen, y left = left on screen.
    drawView(this.top, legs, g, (p) => ({ u: -p.y, v: p.x }), 0.36, true);
    // Side view: x forward = right, z up = up.
    drawView(this.side, legs, g, (p) => ({ u: p.x, v: p.z }), 0.36, false);
  }

  destroy() {
    this.destroyed = true;
    for (const u of this.unsubs) u();
    this.teleop.destroy();
    this.resizeObserver.disconnect();
  }
}

const LEFT = '#2563eb';
const RIGHT = '#e11d48';

function drawView(canvas, legs, g, project, halfSpan, top) {
  const { w, h: hgt, dpr } = fitCanvas(canvas);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = '#f8fafc';
  ctx.fillRect(0, 0, w, hgt);
  const scale = Math.min(w, hgt) / (2 * halfSpan);
  const cy = top ? hgt / 2 : hgt * 0.4;
  const S = (p) => {
    const q = project(p);
    return { x: w / 2 + q.u * scale, y: cy - q.v * scale };
  };
  // Ground / reference line.
  ctx.strokeStyle = '#cbd5e1';
  ctx.lineWidth = 1;
  ctx.beginPath();
  if (top) {
    ctx.moveTo(w / 2, 8);
    ctx.lineTo(w / 2, hgt - 8);
  } else {
    const z0 = S({ x: 0, y: 0, z: 0 });
    ctx.moveTo(8, z0.y);
    ctx.lineTo(w - 8, z0.y);
  }
  ctx.stroke();
  if (!top) {
    // The ground under the lowest foot.
    const low = Math.min(...legs.map((l) => l[3].z));
    if (low < -0.01) {
      const gy = S({ x: 0, y: 0, z: low }).y + 5;
      ctx.strokeStyle = '#94a3b8';
      ctx.setLineDash([5, 4]);
      ctx.beginPath();
      ctx.moveTo(8, gy);
      ctx.lineTo(w - 8, gy);
      ctx.stroke();
      ctx.setLineDash([]);
    }
  }
  // Body outline through the coxa joints.
  const order = [2, 1, 0, 3, 4, 5];
  ctx.fillStyle = 'rgba(100, 116, 139, 0.25)';
  ctx.strokeStyle = '#475569';
  ctx.lineWidth = 2;
  ctx.beginPath();
  order.forEach((i, k) => {
    const q = S({ x: g.COXA_TO_CENTER_X[i], y: g.COXA_TO_CENTER_Y[i], z: 0 });
    if (k === 0) ctx.moveTo(q.x, q.y);
    else ctx.lineTo(q.x, q.y);
  });
  ctx.closePath();
  if (top) ctx.fill();
  ctx.stroke();
  // Legs: far side first in the side view so the near legs stay on top.
  const idx = top ? [0, 1, 2, 3, 4, 5] : [3, 4, 5, 0, 1, 2];
  for (const i of idx) {
    const pts = legs[i].map(S);
    const left = g.COXA_TO_CENTER_Y[i] > 0;
    ctx.strokeStyle = left ? LEFT : RIGHT;
    ctx.globalAlpha = !top && left ? 0.45 : 1;
    ctx.lineWidth = 4;
    ctx.lineCap = 'round';
    ctx.lineJoin = 'round';
    ctx.beginPath();
    pts.forEach((q, k) => (k ? ctx.lineTo(q.x, q.y) : ctx.moveTo(q.x, q.y)));
    ctx.stroke();
    ctx.fillStyle = '#0f172a';
    for (const q of pts.slice(1, 3)) {
      ctx.beginPath();
      ctx.arc(q.x, q.y, 3, 0, 2 * Math.PI);
      ctx.fill();
    }
    const foot = pts[3];
    ctx.fillStyle = left ? LEFT : RIGHT;
    ctx.beginPath();
    ctx.arc(foot.x, foot.y, 5, 0, 2 * Math.PI);
    ctx.fill();
    if (top) {
      ctx.globalAlpha = 1;
      ctx.fillStyle = '#334155';
      ctx.font = '11px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.fillText(LEGS[i], foot.x + (foot.x > w / 2 ? 14 : -14), foot.y + 4);
    }
  }
  ctx.globalAlpha = 1;
  ctx.fillStyle = '#64748b';
  ctx.font = '11px system-ui, sans-serif';
  ctx.textAlign = 'left';
  ctx.fillText(top ? '▲ front' : 'front ▶', 8, 16);
  // Scale bar: 10 cm.
  ctx.strokeStyle = '#334155';
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(w - 12 - 0.1 * scale, hgt - 12);
  ctx.lineTo(w - 12, hgt - 12);
  ctx.stroke();
  ctx.textAlign = 'right';
  ctx.fillText('10 cm', w - 12, hgt - 18);
}
