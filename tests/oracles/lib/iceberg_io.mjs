// Local-filesystem plumbing for reading Iceberg tables with icebird and avsc.
//
// icebird 0.3.1 performs ALL I/O through the global `fetch` (metadata JSON,
// manifest list, manifests, data and delete files), using the paths exactly as
// they are written in the metadata (only s3:// and s3a:// are rewritten to
// https://<bucket>.s3.amazonaws.com/...). Node's fetch rejects every local form
// (file:// -> "not implemented... yet...", /abs/path or rel/path -> "Failed to
// parse URL"), so local tables are only readable by replacing globalThis.fetch.
// This module provides that replacement plus an Avro reader (avsc) that keeps
// 64-bit longs exact as BigInt.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const avro = require('avsc');

/** Same rewrite icebird applies before fetching. */
export function translateS3Url(url) {
  if (url.startsWith('s3a://') || url.startsWith('s3://')) {
    const rest = url.slice(url.indexOf('://') + 3);
    const slash = rest.indexOf('/');
    if (slash === -1) return url;
    return `https://${rest.slice(0, slash)}.s3.amazonaws.com${rest.slice(slash)}`;
  }
  return url;
}

/** Classify how a path in Iceberg metadata is written. */
export function pathForm(p) {
  if (p.startsWith('file:///')) return 'file-uri (file:///abs)';
  if (p.startsWith('file://')) return 'file-uri with host (file://host/...)';
  if (p.startsWith('file:/')) return 'file-uri short (file:/abs)';
  if (p.startsWith('/')) return 'absolute path';
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(p);
  if (m) return `${m[1].toLowerCase()} URI`;
  return 'relative path';
}

/**
 * Maps any path string found in metadata (or requested by icebird) to a local
 * file. Rules, in order:
 *  1. prefix maps (explicit --map FROM=TO, and with --relocate the table
 *     "location" in all the spellings icebird might produce -> local table dir)
 *  2. file: URIs -> fileURLToPath; absolute paths as is
 *  3. other schemes (s3, https, hdfs...) -> error (nothing remote is reachable)
 *  4. relative paths -> resolved against baseDir (default: current directory)
 */
export class PathResolver {
  constructor({ baseDir = process.cwd(), maps = [] } = {}) {
    this.baseDir = baseDir;
    this.maps = [];
    for (const [from, to] of maps) this.addMap(from, to);
  }

  addMap(from, to) {
    const f = from.replace(/\/+$/, '');
    if (!f) return;
    this.maps.push([f, to.replace(/\/+$/, '')]);
    this.maps.sort((a, b) => b[0].length - a[0].length);
  }

  /** Map every spelling of an Iceberg table location to a local directory. */
  relocate(location, localDir) {
    const loc = location.replace(/\/+$/, '');
    const variants = new Set([loc]);
    if (/^s3a?:\/\//.test(loc)) {
      const s3 = loc.replace(/^s3a:/, 's3:');
      const s3a = loc.replace(/^s3:/, 's3a:');
      for (const v of [s3, s3a]) { variants.add(v); variants.add(translateS3Url(v)); }
    } else if (loc.startsWith('file:')) {
      try {
        const p = fileURLToPath(loc);
        variants.add(p); variants.add('file://' + p); variants.add('file:' + p);
      } catch { /* leave as is */ }
    } else if (loc.startsWith('/')) {
      variants.add('file://' + loc); variants.add('file:' + loc);
    } else {
      // relative location, also match its "./"-less / "./"-ful spelling
      variants.add(loc.replace(/^\.\//, ''));
      variants.add('./' + loc.replace(/^\.\//, ''));
    }
    for (const v of variants) this.addMap(v, localDir);
  }

  /** Returns { local, form, mapped } or throws. */
  toLocal(p) {
    let s = p;
    let mapped = null;
    for (const [from, to] of this.maps) {
      if (s === from || s.startsWith(from + '/')) {
        s = to + s.slice(from.length);
        mapped = from;
        break;
      }
    }
    const form = pathForm(p);
    if (s.startsWith('file:')) {
      return { local: fileURLToPath(s), form, mapped };
    }
    if (s.startsWith('/')) return { local: s, form, mapped };
    if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s)) {
      throw new Error(`cannot read ${JSON.stringify(p)} locally (${form}); use --relocate or --map FROM=TO`);
    }
    return { local: path.resolve(this.baseDir, s), form, mapped };
  }
}

/**
 * Replace globalThis.fetch with a local-file implementation driven by the
 * resolver. Supports GET (optionally with Range: bytes=a-b) and HEAD.
 * Every request is logged into `log`.
 */
export function installLocalFetch(resolver, log, { gunzipMetadata = false } = {}) {
  const original = globalThis.fetch;
  globalThis.fetch = async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    const entry = { url, method };
    const range = headers.get('Range');
    if (range) entry.range = range;
    log.push(entry);
    let local;
    try {
      ({ local } = resolver.toLocal(url));
      entry.local = local;
    } catch (e) {
      entry.status = 'unresolvable';
      entry.error = e.message;
      // Same kind of failure icebird would see from a real fetch.
      throw new TypeError(`fetch failed: ${e.message}`);
    }
    let st;
    try { st = fs.statSync(local); } catch {
      entry.status = 404;
      return new Response(null, { status: 404, statusText: 'Not Found' });
    }
    if (method === 'HEAD') {
      entry.status = 200;
      return new Response(null, { status: 200, headers: { 'Content-Length': String(st.size) } });
    }
    if (range) {
      const m = /^bytes=(\d*)-(\d*)$/.exec(range);
      if (!m) { entry.status = 416; return new Response(null, { status: 416 }); }
      let start; let end;
      if (m[1] === '') { start = Math.max(0, st.size - Number(m[2])); end = st.size - 1; } else {
        start = Number(m[1]);
        end = m[2] === '' ? st.size - 1 : Math.min(Number(m[2]), st.size - 1);
      }
      const len = Math.max(0, end - start + 1);
      const buf = Buffer.alloc(len);
      const fd = fs.openSync(local, 'r');
      try { fs.readSync(fd, buf, 0, len, start); } finally { fs.closeSync(fd); }
      entry.status = 206;
      return new Response(buf, { status: 206, headers: { 'Content-Length': String(len), 'Content-Range': `bytes ${start}-${end}/${st.size}` } });
    }
    entry.status = 200;
    let body = fs.readFileSync(local);
    if (gunzipMetadata && local.endsWith('.metadata.json') && body[0] === 0x1f && body[1] === 0x8b) {
      // As an HTTP server sending the file with Content-Encoding: gzip, which fetch decodes.
      body = zlib.gunzipSync(body);
      entry.gunzipped = true;
    }
    return new Response(body, { status: 200, headers: { 'Content-Length': String(body.length) } });
  };
  return () => { globalThis.fetch = original; };
}

export function tableUrlFor(dir) {
  return pathToFileURL(dir).href.replace(/\/+$/, '');
}

// ------------------------------------------------------------------ Avro (avsc)
const BigLong = avro.types.LongType.__with({
  fromBuffer: buf => buf.readBigInt64LE(),
  toBuffer: n => { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(n)); return b; },
  fromJSON: x => BigInt(x),
  toJSON: n => (Number.isSafeInteger(Number(n)) ? Number(n) : n.toString()),
  isValid: n => typeof n === 'bigint',
  compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
});

/** avsc Type for a writer schema, with longs decoded as BigInt. */
export function avroTypeFor(schema) {
  return avro.Type.forSchema(schema, {
    wrapUnions: 'auto',
    typeHook: s => (s === 'long' || (s && typeof s === 'object' && s.type === 'long' && !s.logicalType) ? BigLong : undefined),
  });
}

let snappyUncompress;
let fzstd;
async function codecs() {
  snappyUncompress ??= (await import('hyparquet')).snappyUncompress;
  fzstd ??= await import('fzstd');
  return {
    null: (buf, cb) => cb(null, buf),
    deflate: zlib.inflateRaw,
    snappy: (buf, cb) => {
      try {
        const data = buf.subarray(0, buf.length - 4); // trailing CRC32
        let len = 0; let shift = 0; let i = 0;
        for (;;) { const b = data[i++]; len += (b & 0x7f) * 2 ** shift; if (!(b & 0x80)) break; shift += 7; }
        const out = new Uint8Array(len);
        snappyUncompress(data, out);
        cb(null, Buffer.from(out));
      } catch (e) { cb(e); }
    },
    zstandard: (buf, cb) => {
      try { cb(null, Buffer.from(fzstd.decompress(buf))); } catch (e) { cb(e); }
    },
  };
}

/**
 * Decode an Avro object container file. Returns
 * { records, codec, meta: {key: string}, schema, type }.
 */
export async function readAvroFile(file) {
  const cs = await codecs();
  return await new Promise((resolve, reject) => {
    const records = [];
    let info = {};
    const dec = avro.createFileDecoder(file, {
      codecs: cs,
      parseHook: schema => avroTypeFor(schema),
    });
    dec.on('metadata', (type, codec, header) => {
      const meta = {};
      for (const [k, v] of Object.entries(header.meta)) meta[k] = Buffer.from(v).toString('utf8');
      info = { codec, meta, type, schema: JSON.parse(meta['avro.schema']) };
    });
    dec.on('data', r => records.push(r));
    dec.on('error', reject);
    dec.on('end', () => resolve({ records, ...info }));
  });
}
