// A planar TF buffer for the map: the latest transform of every frame from
// tf2_msgs/TFMessage, reduced to (x, y, yaw), and lookups between frames of
// one tree. Good enough for drawing ground robots from above; it keeps no
// history and does not interpolate.

import { yawOf } from './ui.js';

const strip = (f) => (f || '').replace(/^\/+/, '');

/** Composes planar poses: a then b (b expressed in a's frame). */
export function compose(a, b) {
  const c = Math.cos(a.th);
  const s = Math.sin(a.th);
  return { x: a.x + c * b.x - s * b.y, y: a.y + s * b.x + c * b.y, th: a.th + b.th };
}

/** Inverse of a planar pose. */
export function invert(a) {
  const c = Math.cos(a.th);
  const s = Math.sin(a.th);
  return { x: -(c * a.x + s * a.y), y: -(-s * a.x + c * a.y), th: -a.th };
}

export class TfBuffer {
  constructor() {
    this.parent = new Map(); // child -> {parent, t: {x,y,th}}
  }

  /** Adds the transforms of a tf2_msgs/TFMessage. */
  add(msg) {
    for (const tr of msg.transforms || []) {
      const child = strip(tr.child_frame_id);
      const parent = strip(tr.header.frame_id);
      if (!child || !parent || child === parent) continue;
      const tl = tr.transform.translation;
      const t = { x: tl.x, y: tl.y, th: yawOf(tr.transform.rotation) };
      if (![t.x, t.y, t.th].every(Number.isFinite)) continue;
      this.parent.set(child, { parent, t });
    }
  }

  has(frame) {
    return this.parent.has(strip(frame));
  }

  // chain returns the root of frame and frame's pose in it.
  chain(frame) {
    let f = strip(frame);
    let pose = { x: 0, y: 0, th: 0 };
    const seen = new Set();
    while (this.parent.has(f) && !seen.has(f)) {
      seen.add(f);
      const { parent, t } = this.parent.get(f);
      pose = compose(t, pose);
      f = parent;
    }
    return { root: f, pose };
  }

  /**
   * Pose of frame source in frame target, or null when the two are not in
   * one tree.
   */
  lookup(target, source) {
    const a = this.chain(target);
    const b = this.chain(source);
    if (a.root !== b.root) return null;
    return compose(invert(a.pose), b.pose);
  }

  frames() {
    const out = new Set();
    for (const [c, { parent }] of this.parent) {
      out.add(c);
      out.add(parent);
    }
    return [...out].sort();
  }
}
