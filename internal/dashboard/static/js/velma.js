// Velma panel: ve_body and cs states, motors, the enable/home/relax
// services, live plots of joint positions (joint_states) and arm torques
// (~/status), and a joint-goal form for ~/spline_trajectory_action_joint.
//
// The Foxglove protocol has no actions; the form sends the goal through the
// action's send_goal service (<action>/_action/send_goal), which is how every
// ROS 2 action client sends goals, and waits on <action>/_action/get_result.
// When the bridge does not advertise those services the form says so.

import { h, group, InfoLine, act, join, fmt } from './ui.js';
import { StripChart } from './plot.js';

const ARM = (side) => Array.from({ length: 7 }, (_, i) => `${side}_arm_${i}_joint`);
const BODY_JOINTS = ['torso_0_joint', ...ARM('right'), ...ARM('left')];
const GROUPS = {
  right: { label: 'Right arm', joints: ARM('right') },
  left: { label: 'Left arm', joints: ARM('left') },
  torso: { label: 'Torso & head', joints: ['torso_0_joint', 'head_pan_joint', 'head_tilt_joint'] },
};
const RESULT_CODES = {
  0: 'SUCCESSFUL', '-1': 'INVALID_GOAL', '-2': 'INVALID_JOINTS', '-3': 'OLD_HEADER_TIMESTAMP',
  '-4': 'PATH_TOLERANCE_VIOLATED', '-5': 'GOAL_TOLERANCE_VIOLATED', '-6': 'ABORTED', '-7': 'REJECTED',
};

function randomUUID() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b);
}

export class VelmaPanel {
  /** @param ctx {bridge, ns, node: e.g. /velma/velma_core} */
  constructor(ctx) {
    this.ctx = ctx;
    this.bridge = ctx.bridge;
    this.node = ctx.node;
    this.unsubs = [];
    this.positions = new Map();
    this.t0 = performance.now();

    this.info = new InfoLine();
    this.veBody = h('span', { class: 'state-name', id: 'velma-vebody', text: '—' });
    this.cs = h('span', { class: 'state-name', id: 'velma-cs', text: '—' });
    this.ready = h('span', { class: 'pill', id: 'velma-ready', text: 'motors not ready' });
    this.collision = h('span', { class: 'muted', text: '' });
    this.motors = h('tbody');
    const btn = (id, label, service, title) => h('button', {
      type: 'button', id: `velma-${id}`, text: label, title,
      onclick: (e) => act(e.currentTarget, this.info, () => this.bridge.call(join(this.node, service), {})),
    });

    // Plots.
    this.posChart = new StripChart({ title: 'Joint positions', unit: 'rad', id: 'velma-pos-plot' });
    this.torqueChart = new StripChart({ title: 'Arm torques (measured)', unit: 'Nm', id: 'velma-torque-plot' });
    this.posGroup = h('select', { attrs: { 'aria-label': 'joints to plot' }, onchange: () => this.posChart.setSeries(GROUPS[this.posGroup.value].joints) },
      Object.entries(GROUPS).map(([k, g]) => h('option', { value: k, text: g.label })));
    this.torqueSide = h('select', { attrs: { 'aria-label': 'arm torques to plot' }, onchange: () => this.torqueChart.setSeries(ARM(this.torqueSide.value)) },
      h('option', { value: 'right', text: 'Right arm' }), h('option', { value: 'left', text: 'Left arm' }));
    this.posChart.setSeries(GROUPS.right.joints);
    this.torqueChart.setSeries(ARM('right'));

    // Joint goal form.
    this.goalInfo = new InfoLine();
    this.goalInfo.el.id = 'velma-goal-info';
    this.inputs = new Map(BODY_JOINTS.map((j) => [j, h('input', { type: 'number', step: 0.05, value: 0, class: 'num', attrs: { 'aria-label': j } })]));
    this.duration = h('input', { type: 'number', min: 0.1, step: 0.5, value: 3, class: 'num', id: 'velma-duration', attrs: { 'aria-label': 'duration' } });
    this.sendBtn = h('button', { type: 'button', id: 'velma-send-goal', text: 'Send goal', onclick: () => this.sendGoal() });
    this.cancelBtn = h('button', { type: 'button', id: 'velma-cancel-goal', text: 'Cancel', onclick: () => this.cancelGoal() });
    const fillBtn = h('button', { type: 'button', class: 'secondary', id: 'velma-fill', text: 'Current pose', title: 'fill the form with the measured positions', onclick: () => this.fillCurrent() });
    const short = (j) => (j === 'torso_0_joint' ? 'torso' : j.replace(/^(right|left)_arm_(\d)_joint$/, (_, side, i) => `${side[0]}${i}`));
    const jointRows = BODY_JOINTS.map((j) => h('label', { class: 'joint-input', title: j }, h('span', { text: short(j) }), this.inputs.get(j)));
    this.actionNote = h('div', { class: 'muted small-text' });

    this.el = h('div', { class: 'panel velma', id: 'panel-velma' },
      h('div', { class: 'side-col' },
        h('h2', {}, 'Velma ', h('span', { class: 'ns-tag', text: this.node })),
        group('Core agent',
          h('div', { class: 'row state-row' }, 've_body: ', this.veBody, ' cs: ', this.cs),
          h('div', { class: 'row' }, this.ready, this.collision),
          h('table', { class: 'motors' }, h('thead', {}, h('tr', {}, ['motor', 'enabled', 'homed', 'ok', 'position'].map((x) => h('th', { text: x })))), this.motors),
          h('div', { class: 'row buttons' },
            btn('enable', 'Enable motors', 'motors/enable', 'enable torso, head pan and tilt'),
            btn('home-hp', 'Home head pan', 'motors/hp/home'),
            btn('home-ht', 'Home head tilt', 'motors/ht/home'),
            btn('relax', 'Relax', 'relax', 'switch cs to relax')),
          this.info.el),
        group('Joint goal',
          h('div', { class: 'muted small-text' }, 'rad; r0–r6 right arm, l0–l6 left arm'),
          h('div', { class: 'joint-grid' }, jointRows),
          h('div', { class: 'row' }, h('label', {}, 'duration (s) ', this.duration), fillBtn, this.sendBtn, this.cancelBtn),
          this.actionNote, this.goalInfo.el)),
      h('div', { class: 'plots' },
        h('div', { class: 'plot-head' }, h('label', {}, 'Positions ', this.posGroup)), this.posChart.el,
        h('div', { class: 'plot-head' }, h('label', {}, 'Torques ', this.torqueSide)), this.torqueChart.el));

    this.unsubs.push(
      this.bridge.subscribe(join(this.node, 've_body/state'), (m) => setState(this.veBody, m.data)),
      this.bridge.subscribe(join(this.node, 'cs/state'), (m) => setState(this.cs, m.data)),
      this.bridge.subscribe(join(this.node, 'status'), (m) => this.onStatus(m)),
      this.bridge.subscribe(join(ctx.ns, 'joint_states'), (m) => this.onJoints(m)),
    );
    const onServices = () => this.updateActionNote();
    this.bridge.addEventListener('services', onServices);
    this.unsubs.push(() => this.bridge.removeEventListener('services', onServices));
    this.updateActionNote();
  }

  actionService(kind) {
    return join(this.node, `spline_trajectory_action_joint/_action/${kind}`);
  }

  updateActionNote() {
    const ok = this.bridge.services.has(this.actionService('send_goal'));
    this.sendBtn.disabled = !ok;
    this.cancelBtn.disabled = !ok;
    this.actionNote.textContent = ok
      ? `goal via ${this.actionService('send_goal')} (control_msgs/action/FollowJointTrajectory)`
      : 'The Foxglove protocol has no actions; goals go through the action\'s hidden services '
        + `(${this.actionService('send_goal')}), which this bridge does not offer. Start foxglove_bridge with `
        + '-p include_hidden:=true (demo: foxglove_include_hidden:=true), or send the goal with "fsmnodes action send_goal".';
  }

  onJoints(m) {
    const t = (performance.now() - this.t0) / 1000;
    const vals = {};
    m.name.forEach((n, i) => {
      vals[n] = m.position[i];
      this.positions.set(n, m.position[i]);
    });
    this.posChart.push(t, vals);
  }

  onStatus(m) {
    // ~/status repeats the states at 50 Hz; the latched state topics only
    // speak on a change, so a page that joins late (or a bridge that cannot
    // replay a latched sample) still shows them. ve_body's status states
    // alternate with their _st/_st_ok halves every iteration: show the
    // behaviour state, as ~/ve_body/state does.
    const vb = m.ve_body_state.replace(/_st(_ok)?$/, '');
    if (vb && this.veBody.textContent !== vb) setState(this.veBody, vb);
    if (m.cs_state && this.cs.textContent !== m.cs_state) setState(this.cs, m.cs_state);
    const t = (performance.now() - this.t0) / 1000;
    const arm = this.torqueSide.value === 'left' ? m.left_arm : m.right_arm;
    const vals = {};
    ARM(this.torqueSide.value).forEach((n, i) => { vals[n] = arm.torque_measured[i]; });
    this.torqueChart.push(t, vals);
    this.ready.textContent = m.motors_ready ? 'motors ready' : 'motors not ready';
    this.ready.dataset.kind = m.motors_ready ? 'ok' : 'warn';
    this.collision.textContent = m.in_self_collision ? 'self-collision!' : m.min_distance >= 0 ? `closest link pair ${fmt(m.min_distance, 3)} m` : '';
    const key = JSON.stringify(m.motors.map((x) => [x.name, x.enabled, x.homing_required, x.homing_in_progress, x.ok, Math.round(x.position * 100)]));
    if (key !== this.motorsKey) {
      this.motorsKey = key;
      this.motors.replaceChildren(...m.motors.map((x) => h('tr', {},
        h('td', { text: x.name.replace('_joint', '') }),
        h('td', { text: x.enabled ? '✓' : '—' }),
        h('td', { text: x.homing_in_progress ? 'homing…' : x.homing_required ? 'no' : '✓' }),
        h('td', { text: x.ok ? '✓' : 'fault' }),
        h('td', { text: fmt(x.position, 2) }))));
    }
  }

  fillCurrent() {
    for (const [j, input] of this.inputs) {
      const v = this.positions.get(j);
      if (Number.isFinite(v)) input.value = v.toFixed(3);
    }
  }

  readForm() {
    const positions = [];
    for (const [j, input] of this.inputs) {
      const v = Number(input.value);
      if (input.value === '' || !Number.isFinite(v)) throw new Error(`${j}: not a number`);
      positions.push(v);
    }
    const d = Number(this.duration.value);
    if (!Number.isFinite(d) || d <= 0) throw new Error('duration must be a positive number of seconds');
    return { positions, d };
  }

  async sendGoal() {
    let form;
    try {
      form = this.readForm();
    } catch (e) {
      this.goalInfo.set(e.message, 'error');
      return;
    }
    const uuid = randomUUID();
    const sec = Math.floor(form.d);
    const req = {
      goal_id: { uuid },
      goal: {
        trajectory: {
          joint_names: BODY_JOINTS,
          points: [{ positions: form.positions, time_from_start: { sec, nanosec: Math.round((form.d - sec) * 1e9) } }],
        },
      },
    };
    this.sendBtn.disabled = true;
    try {
      const r = await this.bridge.call(this.actionService('send_goal'), req);
      if (!r.accepted) {
        this.goalInfo.set('goal rejected', 'error');
        return;
      }
      this.goalInfo.set('goal accepted, moving…', 'ok');
      const res = await this.bridge.call(this.actionService('get_result'), { goal_id: { uuid } }, { timeoutMs: form.d * 1000 + 30000 });
      const code = res.result.error_code;
      const name = RESULT_CODES[String(code)] || String(code);
      const status = ['unknown', 'accepted', 'executing', 'canceling', 'succeeded', 'canceled', 'aborted'][res.status] || res.status;
      this.goalInfo.set(`goal ${status}: ${name}${res.result.error_string ? ` (${res.result.error_string})` : ''}`, code === 0 && res.status === 4 ? 'ok' : 'error');
    } catch (e) {
      this.goalInfo.set(e.message, 'error');
    } finally {
      this.updateActionNote();
    }
  }

  cancelGoal() {
    // A zero goal id and stamp cancel every goal of the action server.
    return act(this.cancelBtn, this.goalInfo, async () => {
      const r = await this.bridge.call(this.actionService('cancel_goal'), { goal_info: { goal_id: { uuid: new Array(16).fill(0) } } });
      return { success: r.return_code === 0, message: r.return_code === 0 ? `canceling ${r.goals_canceling.length} goal(s)` : `cancel refused (code ${r.return_code})` };
    });
  }

  destroy() {
    for (const u of this.unsubs) u();
    this.posChart.destroy();
    this.torqueChart.destroy();
  }
}

function setState(el, name) {
  el.textContent = name;
  el.dataset.kind = name === 'idle' ? 'idle' : /safe/.test(name) ? 'warn' : 'active';
}
