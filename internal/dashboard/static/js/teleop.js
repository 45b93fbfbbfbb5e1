// Teleoperation pad: publishes geometry_msgs/Twist on a topic at 10 Hz
// while an arrow key or an on-screen button is held, and one zero Twist on
// release, so the robot stops at once instead of after the receiver's
// timeout. With the receiver's enable_stamped_cmd_vel true (followParameter)
// it publishes geometry_msgs/TwistStamped, stamped with the browser's clock.

import { h } from './ui.js';
import { FALLBACK } from './schemas.js';
import { cmdVelMessage, cmdVelType } from './cmdvel.js';

const KEYS = { ArrowUp: 'up', ArrowDown: 'down', ArrowLeft: 'left', ArrowRight: 'right' };

export class TeleopPad {
  /**
   * @param bridge the Bridge
   * @param topic full topic name, e.g. /diffbot/teleoperation/cmd_vel
   * @param opts {linear, angular, maxLinear, maxAngular, holonomic}
   */
  constructor(bridge, topic, { linear = 0.3, angular = 0.8, maxLinear = 1, maxAngular = 2 } = {}) {
    this.bridge = bridge;
    this.topic = topic;
    this.held = new Set();
    this.timer = null;
    this.pub = null;
    this.sent = 0;
    this.stamped = false;
    this.destroyed = false;

    const dir = (name, label, title) => {
      const b = h('button', { type: 'button', class: `pad-${name}`, text: label, title, attrs: { 'aria-label': title } });
      const down = (e) => {
        e.preventDefault();
        b.setPointerCapture?.(e.pointerId);
        this.press(name);
      };
      const up = () => this.release(name);
      b.addEventListener('pointerdown', down);
      b.addEventListener('pointerup', up);
      b.addEventListener('pointercancel', up);
      b.addEventListener('lostpointercapture', up);
      this.buttons[name] = b;
      return b;
    };
    this.buttons = {};
    this.linear = h('input', { type: 'range', min: 0.05, max: maxLinear, step: 0.05, value: linear, attrs: { 'aria-label': 'linear speed' } });
    this.angular = h('input', { type: 'range', min: 0.1, max: maxAngular, step: 0.1, value: angular, attrs: { 'aria-label': 'angular speed' } });
    this.linearOut = h('output', { text: `${linear} m/s` });
    this.angularOut = h('output', { text: `${angular} rad/s` });
    this.linear.addEventListener('input', () => { this.linearOut.textContent = `${this.linear.value} m/s`; });
    this.angular.addEventListener('input', () => { this.angularOut.textContent = `${this.angular.value} rad/s`; });
    this.status = h('div', { class: 'teleop-status', text: `arrow keys or hold a button · ${topic}` });

    this.el = h('div', { class: 'teleop' },
      h('div', { class: 'pad' },
        dir('up', '▲', 'forward'), dir('left', '◀', 'turn left'),
        h('span', { class: 'pad-center', attrs: { 'aria-hidden': 'true' } }),
        dir('right', '▶', 'turn right'), dir('down', '▼', 'backward')),
      h('div', { class: 'speeds' },
        h('label', {}, 'linear', this.linear, this.linearOut),
        h('label', {}, 'angular', this.angular, this.angularOut)),
      this.status);

    this.onKeyDown = (e) => {
      const k = KEYS[e.key];
      if (!k || isTyping(e.target)) return;
      e.preventDefault();
      if (!e.repeat) this.press(k);
    };
    this.onKeyUp = (e) => {
      const k = KEYS[e.key];
      if (k) this.release(k);
    };
    // Losing focus or being hidden counts as letting go of every key: a
    // background tab's timers are throttled, and its key-up may never come.
    this.onBlur = () => this.releaseAll();
    this.onVisibility = () => {
      if (document.hidden) this.releaseAll();
    };
    window.addEventListener('keydown', this.onKeyDown);
    window.addEventListener('keyup', this.onKeyUp);
    window.addEventListener('blur', this.onBlur);
    document.addEventListener('visibilitychange', this.onVisibility);
  }

  twist() {
    const v = Number(this.linear.value);
    const w = Number(this.angular.value);
    let x = 0;
    let z = 0;
    if (this.held.has('up')) x += v;
    if (this.held.has('down')) x -= v;
    if (this.held.has('left')) z += w;
    if (this.held.has('right')) z -= w;
    return { linear: { x, y: 0, z: 0 }, angular: { x: 0, y: 0, z } };
  }

  /**
   * Follows a boolean parameter ("<node>.enable_stamped_cmd_vel") of the
   * receiving node: TwistStamped while it is true. Asked until it answers
   * (at most 20 times, a second apart); without an answer it stays Twist.
   */
  async followParameter(name) {
    for (let attempt = 0; attempt < 20 && !this.destroyed; attempt++) {
      if (this.bridge.connected && this.bridge.hasCapability('parameters')) {
        try {
          const [p] = await this.bridge.getParameters([name]);
          if (p && typeof p.value === 'boolean') {
            this.setStamped(p.value);
            return;
          }
        } catch {
          /* retry */
        }
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /** Publishes TwistStamped (true) or Twist from now on. */
  setStamped(on) {
    if (on === this.stamped) return;
    this.stamped = on;
    this.el.dataset.type = cmdVelType(on);
    if (this.pub) {
      this.pub.close();
      this.pub = this.advertise();
    }
  }

  advertise() {
    const type = cmdVelType(this.stamped);
    return this.bridge.advertise(this.topic, type, FALLBACK[type]);
  }

  press(k) {
    this.held.add(k);
    this.buttons[k]?.classList.add('held');
    if (!this.pub) this.pub = this.advertise();
    this.send();
    if (!this.timer) this.timer = setInterval(() => this.send(), 100);
  }

  release(k) {
    if (!this.held.delete(k)) return;
    this.buttons[k]?.classList.remove('held');
    if (this.held.size === 0) this.stop();
    else this.send();
  }

  releaseAll() {
    for (const k of [...this.held]) this.release(k);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
    this.send(); // one zero Twist: stop now
    this.status.textContent = `stopped · ${this.topic}`;
  }

  send() {
    if (!this.pub) return;
    const t = this.twist();
    try {
      if (this.pub.publish(cmdVelMessage(t, this.stamped, Date.now()))) {
        this.sent++;
        this.el.dataset.sent = String(this.sent);
        if (this.held.size) this.status.textContent = `v ${t.linear.x.toFixed(2)} m/s · ω ${t.angular.z.toFixed(2)} rad/s → ${this.topic}`;
      } else {
        this.status.textContent = 'not connected (or the bridge does not accept client publishing)';
      }
    } catch (e) {
      this.status.textContent = e.message;
    }
  }

  destroy() {
    this.destroyed = true;
    window.removeEventListener('keydown', this.onKeyDown);
    window.removeEventListener('keyup', this.onKeyUp);
    window.removeEventListener('blur', this.onBlur);
    document.removeEventListener('visibilitychange', this.onVisibility);
    if (this.held.size) {
      this.held.clear();
      this.stop();
    }
    clearInterval(this.timer);
    if (this.pub) this.pub.close();
  }
}

function isTyping(el) {
  return el && (el.tagName === 'INPUT' && el.type !== 'range' && el.type !== 'radio' && el.type !== 'checkbox' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
}
