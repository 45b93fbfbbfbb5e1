// Tests of the state-machine panel's layout (fsm.js): which topics make a
// node, and the layered layout of a machine from the tables fsmnodes
// publishes.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { fsmNodes, layout } from '../static/js/fsm.js';

const edge = (from_state, to_state, guard = 'g') => ({ from_state, to_state, guard });

// The hexapod motion FSM (docs/fsm.md#motion).
const motion = {
  name: 'motion',
  initial_state: 'Idle',
  states: ['Idle', 'Sitting', 'Standing_up', 'Standing', 'Walking', 'Sitting_down'].map((name) => ({ name, max_dwell: 0 })),
  transitions: [
    edge('Idle', 'Sitting'), edge('Sitting', 'Standing_up'), edge('Sitting', 'Idle'), edge('Standing_up', 'Walking'),
    edge('Standing', 'Walking'), edge('Standing', 'Sitting_down'), edge('Walking', 'Standing'),
    edge('Walking', 'Sitting_down'), edge('Sitting_down', 'Sitting'),
  ],
};

test('nodes are the publishers of …/fsm/graph', () => {
  assert.deepEqual(fsmNodes(['/b/x/fsm/graph', '/a/fsm/transition', '/a/fsm/graph', '/fsm/graph', '/odom']), ['/', '/a', '/b/x']);
});

test('layers follow the distance from the initial state', () => {
  const { pos, width, height } = layout(motion);
  const layerOf = (n) => pos.get(n).layer;
  assert.equal(layerOf('Idle'), 0);
  assert.equal(layerOf('Sitting'), 1);
  assert.equal(layerOf('Standing_up'), 2);
  assert.equal(layerOf('Walking'), 3);
  assert.equal(layerOf('Standing'), 4);
  assert.equal(layerOf('Sitting_down'), 4);
  // Every state inside the drawing, none on top of another.
  const seen = new Set();
  for (const p of pos.values()) {
    assert.ok(p.x > 0 && p.x < width && p.y > 0 && p.y < height, JSON.stringify(p));
    const k = `${p.x},${p.y}`;
    assert.ok(!seen.has(k), `two states at ${k}`);
    seen.add(k);
  }
});

test('states not reached from the initial one go after the last layer', () => {
  const m = { ...motion, states: [...motion.states, { name: 'Unknown', max_dwell: 0 }] };
  assert.equal(layout(m).pos.get('Unknown').layer, 5);
});

test('a layer is ordered by its neighbours in the layer before', () => {
  // a → {b, c}; b → y, c → x: x sits next to c, y next to b.
  const m = {
    name: 'm', initial_state: 'a',
    states: ['a', 'b', 'c', 'x', 'y'].map((name) => ({ name, max_dwell: 0 })),
    transitions: [edge('a', 'b'), edge('a', 'c'), edge('b', 'y'), edge('c', 'x')],
  };
  const { pos } = layout(m);
  assert.ok(pos.get('b').row < pos.get('c').row);
  assert.ok(pos.get('y').row < pos.get('x').row, 'x and y cross');
});
