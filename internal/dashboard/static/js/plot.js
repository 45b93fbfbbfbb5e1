// A strip chart on a canvas: several named series over the last `span`
// seconds, auto-scaled, with a legend. Samples older than the span are
// dropped, so memory stays bounded however long the page runs.

import { h, fitCanvas, throttledDraw } from './ui.js';

const PALETTE = ['#2563eb', '#e11d48', '#16a34a', '#f59e0b', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#ea580c'];

export class StripChart {
  constructor({ title, unit = '', span = 10, id } = {}) {
    this.title = title;
    this.unit = unit;
    this.span = span;
    this.series = new Map(); // name -> {t: [], v: [], color}
    this.canvas = h('canvas', { class: 'plot-canvas', id });
    this.legend = h('div', { class: 'plot-legend' });
    this.el = h('figure', { class: 'plot' }, h('figcaption', { text: title }), this.canvas, this.legend);
    this.draw = throttledDraw(() => this.render());
    this.resizeObserver = new ResizeObserver(() => this.draw());
    this.resizeObserver.observe(this.canvas);
  }

  /** Shows only these series names (in this order), clearing the others. */
  setSeries(names) {
    this.series = new Map(names.map((n, i) => [n, { t: [], v: [], color: PALETTE[i % PALETTE.length] }]));
    this.legend.replaceChildren(...names.map((n, i) => h('span', { class: 'legend-item' },
      h('i', { style: { background: PALETTE[i % PALETTE.length] } }), n)));
    this.draw();
  }

  /** Adds samples {name: value} at time t (seconds). */
  push(t, values) {
    for (const [name, s] of this.series) {
      const v = values[name];
      if (v === undefined || !Number.isFinite(v)) continue;
      s.t.push(t);
      s.v.push(v);
      let k = 0;
      while (k < s.t.length && s.t[k] < t - this.span) k++;
      if (k > 0) {
        s.t.splice(0, k);
        s.v.splice(0, k);
      }
    }
    this.now = t;
    this.draw();
  }

  render() {
    if (!this.canvas.isConnected) return;
    const { w, h: hgt, dpr } = fitCanvas(this.canvas);
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, w, hgt);
    let lo = Infinity;
    let hi = -Infinity;
    for (const s of this.series.values()) {
      for (const v of s.v) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    const left = 48;
    const right = 8;
    const top = 8;
    const bottom = 20;
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#64748b';
    if (!Number.isFinite(lo)) {
      ctx.textAlign = 'center';
      ctx.fillText('no data yet', w / 2, hgt / 2);
      return;
    }
    if (hi - lo < 1e-6) {
      hi += 0.5;
      lo -= 0.5;
    }
    const pad = (hi - lo) * 0.08;
    lo -= pad;
    hi += pad;
    const t1 = this.now;
    const t0 = t1 - this.span;
    const X = (t) => left + ((t - t0) / this.span) * (w - left - right);
    const Y = (v) => top + (1 - (v - lo) / (hi - lo)) * (hgt - top - bottom);
    // Axes and ticks.
    ctx.strokeStyle = '#e2e8f0';
    ctx.lineWidth = 1;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const v of ticks(lo, hi, 5)) {
      const y = Math.round(Y(v)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(w - right, y);
      ctx.stroke();
      ctx.fillText(fmtTick(v), left - 4, y);
    }
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    for (let s = 0; s <= this.span; s += this.span / 5) {
      ctx.fillText(s === this.span ? 'now' : `-${(this.span - s).toFixed(0)} s`, X(t0 + s), hgt - bottom + 4);
    }
    ctx.lineWidth = 1.6;
    for (const s of this.series.values()) {
      if (s.t.length < 2) continue;
      ctx.strokeStyle = s.color;
      ctx.beginPath();
      for (let i = 0; i < s.t.length; i++) {
        const x = X(s.t[i]);
        const y = Y(s.v[i]);
        if (i === 0) ctx.moveTo(x, y);
        else ctx.lineTo(x, y);
      }
      ctx.stroke();
    }
    if (this.unit) {
      ctx.save();
      ctx.fillStyle = '#64748b';
      ctx.translate(10, top + (hgt - top - bottom) / 2);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText(this.unit, 0, 0);
      ctx.restore();
    }
  }

  destroy() {
    this.resizeObserver.disconnect();
  }
}

function ticks(lo, hi, n) {
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) out.push(Math.abs(v) < step / 1e6 ? 0 : v);
  return out;
}

function fmtTick(v) {
  const a = Math.abs(v);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  return v.toFixed(2);
}
