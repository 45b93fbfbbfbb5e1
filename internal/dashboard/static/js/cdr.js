// XCDR1 ("classic CDR") decoder and encoder driven by a parsed ros2msg
// schema (see ros2msg.js), for the payloads ROS 2 (rmw_cyclonedds_cpp)
// puts on the wire: a 4-byte encapsulation header (00 01 00 00 for little
// endian, 00 00 00 00 for big endian), then the body, each primitive aligned
// to its own size relative to the first byte after the header.
//
// Values: integers up to 32 bits and floats are Numbers; int64/uint64 are
// Numbers when they are safe integers and BigInts otherwise; strings are
// strings; arrays of 8-, 16- and 32-bit integers and of floats decode to
// typed arrays (Int8Array, Float32Array, ...), other arrays to Arrays. An
// empty message is one uint8, as rosidl generates it.

import { PRIMITIVES } from './ros2msg.js';

/** Error thrown for a payload that does not match its schema. */
export class CdrError extends Error {
  constructor(msg) {
    super(msg);
    this.name = 'CdrError';
  }
}

const HEADER = 4;
const utf8dec = new TextDecoder('utf-8', { fatal: false });
const utf8enc = new TextEncoder();

const TYPED = {
  int8: Int8Array, uint8: Uint8Array, byte: Uint8Array, char: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  float32: Float32Array, float64: Float64Array,
};
const littleHost = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

class Reader {
  constructor(bytes) {
    if (!(bytes instanceof Uint8Array)) bytes = new Uint8Array(bytes);
    if (bytes.length < HEADER) throw new CdrError(`payload of ${bytes.length} bytes has no encapsulation header`);
    if (bytes[0] !== 0 || bytes[1] > 1) throw new CdrError(`unsupported encapsulation ${bytes[0]} ${bytes[1]}`);
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.le = bytes[1] === 1;
    this.off = HEADER;
  }

  take(n, align) {
    if (align > 1) {
      const r = (this.off - HEADER) % align;
      if (r !== 0) this.off += align - r;
    }
    if (n < 0 || this.off + n > this.bytes.length) {
      throw new CdrError(`payload too short: need ${n} bytes at body offset ${this.off - HEADER}`);
    }
    const at = this.off;
    this.off += n;
    return at;
  }

  prim(t) {
    const v = this.view;
    switch (t) {
      case 'bool': return v.getUint8(this.take(1, 1)) !== 0;
      case 'byte': case 'char': case 'uint8': return v.getUint8(this.take(1, 1));
      case 'int8': return v.getInt8(this.take(1, 1));
      case 'int16': return v.getInt16(this.take(2, 2), this.le);
      case 'uint16': return v.getUint16(this.take(2, 2), this.le);
      case 'int32': return v.getInt32(this.take(4, 4), this.le);
      case 'uint32': return v.getUint32(this.take(4, 4), this.le);
      case 'float32': return v.getFloat32(this.take(4, 4), this.le);
      case 'float64': return v.getFloat64(this.take(8, 8), this.le);
      case 'int64': return small(v.getBigInt64(this.take(8, 8), this.le));
      case 'uint64': return small(v.getBigUint64(this.take(8, 8), this.le));
      case 'string': return this.string();
      case 'wstring': return this.wstring();
      default: throw new CdrError(`unknown primitive ${t}`);
    }
  }

  count(minSize) {
    const n = this.view.getUint32(this.take(4, 4), this.le);
    if (n * Math.max(minSize, 1) > this.bytes.length - this.off) {
      throw new CdrError(`sequence of ${n} elements does not fit in the ${this.bytes.length - this.off} bytes left`);
    }
    return n;
  }

  string() {
    const n = this.count(1);
    if (n === 0) return '';
    const at = this.take(n, 1);
    if (this.bytes[at + n - 1] !== 0) throw new CdrError('string is not NUL terminated');
    return utf8dec.decode(this.bytes.subarray(at, at + n - 1));
  }

  wstring() {
    const n = this.count(4);
    const units = new Array(n);
    for (let i = 0; i < n; i++) units[i] = this.view.getUint32(this.take(4, 4), this.le) & 0xffff;
    return String.fromCharCode(...units);
  }

  // typedArray reads n elements of a fixed-size primitive as a typed array.
  typedArray(t, n) {
    const size = PRIMITIVES[t];
    const Ctor = TYPED[t];
    if (n === 0) return new Ctor(0); // no alignment for an empty sequence
    const at = this.take(n * size, size);
    if (this.le === littleHost) {
      return new Ctor(this.bytes.slice(at, at + n * size).buffer);
    }
    const out = new Ctor(n);
    this.off = at;
    for (let i = 0; i < n; i++) out[i] = this.prim(t);
    return out;
  }
}

function small(b) {
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

function readStruct(r, schema, key) {
  const def = schema.types.get(key);
  if (!def) throw new CdrError(`type ${key} is not in the schema`);
  const out = {};
  if (def.fields.length === 0) {
    r.prim('uint8');
    return out;
  }
  for (const f of def.fields) {
    if (!f.isArray) {
      out[f.name] = f.isComplex ? readStruct(r, schema, f.type) : readPrim(r, f);
      continue;
    }
    const minSize = f.isComplex ? 1 : PRIMITIVES[f.type] || 4;
    let n;
    if (f.arrayLength !== undefined) {
      n = f.arrayLength;
      if (n * minSize > r.bytes.length - r.off) {
        throw new CdrError(`${key}.${f.name}: ${n} elements do not fit in the ${r.bytes.length - r.off} bytes left`);
      }
    } else {
      n = r.count(minSize);
    }
    if (f.arrayBound !== undefined && n > f.arrayBound) {
      throw new CdrError(`${key}.${f.name}: ${n} elements exceed the bound ${f.arrayBound}`);
    }
    if (!f.isComplex && TYPED[f.type]) {
      out[f.name] = r.typedArray(f.type, n);
      continue;
    }
    const arr = new Array(n);
    for (let i = 0; i < n; i++) arr[i] = f.isComplex ? readStruct(r, schema, f.type) : readPrim(r, f);
    out[f.name] = arr;
  }
  return out;
}

function readPrim(r, f) {
  const v = r.prim(f.type);
  if (f.stringBound !== undefined && v.length > f.stringBound) {
    throw new CdrError(`${f.name}: string longer than its bound ${f.stringBound}`);
  }
  return v;
}

/**
 * Decodes a CDR payload (header included) of the schema's root type.
 * @param {{root: string, types: Map}} schema from parseSchema
 * @param {Uint8Array|ArrayBuffer} bytes
 */
export function decode(schema, bytes) {
  const r = new Reader(bytes);
  return readStruct(r, schema, schema.root);
}

class Writer {
  constructor() {
    this.buf = new Uint8Array(256);
    this.view = new DataView(this.buf.buffer);
    this.len = HEADER;
    this.buf[1] = 1; // CDR_LE
  }

  reserve(n, align) {
    if (align > 1) {
      const r = (this.len - HEADER) % align;
      if (r !== 0) n += align - r;
    }
    if (this.len + n > this.buf.length) {
      let cap = this.buf.length * 2;
      while (cap < this.len + n) cap *= 2;
      const b = new Uint8Array(cap);
      b.set(this.buf.subarray(0, this.len));
      this.buf = b;
      this.view = new DataView(b.buffer);
    }
    if (align > 1) {
      const r = (this.len - HEADER) % align;
      if (r !== 0) this.len += align - r; // padding bytes are already zero
    }
    const at = this.len;
    return at;
  }

  put(t, v, path) {
    switch (t) {
      case 'bool': {
        if (typeof v !== 'boolean' && v !== 0 && v !== 1) throw new CdrError(`${path}: bool needs true or false, got ${String(v)}`);
        const at = this.reserve(1, 1);
        this.view.setUint8(at, v ? 1 : 0);
        this.len = at + 1;
        return;
      }
      case 'byte': case 'char': case 'uint8': case 'int8':
      case 'int16': case 'uint16': case 'int32': case 'uint32': {
        const n = checkInt(t, v, path);
        const size = PRIMITIVES[t];
        const at = this.reserve(size, size);
        if (size === 1) this.view.setUint8(at, n & 0xff);
        else if (size === 2) this.view.setUint16(at, n & 0xffff, true);
        else this.view.setUint32(at, n >>> 0, true);
        this.len = at + size;
        return;
      }
      case 'int64': case 'uint64': {
        const b = checkInt64(t, v, path);
        const at = this.reserve(8, 8);
        this.view.setBigUint64(at, BigInt.asUintN(64, b), true);
        this.len = at + 8;
        return;
      }
      case 'float32': case 'float64': {
        if (typeof v !== 'number') throw new CdrError(`${path}: ${t} needs a number, got ${typeof v}`);
        const size = PRIMITIVES[t];
        const at = this.reserve(size, size);
        if (size === 4) this.view.setFloat32(at, v, true);
        else this.view.setFloat64(at, v, true);
        this.len = at + size;
        return;
      }
      case 'string': {
        if (typeof v !== 'string') throw new CdrError(`${path}: string needs a string, got ${typeof v}`);
        const b = utf8enc.encode(v);
        this.put('uint32', b.length + 1, path);
        const at = this.reserve(b.length + 1, 1);
        this.buf.set(b, at);
        this.buf[at + b.length] = 0;
        this.len = at + b.length + 1;
        return;
      }
      case 'wstring': {
        if (typeof v !== 'string') throw new CdrError(`${path}: wstring needs a string, got ${typeof v}`);
        this.put('uint32', v.length, path);
        for (let i = 0; i < v.length; i++) this.put('uint32', v.charCodeAt(i), path);
        return;
      }
      default:
        throw new CdrError(`unknown primitive ${t}`);
    }
  }

  bytes() {
    // Pad to a multiple of 4, as rmw_cyclonedds_cpp does.
    const n = (this.len + 3) & ~3;
    this.reserve(n - this.len, 1);
    return this.buf.slice(0, n);
  }
}

const RANGES = {
  byte: [0, 255], char: [0, 255], uint8: [0, 255], int8: [-128, 127],
  int16: [-32768, 32767], uint16: [0, 65535],
  int32: [-2147483648, 2147483647], uint32: [0, 4294967295],
};

function checkInt(t, v, path) {
  if (typeof v === 'boolean') v = v ? 1 : 0;
  if (typeof v === 'bigint') v = Number(v);
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new CdrError(`${path}: ${t} needs an integer, got ${String(v)}`);
  const [lo, hi] = RANGES[t];
  if (v < lo || v > hi) throw new CdrError(`${path}: ${v} is out of range for ${t}`);
  return v;
}

function checkInt64(t, v, path) {
  let b;
  if (typeof v === 'bigint') b = v;
  else if (typeof v === 'number' && Number.isInteger(v)) b = BigInt(v);
  else throw new CdrError(`${path}: ${t} needs an integer, got ${String(v)}`);
  const lo = t === 'int64' ? -(1n << 63n) : 0n;
  const hi = t === 'int64' ? (1n << 63n) - 1n : (1n << 64n) - 1n;
  if (b < lo || b > hi) throw new CdrError(`${path}: ${v} is out of range for ${t}`);
  return b;
}

function zero(t) {
  if (t === 'bool') return false;
  if (t === 'string' || t === 'wstring') return '';
  return 0;
}

function writeStruct(w, schema, key, obj, path) {
  const def = schema.types.get(key);
  if (!def) throw new CdrError(`type ${key} is not in the schema`);
  if (obj !== undefined && (obj === null || typeof obj !== 'object')) {
    throw new CdrError(`${path}: ${key} needs an object, got ${String(obj)}`);
  }
  obj = obj || {};
  if (def.fields.length === 0) {
    w.put('uint8', 0, path);
    return;
  }
  for (const f of def.fields) {
    const p = path ? `${path}.${f.name}` : f.name;
    const v = obj[f.name];
    if (!f.isArray) {
      if (f.isComplex) writeStruct(w, schema, f.type, v, p);
      else writePrim(w, f, v === undefined ? zero(f.type) : v, p);
      continue;
    }
    const arr = v === undefined ? [] : v;
    if (typeof arr.length !== 'number' || typeof arr === 'string') throw new CdrError(`${p}: needs an array`);
    let n = arr.length;
    if (f.arrayLength !== undefined) {
      if (v !== undefined && n !== f.arrayLength) {
        throw new CdrError(`${p}: needs exactly ${f.arrayLength} elements, got ${n}`);
      }
      n = f.arrayLength;
    } else {
      if (f.arrayBound !== undefined && n > f.arrayBound) {
        throw new CdrError(`${p}: ${n} elements exceed the bound ${f.arrayBound}`);
      }
      w.put('uint32', n, p);
    }
    for (let i = 0; i < n; i++) {
      const e = arr[i];
      if (f.isComplex) writeStruct(w, schema, f.type, e, `${p}[${i}]`);
      else writePrim(w, f, e === undefined ? zero(f.type) : e, `${p}[${i}]`);
    }
  }
}

function writePrim(w, f, v, path) {
  if (f.stringBound !== undefined && typeof v === 'string' && v.length > f.stringBound) {
    throw new CdrError(`${path}: string longer than its bound ${f.stringBound}`);
  }
  w.put(f.type, v, path);
}

/**
 * Encodes obj as a little-endian CDR payload (header included) of the
 * schema's root type. Missing fields take their zero value; wrong types,
 * out-of-range integers, wrong fixed-array lengths and exceeded bounds throw
 * a CdrError naming the field.
 */
export function encode(schema, obj) {
  const w = new Writer();
  writeStruct(w, schema, schema.root, obj, '');
  return w.bytes();
}
