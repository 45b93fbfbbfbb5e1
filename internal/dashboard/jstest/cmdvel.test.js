// Tests of the velocity commands the teleoperation pad publishes (cmdvel.js)
// and of the fallback schemas it advertises them with: encoded with the
// fallback schema, the pad's messages are the Go encoder's bytes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { parseSchema } from '../static/js/ros2msg.js';
import { encode } from '../static/js/cdr.js';
import { FALLBACK } from '../static/js/schemas.js';
import { cmdVelMessage, cmdVelType, TWIST, TWIST_STAMPED } from '../static/js/cmdvel.js';

const fixturesPath = process.env.DASHBOARD_CDR_FIXTURES;
const fixtures = fixturesPath ? JSON.parse(readFileSync(fixturesPath, 'utf8')) : [];
const fixture = (name) => fixtures.find((f) => f.name === name);

function hex(b) {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

const twist = { linear: { x: 0.3, y: 0, z: 0 }, angular: { x: 0, y: 0, z: -0.25 } };

test('the type follows enable_stamped_cmd_vel', () => {
  assert.equal(cmdVelType(false), TWIST);
  assert.equal(cmdVelType(true), TWIST_STAMPED);
});

test('unstamped: the twist itself', () => {
  assert.equal(cmdVelMessage(twist, false, 1700000000123), twist);
});

test('stamped: sec and nanosec of the time it goes out, frame base_link', () => {
  for (const [ms, sec, nanosec] of [
    [1700000000123, 1700000000, 123000000],
    [1700000000123.9, 1700000000, 123000000],
    [1700000000000, 1700000000, 0],
    [999, 0, 999000000],
    [-5, 0, 0],
  ]) {
    const m = cmdVelMessage(twist, true, ms);
    assert.deepEqual(m.header, { stamp: { sec, nanosec }, frame_id: 'base_link' }, `at ${ms} ms`);
    assert.equal(m.twist, twist);
  }
  assert.equal(cmdVelMessage(twist, true, 0, 'teleop').header.frame_id, 'teleop');
});

for (const [type, name] of [[TWIST, 'Twist'], [TWIST_STAMPED, 'TwistStamped']]) {
  test(`the fallback schema of ${type} encodes the pad's message as Go does`, () => {
    const fx = fixture(name);
    assert.ok(fx, `no Go fixture ${name}: run go test ./internal/dashboard -run JavaScript`);
    assert.equal(fx.schemaName, type);
    const msg = cmdVelMessage(twist, type === TWIST_STAMPED, 1700000000123);
    assert.equal(hex(encode(parseSchema(FALLBACK[type], type), msg)), fx.cdr);
  });
}
