// Helpers for the oracle scripts (verify_parquet.mjs, verify_iceberg.mjs). Nothing here reads a
// file through geolake's code: it is only glue around the third-party readers (DuckDB,
// hyparquet, parquet-wasm, icebird, avsc) that check what geolake writes.
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';

const require = createRequire(import.meta.url);

/** Version string of an installed npm package (read from its package.json). */
export function pkgVersion(name) {
  try {
    return require(`${name}/package.json`).version;
  } catch {
    // packages whose "exports" hide package.json
    try {
      const fs = require('node:fs');
      const path = require('node:path');
      const p = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'node_modules', name, 'package.json');
      return JSON.parse(fs.readFileSync(p, 'utf8')).version;
    } catch { return null; }
  }
}

export function toHex(u8) {
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('hex');
}

/** JSON.stringify that survives BigInt, typed arrays, Buffers, Dates, Maps. */
export function toJSONSafe(value) {
  return JSON.parse(JSON.stringify(value, (k, v) => {
    if (typeof v === 'bigint') return v.toString();
    if (v && typeof v === 'object') {
      if (v.type === 'Buffer' && Array.isArray(v.data)) return Buffer.from(v.data).toString('hex');
      if (v instanceof Uint8Array) return toHex(v);
      if (ArrayBuffer.isView(v)) return Array.from(v, x => (typeof x === 'bigint' ? x.toString() : x));
      if (v instanceof Map) return Object.fromEntries(v);
    }
    if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
    return v;
  }));
}

export function printJSON(obj) {
  process.stdout.write(JSON.stringify(toJSONSafe(obj), null, 2) + '\n');
}

export function errMsg(e) {
  if (!e) return String(e);
  const msg = e.message ?? String(e);
  return e.cause?.message ? `${msg} (cause: ${e.cause.message})` : msg;
}

/** SQL string literal. */
export function sqlStr(s) {
  return `'${String(s).replaceAll("'", "''")}'`;
}

export function sqlIdent(s) {
  return `"${String(s).replaceAll('"', '""')}"`;
}

/** Open an in-memory DuckDB that never tries to download extensions. */
export async function openDuckDB() {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const inst = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  const conn = await inst.connect();
  const rows = async sql => (await conn.runAndReadAll(sql)).getRowObjectsJS();
  const rowsJson = async sql => (await conn.runAndReadAll(sql)).getRowObjectsJson();
  return { inst, conn, rows, rowsJson };
}

/**
 * Canonical string for one cell value, used to compare readers.
 * Returns undefined when the value's representation is reader-specific
 * (dates, decimals as objects, nested values...), so the column is not compared.
 */
export function canon(v) {
  if (v === null || v === undefined) return 'N';
  switch (typeof v) {
    case 'bigint': return 'i' + v.toString();
    case 'number':
      if (Number.isInteger(v) && Number.isSafeInteger(v) && !Object.is(v, -0)) return 'i' + v;
      return 'f' + (Object.is(v, -0) ? '-0' : String(v));
    case 'string': return 's' + v;
    case 'boolean': return 'b' + v;
    default:
      if (v instanceof Uint8Array) return 'x' + toHex(v);
      return undefined;
  }
}

/** Incremental per-column digest over canonical values. */
export class ColumnDigest {
  constructor() { this.h = createHash('sha256'); this.n = 0; this.unsupported = null; }
  add(v) {
    if (this.unsupported) { this.n++; return; }
    const c = canon(v);
    if (c === undefined) {
      this.unsupported = v?.constructor?.name ?? typeof v;
    } else {
      this.h.update(c); this.h.update('\u0000');
    }
    this.n++;
  }
  result() {
    if (this.unsupported) return { values: this.n, digest: null, unsupported: this.unsupported };
    return { values: this.n, digest: this.h.digest('hex').slice(0, 16) };
  }
}

/**
 * JSON parser that keeps integers outside the JS safe range as BigInt
 * (Iceberg snapshot ids are 64-bit and lose precision with JSON.parse).
 */
export function parseJSONBig(text) {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  const fail = m => { throw new SyntaxError(`${m} at offset ${i}`); };
  function value() {
    ws();
    const c = text[i];
    if (c === '{') {
      i++; const o = {}; ws();
      if (text[i] === '}') { i++; return o; }
      for (;;) {
        ws(); if (text[i] !== '"') fail('expected key');
        const k = str(); ws(); if (text[i++] !== ':') fail('expected :');
        o[k] = value(); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return o; }
        fail('expected , or }');
      }
    }
    if (c === '[') {
      i++; const a = []; ws();
      if (text[i] === ']') { i++; return a; }
      for (;;) {
        a.push(value()); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return a; }
        fail('expected , or ]');
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) { i += 4; return true; }
    if (text.startsWith('false', i)) { i += 5; return false; }
    if (text.startsWith('null', i)) { i += 4; return null; }
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail('unexpected token');
    i += m[0].length;
    if (!m[2] && !m[3]) {
      const n = Number(m[0]);
      return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    }
    return Number(m[0]);
  }
  function str() {
    // find closing quote honoring escapes, then let JSON.parse decode the escapes
    const start = i; i++;
    while (i < text.length) {
      const ch = text[i];
      if (ch === '\\') { i += 2; continue; }
      if (ch === '"') { i++; return JSON.parse(text.slice(start, i)); }
      i++;
    }
    fail('unterminated string');
  }
  const v = value(); ws();
  if (i !== text.length) fail('trailing data');
  return v;
}

/** Parse argv: positional args + --flag [value] options. */
export function parseArgs(argv, spec) {
  const out = { _: [] };
  for (const [k, d] of Object.entries(spec)) out[k] = d.default ?? (d.multi ? [] : undefined);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const name = a.slice(2);
      const d = spec[name];
      if (!d) throw new Error(`unknown option ${a}`);
      if (d.flag) { out[name] = true; continue; }
      const v = argv[++i];
      if (v === undefined) throw new Error(`option ${a} needs a value`);
      const val = d.number ? Number(v) : v;
      if (d.multi) out[name].push(val); else out[name] = val;
    } else out._.push(a);
  }
  return out;
}
