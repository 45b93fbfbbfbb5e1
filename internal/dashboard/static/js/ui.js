// Small DOM and math helpers shared by the panels.

/**
 * Creates an element: h('button', {class: 'x', onclick: f, dataset: {a: 1}}, 'text', child).
 * Props starting with "on" become listeners; "class", "text", "style"
 * (object), "dataset" and "attrs" are handled; anything else is set as a
 * property.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'style') Object.assign(el.style, v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'attrs') for (const [a, x] of Object.entries(v)) el.setAttribute(a, x);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el[k] = v;
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** A titled group box (fieldset-like section). */
export function group(title, ...children) {
  return h('section', { class: 'group' }, h('h3', { text: title }), ...children);
}

/** A status line that shows the result of the last action. */
export class InfoLine {
  constructor(cls = '') {
    this.el = h('div', { class: `info ${cls}`, attrs: { role: 'status', 'aria-live': 'polite' } });
  }

  set(text, kind = 'ok') {
    this.el.textContent = text || '';
    this.el.dataset.kind = kind;
  }
}

/**
 * Runs an async action for a button: disables it while running and reports
 * the outcome on info. fn returns {success, message} (a std_srvs-style
 * response) or throws.
 */
export async function act(button, info, fn) {
  if (button) button.disabled = true;
  try {
    const r = await fn();
    if (r && r.success === false) info.set(`Call unsuccessful: ${r.message || '(no message)'}`, 'error');
    else info.set((r && r.message) || 'done', 'ok');
    return r;
  } catch (e) {
    info.set(e.message || String(e), 'error');
    return null;
  } finally {
    if (button) button.disabled = false;
  }
}

export function fmt(x, digits = 2) {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '—';
  return x.toFixed(digits);
}

/** Yaw (rotation about z) of a quaternion {x,y,z,w}. */
export function yawOf(q) {
  return Math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z));
}

/** Quaternion of a rotation by yaw about z. */
export function quatOfYaw(yaw) {
  return { x: 0, y: 0, z: Math.sin(yaw / 2), w: Math.cos(yaw / 2) };
}

/** Joins a namespace and a relative name: join('/diffbot', 'rsm/x') = '/diffbot/rsm/x'. */
export function join(ns, name) {
  const base = ns === '/' || ns === '' ? '' : ns.replace(/\/+$/, '');
  return `${base}/${name.replace(/^\/+/, '')}`;
}

/** Sizes a canvas's backing store to its CSS box and device pixel ratio. */
export function fitCanvas(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const r = canvas.getBoundingClientRect();
  const w = Math.max(1, Math.round(r.width * dpr));
  const hgt = Math.max(1, Math.round(r.height * dpr));
  if (canvas.width !== w || canvas.height !== hgt) {
    canvas.width = w;
    canvas.height = hgt;
  }
  return { w: r.width, h: r.height, dpr };
}

/** Rate meter: counts events in a sliding window. */
export class RateMeter {
  constructor(windowMs = 3000) {
    this.windowMs = windowMs;
    this.times = [];
    this.bytes = [];
  }

  add(size = 0, now = performance.now()) {
    this.times.push(now);
    this.bytes.push(size);
    this.trim(now);
  }

  trim(now) {
    while (this.times.length && now - this.times[0] > this.windowMs) {
      this.times.shift();
      this.bytes.shift();
    }
  }

  /** {hz, bps} over the window. */
  read(now = performance.now()) {
    this.trim(now);
    const n = this.times.length;
    if (n < 2) return { hz: 0, bps: 0 };
    const span = Math.max(now - this.times[0], 1) / 1000;
    return { hz: (n - 1) / span, bps: this.bytes.reduce((a, b) => a + b, 0) / span };
  }
}

/** A rAF-throttled redraw: schedule() many times, draw() runs once per frame. */
export function throttledDraw(draw) {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      draw();
    });
  };
}
