// Parser for ROS 2 message definitions in the "ros2msg" schema encoding the
// Foxglove WebSocket protocol uses: the root type's .msg text, then, for each
// type it references, a line of "=" characters, a line "MSG: pkg/Name" and
// that type's text.
//
// parseSchema returns a Schema: a map from type key ("pkg/Name") to its
// definition, and the key of the root type. Field types are resolved to
// primitives or to keys of the map, so the CDR codec never looks at names
// again.

/** Primitive types and their CDR size in bytes (0 for strings). */
export const PRIMITIVES = {
  bool: 1, byte: 1, char: 1, int8: 1, uint8: 1,
  int16: 2, uint16: 2, int32: 4, uint32: 4, float32: 4,
  int64: 8, uint64: 8, float64: 8,
  string: 0, wstring: 0,
};

/** Error thrown for a definition the parser cannot understand. */
export class SchemaError extends Error {
  constructor(msg) {
    super(msg);
    this.name = 'SchemaError';
  }
}

// typeKey turns "pkg/Name", "pkg/msg/Name" or "pkg/srv/Name_Request" into
// "pkg/Name"; an unqualified name takes the package of the type that
// mentions it (pkg), except Header, which is std_msgs/Header.
export function typeKey(name, pkg) {
  const parts = name.split('/').filter((s) => s !== '');
  if (parts.length === 1) {
    if (parts[0] === 'Header') return 'std_msgs/Header';
    if (!pkg) throw new SchemaError(`type ${name} has no package`);
    return `${pkg}/${parts[0]}`;
  }
  if (parts.length === 2) return `${parts[0]}/${parts[1]}`;
  if (parts.length === 3) return `${parts[0]}/${parts[2]}`;
  throw new SchemaError(`bad type name ${JSON.stringify(name)}`);
}

const NAME_RE = /^[A-Za-z][A-Za-z0-9_]*$/;

// parseType parses one type token, e.g. "float64", "string<=10",
// "int32[]", "geometry_msgs/Point[3]", "uint8[<=16]".
function parseType(token, pkg) {
  const f = { isArray: false, arrayLength: undefined, arrayBound: undefined, stringBound: undefined };
  let base = token;
  const br = token.indexOf('[');
  if (br >= 0) {
    if (!token.endsWith(']')) throw new SchemaError(`bad array type ${token}`);
    const inner = token.slice(br + 1, -1);
    base = token.slice(0, br);
    f.isArray = true;
    if (inner.startsWith('<=')) {
      f.arrayBound = parseCount(inner.slice(2), token);
    } else if (inner !== '') {
      f.arrayLength = parseCount(inner, token);
    }
  }
  const sb = base.indexOf('<=');
  if (sb >= 0) {
    const b = base.slice(0, sb);
    if (b !== 'string' && b !== 'wstring') throw new SchemaError(`only strings take a bound: ${token}`);
    f.stringBound = parseCount(base.slice(sb + 2), token);
    base = b;
  }
  if (base in PRIMITIVES) {
    f.type = base;
    f.isComplex = false;
  } else {
    f.type = typeKey(base, pkg);
    f.isComplex = true;
  }
  return f;
}

function parseCount(s, token) {
  if (!/^[0-9]+$/.test(s)) throw new SchemaError(`bad size in ${token}`);
  const n = Number(s);
  if (n > 0x7fffffff) throw new SchemaError(`size too large in ${token}`);
  return n;
}

function stripComment(s) {
  const i = s.indexOf('#');
  return (i >= 0 ? s.slice(0, i) : s).trim();
}

// parseConstantValue converts the text of a constant to a JS value.
function parseConstantValue(type, text) {
  if (type === 'string' || type === 'wstring') {
    let v = text.trim();
    if (v.length >= 2 && (v[0] === '"' || v[0] === "'") && v[v.length - 1] === v[0]) v = v.slice(1, -1);
    return v;
  }
  const v = stripComment(text);
  if (type === 'bool') return v === 'true' || v === 'True' || v === '1';
  if (type === 'int64' || type === 'uint64') {
    const b = BigInt(v);
    return Number.isSafeInteger(Number(b)) ? Number(b) : b;
  }
  const n = Number(v);
  if (Number.isNaN(n)) throw new SchemaError(`bad constant value ${v} for ${type}`);
  return n;
}

// parseDefinition parses the text of one type.
function parseDefinition(name, text, pkg) {
  const def = { name, fields: [], constants: [] };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\S+)\s+([A-Za-z][A-Za-z0-9_]*)\s*=(.*)$/.exec(line);
    if (m) {
      const t = m[1].replace(/<=.*$/, '');
      if (!(t in PRIMITIVES)) throw new SchemaError(`${name}: constant ${m[2]} of non-primitive type ${m[1]}`);
      def.constants.push({ name: m[2], type: t, value: parseConstantValue(t, m[3]) });
      continue;
    }
    const parts = stripComment(line).split(/\s+/);
    if (parts.length < 2) throw new SchemaError(`${name}: cannot parse line ${JSON.stringify(line)}`);
    if (!NAME_RE.test(parts[1])) throw new SchemaError(`${name}: bad field name ${parts[1]}`);
    const f = parseType(parts[0], pkg);
    f.name = parts[1];
    def.fields.push(f);
  }
  return def;
}

/**
 * Parses a concatenated ros2msg schema.
 * @param {string} text the schema as advertised
 * @param {string} rootName the schema name, e.g. "std_msgs/msg/String"
 * @returns {{root: string, types: Map<string, {name: string, fields: object[], constants: object[]}>}}
 */
export function parseSchema(text, rootName) {
  const types = new Map();
  const root = typeKey(rootName);
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let name = root;
  let buf = [];
  let expectHeader = false;
  const flush = () => {
    if (name === null) return;
    if (!types.has(name)) types.set(name, parseDefinition(name, buf.join('\n'), name.split('/')[0]));
    buf = [];
  };
  for (const line of lines) {
    if (/^={3,}\s*$/.test(line)) {
      flush();
      name = null;
      expectHeader = true;
      continue;
    }
    if (expectHeader) {
      if (line.trim() === '') continue;
      const m = /^MSG:\s*(\S+)\s*$/.exec(line.trim());
      if (!m) throw new SchemaError(`expected "MSG: <type>" after a separator, got ${JSON.stringify(line)}`);
      name = typeKey(m[1]);
      expectHeader = false;
      continue;
    }
    buf.push(line);
  }
  flush();
  // Every referenced type must be defined.
  for (const def of types.values()) {
    for (const f of def.fields) {
      if (f.isComplex && !types.has(f.type)) {
        throw new SchemaError(`${def.name}.${f.name}: type ${f.type} is not defined in the schema`);
      }
    }
  }
  // Message types cannot contain themselves (rosidl forbids it); a schema
  // that does would send the codec into endless recursion.
  const state = new Map(); // key -> 1 visiting, 2 done
  const visit = (key, path) => {
    if (state.get(key) === 2) return;
    if (state.get(key) === 1) throw new SchemaError(`recursive type: ${[...path, key].join(' -> ')}`);
    state.set(key, 1);
    for (const f of types.get(key).fields) if (f.isComplex) visit(f.type, [...path, key]);
    state.set(key, 2);
  };
  for (const key of types.keys()) visit(key, []);
  return { root, types };
}

/**
 * Returns a message of the root type (or of type key) with every field at
 * its zero value: 0, false, "", empty arrays, fixed arrays filled.
 */
export function zeroValue(schema, key = schema.root) {
  const def = schema.types.get(key);
  const out = {};
  for (const f of def.fields) {
    const one = () => (f.isComplex ? zeroValue(schema, f.type) : zeroPrimitive(f.type));
    if (f.isArray) {
      out[f.name] = f.arrayLength !== undefined ? Array.from({ length: f.arrayLength }, one) : [];
    } else {
      out[f.name] = one();
    }
  }
  return out;
}

function zeroPrimitive(t) {
  if (t === 'bool') return false;
  if (t === 'string' || t === 'wstring') return '';
  return 0;
}
