// RSM Control: every control of the original rqt panel "RSM Control"
// (software stop, operation mode, state, exploration, waypoint following,
// reverse driving, stop 2D nav goal), plus a waypoint list and the
// teleoperation pad. Services and topics are the rsm/ names relative to the
// robot's namespace, as the nodes serve them.

import { h, group, InfoLine, act, fmt, join, yawOf } from './ui.js';
import { TeleopPad } from './teleop.js';

const MODES = [
  { value: 0, label: 'Stopped' },
  { value: 1, label: 'Autonomy' },
  { value: 2, label: 'Teleoperation' },
];
const WAYPOINT_MODES = ['Single', 'Roundtrip', 'Patrol'];
// How long rsm/operationMode messages that disagree with a successful
// setOperationMode are taken for ones sent before it (a slow link).
const PENDING_OP_MS = 5000;
const EXPLORATION_MODES = ['Finish', 'Interrupt'];

export class RsmControl {
  constructor(ctx) {
    this.ctx = ctx;
    this.bridge = ctx.bridge;
    this.ns = ctx.ns;
    this.unsubs = [];
    this.state = '';
    this.op = { emergency_stop: false, mode: 0 };
    // What the last successful setOperationMode asked for, until
    // rsm/operationMode says so or PENDING_OP_MS pass (see onOperationMode).
    this.pendingOp = null;
    this.waypoints = null;
    this.reverse = false;
    this.explorationRunning = false;
    this.waypointsRunning = false;

    const svc = (n) => join(this.ns, `rsm/${n}`);
    this.svc = svc;

    // --- Control ---
    this.controlInfo = new InfoLine();
    this.estop = h('button', { type: 'button', class: 'estop', id: 'rsm-estop', text: 'Software Stop', onclick: () => this.toggleEstop() });
    this.modeRadios = MODES.map((m) => h('input', {
      type: 'radio', name: `opmode-${this.ns}`, value: String(m.value), id: `rsm-mode-${m.value}`,
      onchange: () => this.setMode(m.value),
    }));
    this.stateText = h('span', { class: 'state-name', id: 'rsm-state', text: '—' });
    const control = group('Control',
      h('div', { class: 'row' }, this.estop,
        h('div', { class: 'radios', attrs: { role: 'radiogroup', 'aria-label': 'operation mode' } },
          MODES.map((m, i) => h('label', {}, this.modeRadios[i], m.label)))),
      h('div', { class: 'row state-row' }, 'Current state: ', this.stateText),
      this.controlInfo.el);

    // --- Exploration ---
    this.explorationInfo = new InfoLine();
    this.explorationBtn = h('button', { type: 'button', id: 'rsm-exploration', text: 'Start', onclick: () => this.toggleExploration() });
    this.explorationMode = h('select', { id: 'rsm-exploration-mode', attrs: { 'aria-label': 'exploration mode' } },
      EXPLORATION_MODES.map((m, i) => h('option', { value: String(i), text: m })));
    const exploration = group('Exploration',
      h('div', { class: 'row' }, this.explorationBtn, h('label', {}, 'Mode ', this.explorationMode)),
      this.explorationInfo.el);

    // --- Waypoint following ---
    this.waypointInfo = new InfoLine();
    this.waypointBtn = h('button', { type: 'button', id: 'rsm-waypoints', text: 'Start', onclick: () => this.toggleWaypoints() });
    this.resetBtn = h('button', { type: 'button', id: 'rsm-reset', text: 'Reset', onclick: () => this.resetWaypoints() });
    this.waypointMode = h('select', { id: 'rsm-waypoint-mode', attrs: { 'aria-label': 'waypoint following mode' } },
      WAYPOINT_MODES.map((m, i) => h('option', { value: String(i), text: m })));
    this.routine = h('select', { id: 'rsm-routine', attrs: { 'aria-label': 'routine' } }, h('option', { value: '', text: 'None' }));
    this.setWaypointBtn = h('button', { type: 'button', id: 'rsm-set-waypoint', text: 'Set Waypoint', title: 'add a waypoint at the robot pose', onclick: () => this.setWaypointAtRobot() });
    this.waypointList = h('tbody');
    const waypoints = group('Waypoint Following',
      h('div', { class: 'row' }, this.waypointBtn, this.resetBtn, h('label', {}, 'Mode ', this.waypointMode)),
      h('div', { class: 'row' }, this.setWaypointBtn, h('label', {}, 'Routine ', this.routine)),
      h('div', { class: 'wp-table-wrap' }, h('table', { class: 'wp-table', id: 'rsm-waypoint-table' },
        h('thead', {}, h('tr', {}, h('th', { text: '#' }), h('th', { text: 'x' }), h('th', { text: 'y' }),
          h('th', { text: 'yaw' }), h('th', { text: 'status' }), h('th', { text: '' }))),
        this.waypointList)),
      this.waypointInfo.el);

    // --- Movement ---
    this.movementInfo = new InfoLine();
    this.reverseBox = h('input', { type: 'checkbox', id: 'rsm-reverse', onchange: () => this.toggleReverse() });
    this.stopGoalBtn = h('button', { type: 'button', id: 'rsm-stop-goal', text: 'Stop 2D Nav Goal', onclick: () => this.stopGoal() });
    const movement = group('Movement',
      h('div', { class: 'row' }, h('label', {}, this.reverseBox, 'Reverse Driving'), this.stopGoalBtn),
      this.movementInfo.el);

    // --- Teleoperation ---
    this.teleop = new TeleopPad(this.bridge, join(this.ns, 'teleoperation/cmd_vel'), { linear: 0.3, angular: 0.8 });
    // Twist or TwistStamped, as the mux takes it.
    this.teleop.followParameter(`${join(this.ns, 'robotControlMuxNode')}.enable_stamped_cmd_vel`);
    const teleop = group('Teleoperation', this.teleop.el);

    this.el = h('div', { class: 'panel rsm-control', id: 'panel-rsm' },
      h('h2', {}, 'RSM Control ', h('span', { class: 'ns-tag', text: this.ns })),
      control, exploration, waypoints, movement, teleop);

    this.subscribe();
    this.init();
    this.render();
  }

  subscribe() {
    const b = this.bridge;
    this.unsubs.push(
      b.subscribe(join(this.ns, 'rsm/stateInfo'), (m) => this.onState(m.data)),
      b.subscribe(join(this.ns, 'rsm/operationMode'), (m) => this.onOperationMode(m)),
      b.subscribe(join(this.ns, 'rsm/reverseMode'), (m) => {
        this.reverse = m.data;
        this.reverseBox.checked = m.data;
      }),
      b.subscribe(join(this.ns, 'rsm/waypoints'), (m) => this.onWaypoints(m)),
    );
  }

  async init() {
    // Fill what the topics do not repeat: the state (published once per
    // transition) and the routines (a parameter of the service provider).
    try {
      const r = await this.bridge.call(this.svc('stateInfo'), {}, { timeoutMs: 15000 });
      if (r.success && !this.state) this.onState(r.message);
    } catch (e) {
      this.controlInfo.set(`state unknown: ${e.message}`, 'error');
    }
    try {
      const r = await this.bridge.call(this.svc('getWaypointRoutines'), {}, { timeoutMs: 15000 });
      for (const name of r.waypoint_routines || []) this.routine.append(h('option', { value: name, text: name }));
    } catch (e) {
      this.waypointInfo.set(`routines unknown: ${e.message}`, 'error');
    }
  }

  onState(name) {
    this.state = name;
    this.stateText.textContent = name;
    this.stateText.dataset.kind = name === 'Emergency Stop' ? 'error' : name === 'Idle' ? 'idle' : 'active';
    // As the rqt panel: "E:" means exploration runs, "W:" waypoint following.
    this.explorationRunning = name.startsWith('E:');
    this.waypointsRunning = name.startsWith('W:');
    this.ctx.onState?.(name);
    this.render();
  }

  onOperationMode(m) {
    // Messages that arrive after a button press may predate it (the rqt
    // panel skips the first one for that reason). On a slow link seconds of
    // them (the mux publishes every cycle) still wait behind the answer, so
    // every message is taken as stale until one shows what was asked for,
    // or PENDING_OP_MS have passed: the button does not flicker back.
    const p = this.pendingOp;
    if (p) {
      const agrees = m.emergency_stop === p.emergency_stop && m.mode === p.mode;
      if (!agrees && Date.now() < p.until) return;
      this.pendingOp = null;
    }
    this.op = { emergency_stop: m.emergency_stop, mode: m.mode };
    this.render();
  }

  onWaypoints(m) {
    this.waypoints = m;
    this.ctx.onWaypoints?.(m);
    this.renderWaypoints();
  }

  render() {
    const stopped = this.op.emergency_stop;
    this.estop.classList.toggle('active', stopped);
    this.estop.textContent = stopped ? 'Software Stop: ON' : 'Software Stop';
    this.estop.setAttribute('aria-pressed', String(stopped));
    this.modeRadios.forEach((r, i) => {
      r.checked = MODES[i].value === this.op.mode;
      r.disabled = stopped && MODES[i].value !== 0;
    });
    this.explorationBtn.textContent = this.explorationRunning ? 'Stop' : 'Start';
    this.explorationBtn.classList.toggle('running', this.explorationRunning);
    this.explorationMode.disabled = this.explorationRunning;
    this.waypointBtn.textContent = this.waypointsRunning ? 'Stop' : 'Start';
    this.waypointBtn.classList.toggle('running', this.waypointsRunning);
    this.waypointMode.disabled = this.waypointsRunning;
    this.resetBtn.disabled = this.waypointsRunning;
  }

  renderWaypoints() {
    const m = this.waypoints;
    if (!m) return;
    if (!this.waypointsRunning && document.activeElement !== this.waypointMode) this.waypointMode.value = String(m.mode);
    // Rebuild only when something shown changed (the topic comes at 20 Hz).
    const key = JSON.stringify(m.waypoints.map((w) => [w.pose.position.x, w.pose.position.y, w.pose.orientation.z, w.visited, w.unreachable, w.routine]));
    if (key === this.wpKey) return;
    this.wpKey = key;
    const rows = m.waypoints.map((w, i) => {
      const status = w.unreachable ? 'unreachable' : w.visited ? 'visited' : 'pending';
      return h('tr', { dataset: { status } },
        h('td', { text: String(i + 1) }),
        h('td', { text: fmt(w.pose.position.x) }),
        h('td', { text: fmt(w.pose.position.y) }),
        h('td', { text: fmt(yawOf(w.pose.orientation), 2) }),
        h('td', {}, h('span', { class: `wp-status ${status}`, text: w.routine ? `${status} · ${w.routine}` : status })),
        h('td', {}, h('button', {
          type: 'button', class: 'small', title: `remove waypoint ${i + 1}`, text: '✕',
          onclick: (e) => act(e.currentTarget, this.waypointInfo, () => this.bridge.call(this.svc('removeWaypoint'), { position: i })),
        })));
    });
    this.waypointList.replaceChildren(...(rows.length ? rows : [h('tr', {}, h('td', { colSpan: 6, class: 'empty', text: 'no waypoints: set one at the robot pose or click the map in "Add waypoint" mode' }))]));
  }

  async toggleEstop() {
    const on = !this.op.emergency_stop;
    // Toggling forces STOPPED, as the rqt panel does.
    const req = { operation_mode: { emergency_stop: on, mode: 0 } };
    const r = await act(this.estop, this.controlInfo, () => this.bridge.call(this.svc('setOperationMode'), req));
    if (r && r.success) {
      this.op = { emergency_stop: on, mode: 0 };
      this.pendingOp = { ...this.op, until: Date.now() + PENDING_OP_MS };
      this.render();
    }
  }

  async setMode(mode) {
    if (mode === this.op.mode) return;
    const req = { operation_mode: { emergency_stop: this.op.emergency_stop, mode } };
    const r = await act(null, this.controlInfo, () => this.bridge.call(this.svc('setOperationMode'), req));
    if (r && r.success) {
      this.op = { ...this.op, mode };
      this.pendingOp = { ...this.op, until: Date.now() + PENDING_OP_MS };
    }
    this.render();
  }

  async toggleExploration() {
    const start = !this.explorationRunning;
    const r = await act(this.explorationBtn, this.explorationInfo, () => this.bridge.call(this.svc('startStopExploration'), { data: start }));
    if (r && r.success && start) {
      await act(null, this.explorationInfo, () => this.bridge.call(this.svc('setExplorationMode'), { data: this.explorationMode.value === '1' }));
    }
  }

  async toggleWaypoints() {
    const start = !this.waypointsRunning;
    const r = await act(this.waypointBtn, this.waypointInfo, () => this.bridge.call(this.svc('startStopWaypointFollowing'), { data: start }));
    if (r && r.success && start) {
      const mode = Number(this.waypointMode.value);
      await act(null, this.waypointInfo, () => this.bridge.call(this.svc('setWaypointFollowingMode'), { mode, reverse: false }));
    }
  }

  resetWaypoints() {
    return act(this.resetBtn, this.waypointInfo, () => this.bridge.call(this.svc('resetWaypoints'), {}));
  }

  async setWaypointAtRobot() {
    await act(this.setWaypointBtn, this.waypointInfo, async () => {
      const r = await this.bridge.call(this.svc('getRobotPose'), {});
      const q = r.pose.orientation;
      if (q.x === 0 && q.y === 0 && q.z === 0 && q.w === 0) {
        return { success: false, message: 'no robot pose yet (no map → robot transform)' };
      }
      return this.addWaypoint(r.pose);
    });
  }

  /** The routine names the service provider offers (rsm/getWaypointRoutines). */
  routineNames() {
    return [...this.routine.options].map((o) => o.value).filter((v) => v !== '');
  }

  /** Adds a waypoint at pose with the selected routine (used by the map too). */
  addWaypoint(pose) {
    return this.bridge.call(this.svc('addWaypoint'), {
      waypoint: { pose, visited: false, unreachable: false, routine: this.routine.value },
      position: -1,
    });
  }

  toggleReverse() {
    const want = this.reverseBox.checked;
    this.reverseBox.checked = this.reverse; // the topic confirms the change
    return act(null, this.movementInfo, () => this.bridge.call(this.svc('setReverseMode'), { data: want }));
  }

  stopGoal() {
    return act(this.stopGoalBtn, this.movementInfo, async () => {
      await this.bridge.call(this.svc('stop2DNavGoal'), {});
      return { success: true, message: 'Stop sent' };
    });
  }

  destroy() {
    for (const u of this.unsubs) u();
    this.teleop.destroy();
  }
}
