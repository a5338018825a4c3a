// Compares `geolake cat --format jsonl` with DuckDB on the parquet-testing corpus (used by
// parquet_corpus_vs_duckdb.sh).
//
//   node parquet_corpus_compare.mjs ORACLES_DIR GEOLAKE_BIN CORPUS_DIR
//
// data/: every file DuckDB reads must print, row by row, the values DuckDB returns; a file
// DuckDB refuses is listed as skipped with DuckDB's reason; the two files with corrupt page CRCs
// must be refused (exit 6). bad_data/: every file must be
// refused by geolake (non-zero exit, one stderr line naming the file, within the time limit),
// unless DuckDB reads it, in which case geolake must print DuckDB's values instead.
// Prints one line per file and a summary; exits 1 on any failure.
//
// Normalized, because the two print the same value differently (and only these):
// - numbers are compared as numbers (decimal text "1.50" equals 1.5; integers exactly);
// - NaN and infinities: JSON has none, geolake prints null;
// - timestamps: "T"/" " and a "Z"/"+00" suffix, trailing fraction zeros, and fractions beyond
//   microseconds when one side has only microseconds (DuckDB reads INT96 as microseconds);
// - years before 1: DuckDB's "Y-MM-DD (BC)" is read as ISO 8601 year 1 - Y (geolake's form);
// - binary: DuckDB BLOBs become lower-case hex, as geolake prints bytes that are not text;
// - map keys: JSON object keys are strings, so DuckDB's keys are compared as text;
// - geometry: DuckDB's GEOMETRY (WKB) is turned into WKT here and compared with geolake's WKT
//   token by token, numbers as numbers.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [oraclesDir, geolakeBin, corpusDir] = process.argv.slice(2);
if (!corpusDir) {
  console.error('usage: parquet_corpus_compare.mjs ORACLES_DIR GEOLAKE_BIN CORPUS_DIR');
  process.exit(2);
}
const api = await import(path.resolve(oraclesDir, 'node_modules/@duckdb/node-api/lib/index.js'));
const inst = await api.DuckDBInstance.create(':memory:', {
  threads: '1',
  autoinstall_known_extensions: 'false',
  autoload_known_extensions: 'false',
});
const conn = await inst.connect();

// Files not attempted, with the reason.
const notAttempted = {
  'large_string_map.brotli.parquet':
    'two strings of about 1 GiB each: DuckDB needs more than 8 GiB to read it',
};
// Files geolake is known to print wrongly: still compared; a mismatch is reported as KNOWN
// (not a failure), a match as a reminder to drop the entry. None at present.
const knownDefects = {};
// Values DuckDB itself misreads, where geolake prints what the file holds: the exact first
// difference expected. Anything else differing, or this value printed otherwise, fails.
const duckdbMisreads = {
  'int96_from_spark.parquet': {
    // Row 5 is the file's last row and `a` its only column, so nothing is left uncompared.
    problem: 'row 5 a: geolake "-294554-12-13T14:58:10.448384000", ' +
             'DuckDB "226414-01-07 (BC) 22:21:39.416064"',
    why: 'INT96 julian day -105862232 with -32509551616000 ns is in 294555 BC, beyond int64 ' +
         'microseconds; DuckDB takes the day as unsigned and its microseconds wrap',
  },
};
// Files whose page CRCs do not match their pages (the corpus's own description): DuckDB reads
// them without checking, geolake verifies every page CRC it finds and must refuse them, exit 6
// (corrupt data), naming the file and the CRC.
const corruptChecksum = new Set([
  'datapage_v1-corrupt-checksum.parquet',
  'rle-dict-uncompressed-corrupt-checksum.parquet',
]);
const kTimeoutMs = 20000;

// ---------------------------------------------------------------------------------------------
// JSON with numbers kept as their text: {num: "1.50"}.

function parseJsonKeepingNumbers(text) {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++; };
  const value = () => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj = {};
      ws();
      if (text[i] === '}') { i++; return obj; }
      for (;;) {
        ws();
        const key = str();
        ws();
        if (text[i++] !== ':') throw new Error(`expected ':' at ${i}`);
        obj[key] = value();
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] !== '}') throw new Error(`expected '}' at ${i}`);
        return obj;
      }
    }
    if (c === '[') {
      i++;
      const arr = [];
      ws();
      if (text[i] === ']') { i++; return arr; }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] !== ']') throw new Error(`expected ']' at ${i}`);
        return arr;
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) { i += 4; return true; }
    if (text.startsWith('false', i)) { i += 5; return false; }
    if (text.startsWith('null', i)) { i += 4; return null; }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) throw new Error(`unexpected '${c}' at ${i}`);
    i += m[0].length;
    return { num: m[0] };
  };
  const str = () => {
    const start = i;
    if (text[i] !== '"') throw new Error(`expected a string at ${i}`);
    i++;
    while (text[i] !== '"') {
      if (i >= text.length) throw new Error('unterminated string');
      if (text[i] === '\\') i++;
      i++;
    }
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const v = value();
  ws();
  if (i !== text.length) throw new Error(`trailing text at ${i}`);
  return v;
}

// ---------------------------------------------------------------------------------------------
// DuckDB values in the same shape.

const hex = bytes => Buffer.from(bytes).toString('hex');

// WKT of ISO WKB (DuckDB returns GEOMETRY as WKB; geolake prints geometry columns as WKT).
// Points with only NaN coordinates are EMPTY.
function wkbToWkt(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  const names = ['', 'POINT', 'LINESTRING', 'POLYGON', 'MULTIPOINT', 'MULTILINESTRING',
                 'MULTIPOLYGON', 'GEOMETRYCOLLECTION'];
  const geom = () => {
    const le = view.getUint8(pos++) === 1;
    const code = view.getUint32(pos, le); pos += 4;
    const base = code % 1000, dims = 2 + (code >= 1000 && code < 2000 ? 1 : 0) +
      (code >= 2000 && code < 3000 ? 1 : 0) + (code >= 3000 ? 2 : 0);
    const suffix = code >= 3000 ? ' ZM' : code >= 2000 ? ' M' : code >= 1000 ? ' Z' : '';
    const u32 = () => { const v = view.getUint32(pos, le); pos += 4; return v; };
    const coord = () => {
      const c = [];
      for (let d = 0; d < dims; d++) { c.push(view.getFloat64(pos, le)); pos += 8; }
      return c;
    };
    const text = c => c.map(String).join(' ');
    const seq = () => { const n = u32(); const out = []; for (let k = 0; k < n; k++) out.push(text(coord())); return out; };
    const name = names[base] + suffix;
    if (base === 1) {
      const c = coord();
      return c.every(Number.isNaN) ? `${name} EMPTY` : `${name} (${text(c)})`;
    }
    if (base === 2) { const s = seq(); return s.length ? `${name} (${s.join(', ')})` : `${name} EMPTY`; }
    if (base === 3) {
      const n = u32(); const rings = [];
      for (let k = 0; k < n; k++) rings.push(`(${seq().join(', ')})`);
      return n ? `${name} (${rings.join(', ')})` : `${name} EMPTY`;
    }
    const n = u32(); const parts = [];
    for (let k = 0; k < n; k++) {
      const part = geom();
      parts.push(base === 7 ? part : part.slice(part.indexOf('(')));
    }
    return n ? `${name} (${parts.join(', ')})` : `${name} EMPTY`;
  };
  return geom();
}

// WKT texts equal token by token, numbers compared as numbers.
function sameWkt(a, b) {
  const tokens = s => s.replace(/([(),])/g, ' $1 ').trim().split(/\s+/);
  const ta = tokens(a), tb = tokens(b);
  if (ta.length !== tb.length) return false;
  const isNaN = t => t.toLowerCase() === 'nan';
  return ta.every((t, k) => t === tb[k] || (isNaN(t) && isNaN(tb[k])) ||
                            (!Number.isNaN(Number(t)) && Number(t) === Number(tb[k])));
}

function fromDuck(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return { num: v.toString() };
  if (typeof v === 'number') return Number.isFinite(v) ? { num: String(v) } : null;
  if (v instanceof api.DuckDBBlobValue) return hex(v.bytes);
  if (v instanceof api.DuckDBGeometryValue) return { wkt: wkbToWkt(v.bytes) };
  if (v instanceof api.DuckDBListValue || v instanceof api.DuckDBArrayValue) {
    return v.items.map(fromDuck);
  }
  if (v instanceof api.DuckDBStructValue) {
    const out = {};
    for (const [k, x] of Object.entries(v.entries)) out[k] = fromDuck(x);
    return out;
  }
  if (v instanceof api.DuckDBMapValue) {
    const out = {};
    for (const { key, value } of v.entries) {
      const k = fromDuck(key);
      out[k !== null && typeof k === 'object' ? k.num : String(k)] = fromDuck(value);
    }
    return out;
  }
  if (v instanceof api.DuckDBDecimalValue) return { num: v.toString() };
  return v.toString();  // dates, times, timestamps, UUIDs, intervals: their text
}

// ---------------------------------------------------------------------------------------------
// Comparison.

function sameNumber(a, b) {
  if (a === b) return true;
  if (/^-?\d+$/.test(a) && /^-?\d+$/.test(b)) return BigInt(a) === BigInt(b);
  const x = Number(a), y = Number(b);
  if (x === y) return true;
  // Decimals beyond double precision: compare the digits without trailing zeros.
  const trim = s => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  return trim(a) === trim(b);
}

// DuckDB prints years before 1 as "Y-MM-DD (BC)"; geolake as ISO 8601 (astronomical) years,
// where Y BC is year 1 - Y: "0769-02-04 (BC)" is "-0768-02-04".
function isoYear(text) {
  const m = /^(\d+)(-\d\d-\d\d) \(BC\)/.exec(text);
  if (!m) return text;
  const year = 1n - BigInt(m[1]);
  const digits = (year < 0n ? -year : year).toString().padStart(4, '0');
  return (year < 0n ? '-' : '') + digits + m[2] + text.slice(m[0].length);
}

const kTimestamp = /^(-?\d{4,}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]00(:?00)?)?$/;
function sameText(a, b) {
  a = isoYear(a);
  b = isoYear(b);
  if (a === b) return true;
  const ma = kTimestamp.exec(a), mb = kTimestamp.exec(b);
  if (!ma || !mb) return false;
  let fa = (ma[3] || '.').slice(1), fb = (mb[3] || '.').slice(1);
  if (Math.min(fa.length, fb.length) <= 6 && Math.max(fa.length, fb.length) > 6) {
    fa = fa.slice(0, 6);
    fb = fb.slice(0, 6);
  }
  fa = fa.replace(/0+$/, '');
  fb = fb.replace(/0+$/, '');
  return ma[1] === mb[1] && ma[2] === mb[2] && fa === fb;
}

// Returns null when equal, else a description of the first difference.
function diff(ours, duck, where) {
  if (ours === null || duck === null) {
    return ours === duck ? null : `${where}: geolake ${show(ours)}, DuckDB ${show(duck)}`;
  }
  if (Array.isArray(duck)) {
    if (!Array.isArray(ours) || ours.length !== duck.length) {
      return `${where}: geolake ${show(ours)}, DuckDB ${show(duck)}`;
    }
    for (let k = 0; k < duck.length; k++) {
      const d = diff(ours[k], duck[k], `${where}[${k}]`);
      if (d) return d;
    }
    return null;
  }
  if (typeof duck === 'object' && 'wkt' in duck && Object.keys(duck).length === 1) {
    return typeof ours === 'string' && sameWkt(ours, duck.wkt) ? null
      : `${where}: geolake ${show(ours)}, DuckDB ${show(duck.wkt)}`;
  }
  if (typeof duck === 'object' && 'num' in duck && Object.keys(duck).length === 1) {
    const ok = typeof ours === 'object' && ours !== null && 'num' in ours && sameNumber(ours.num, duck.num);
    return ok ? null : `${where}: geolake ${show(ours)}, DuckDB ${show(duck)}`;
  }
  if (typeof duck === 'object') {
    if (typeof ours !== 'object' || Array.isArray(ours)) {
      return `${where}: geolake ${show(ours)}, DuckDB ${show(duck)}`;
    }
    const keys = new Set([...Object.keys(ours), ...Object.keys(duck)]);
    for (const k of keys) {
      if (!(k in ours) || !(k in duck)) return `${where}: key '${k}' only in ${k in ours ? 'geolake' : 'DuckDB'}`;
      const d = diff(ours[k], duck[k], `${where}.${k}`);
      if (d) return d;
    }
    return null;
  }
  if (typeof duck === 'string' && typeof ours === 'string' && sameText(ours, duck)) return null;
  return ours === duck ? null : `${where}: geolake ${show(ours)}, DuckDB ${show(duck)}`;
}

function show(v) {
  const s = JSON.stringify(v, (k, x) => (x && typeof x === 'object' && 'num' in x && Object.keys(x).length === 1 ? Number(x.num) : x));
  return s === undefined ? 'undefined' : s.length > 120 ? s.slice(0, 117) + '...' : s;
}

// ---------------------------------------------------------------------------------------------

async function duckRows(file) {
  const reader = await conn.runAndReadAll(
    `SELECT * FROM read_parquet('${file.replaceAll("'", "''")}')`);
  return { names: reader.columnNames(), rows: reader.getRows().map(r => r.map(fromDuck)) };
}

// Runs `geolake cat` (started before DuckDB reads the same file, so the two overlap).
function cat(file) {
  return new Promise(resolve => {
    const child = spawn(geolakeBin, ['cat', '--format', 'jsonl', file]);
    const out = [], err = [];
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, kTimeoutMs);
    child.stdout.on('data', d => out.push(d));
    child.stderr.on('data', d => err.push(d));
    child.on('error', e => { clearTimeout(timer); resolve({ code: null, stdout: '', stderr: '', error: e }); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal: timedOut ? `timeout after ${kTimeoutMs} ms` : signal,
                stdout: Buffer.concat(out).toString('utf8'),
                stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

function compareValues(r, duck) {
  if (r.error || r.signal) return `geolake cat: ${r.error?.message ?? r.signal}`;
  if (r.code !== 0) return `geolake cat exits ${r.code}: ${r.stderr.split('\n')[0]}`;
  const lines = r.stdout.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length !== duck.rows.length) {
    return `geolake prints ${lines.length} rows, DuckDB reads ${duck.rows.length}`;
  }
  for (let row = 0; row < lines.length; row++) {
    let ours;
    try {
      ours = parseJsonKeepingNumbers(lines[row]);
    } catch (e) {
      return `row ${row}: not JSON (${e.message}): ${lines[row].slice(0, 100)}`;
    }
    const names = Object.keys(ours);
    if (names.join(',') !== duck.names.join(',')) {
      return `columns: geolake [${names}], DuckDB [${duck.names}]`;
    }
    for (let c = 0; c < names.length; c++) {
      const d = diff(ours[names[c]], duck.rows[row][c], `row ${row} ${names[c]}`);
      if (d) return d;
    }
  }
  return null;
}

const parquetFiles = dir =>
  fs.readdirSync(dir).filter(f => /\.parquet(\.encrypted)?$/.test(f)).sort().map(f => path.join(dir, f));

let passed = 0, failed = 0, skipped = 0;
const report = (status, file, what) => {
  console.log(`${status} ${path.relative(corpusDir, file)}${what ? ': ' + what : ''}`);
};

const dataFiles = [...parquetFiles(path.join(corpusDir, 'data')),
                   ...parquetFiles(path.join(corpusDir, 'data', 'geospatial'))];
for (const file of dataFiles) {
  const reason = notAttempted[path.basename(file)];
  if (reason) { skipped++; report('SKIP', file, reason); continue; }
  if (corruptChecksum.has(path.basename(file))) {
    const r = await cat(file);
    const errLines = r.stderr.split('\n').filter(l => l !== '');
    if (r.code === 6 && errLines.length === 1 && errLines[0].includes(path.basename(file)) &&
        errLines[0].includes('CRC mismatch')) {
      passed++;
      report('ok', file, `refused, a page CRC does not match: ${errLines[0].slice(-80)}`);
    } else {
      failed++;
      report('FAIL', file, `a corrupt page CRC not refused: exit ${r.code}, ${errLines[0] ?? ''}`);
    }
    continue;
  }
  const ours = cat(file);
  let duck;
  try {
    duck = await duckRows(file);
  } catch (e) {
    await ours;
    skipped++;
    report('SKIP', file, `DuckDB does not read it: ${e.message.split('\n')[0].slice(0, 140)}`);
    continue;
  }
  const problem = compareValues(await ours, duck);
  const known = knownDefects[path.basename(file)];
  const misread = duckdbMisreads[path.basename(file)];
  if (problem && misread && problem === misread.problem) {
    passed++;
    report('ok', file, `${duck.rows.length} rows equal but one that DuckDB misreads: ${misread.why}`);
  } else if (problem && known) {
    skipped++;
    report('KNOWN', file, `${known}; ${problem}`);
  } else if (problem) {
    failed++;
    report('FAIL', file, problem);
  } else {
    passed++;
    report('ok', file, `${duck.rows.length} rows x ${duck.names.length} columns equal` +
                       (known ? ' (listed as a known defect: drop the entry)' : ''));
  }
}

for (const file of parquetFiles(path.join(corpusDir, 'bad_data'))) {
  const r = await cat(file);
  if (r.error || r.signal) { failed++; report('FAIL', file, `no clean refusal: ${r.error?.message ?? r.signal}`); continue; }
  if (r.code === 0) {
    // Accepted: only right if DuckDB reads it too and the values agree.
    let duck;
    try { duck = await duckRows(file); } catch (e) {
      failed++; report('FAIL', file, `geolake prints it, DuckDB refuses it (${e.message.slice(0, 80)})`); continue;
    }
    const problem = compareValues(r, duck);
    if (problem) { failed++; report('FAIL', file, problem); } else {
      passed++; report('ok', file, `read (as DuckDB does): ${duck.rows.length} rows equal`);
    }
    continue;
  }
  const errLines = r.stderr.split('\n').filter(l => l !== '');
  const base = path.basename(file);
  if (errLines.length !== 1 || !errLines[0].includes(base) || r.code >= 124 || r.code < 0) {
    failed++;
    report('FAIL', file, `exit ${r.code}, stderr: ${JSON.stringify(r.stderr.slice(0, 200))}`);
  } else {
    passed++;
    report('ok', file, `refused, exit ${r.code}: ${errLines[0].slice(0, 140)}`);
  }
}

console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
