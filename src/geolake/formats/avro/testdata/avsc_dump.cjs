// Decode Avro container files with avsc (an Avro implementation no one here wrote) and print,
// for each file, one line: "<record count>\t<records in canonical text>". The C++ tests print
// their own decode in the same canonical text and compare.
//   node avsc_dump.cjs NODE_MODULES_DIR FILE...
// Canonical text: null, true/false, integers and longs as decimal digits, floats via String(),
// strings JSON-quoted, bytes/fixed as "hex:<lowercase hex>", enums as their JSON-quoted symbol,
// arrays [a,b], records and maps {"key":value} in order. Unions are unwrapped.
'use strict';
const path = require('path');
const { pathToFileURL } = require('url');

async function main() {
  const [modulesArg, ...files] = process.argv.slice(2);
  const nodeModules = path.resolve(modulesArg);
  const avro = require(path.join(nodeModules, 'avsc'));
  const fzstd = require(path.join(nodeModules, 'fzstd'));
  const { snappyUncompress } =
      await import(pathToFileURL(path.join(nodeModules, 'hyparquet/src/index.js')).href);
  const BigLong = avro.types.LongType.__with({
    fromBuffer: buf => buf.readBigInt64LE(),
    toBuffer: n => { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(n)); return b; },
    fromJSON: x => BigInt(x),
    toJSON: n => n.toString(),
    isValid: n => typeof n === 'bigint',
    compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
  });
  const codecs = {
    null: (buf, cb) => cb(null, buf),
    deflate: require('zlib').inflateRaw,
    snappy: (buf, cb) => {
      try {
        const data = buf.subarray(0, buf.length - 4);
        let len = 0; let shift = 0; let i = 0;
        for (;;) { const b = data[i++]; len += (b & 0x7f) * 2 ** shift; if (!(b & 0x80)) break; shift += 7; }
        const out = new Uint8Array(len);
        snappyUncompress(data, out);
        cb(null, Buffer.from(out));
      } catch (e) { cb(e); }
    },
    zstandard: (buf, cb) => { try { cb(null, Buffer.from(fzstd.decompress(buf))); } catch (e) { cb(e); } },
  };
  const canon = v => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'bigint' || typeof v === 'number') return String(v);
    if (typeof v === 'string') return JSON.stringify(v);
    if (Buffer.isBuffer(v)) return '"hex:' + v.toString('hex') + '"';
    if (Array.isArray(v)) return '[' + v.map(canon).join(',') + ']';
    return '{' + Object.keys(v).map(k => JSON.stringify(k) + ':' + canon(v[k])).join(',') + '}';
  };
  for (const file of files) {
    const records = await new Promise((resolve, reject) => {
      const out = [];
      const dec = avro.createFileDecoder(file, {
        codecs,
        parseHook: schema => avro.Type.forSchema(schema, {
          wrapUnions: 'auto',
          typeHook: s => (s === 'long' || (s && typeof s === 'object' && s.type === 'long' && !s.logicalType) ? BigLong : undefined),
        }),
      });
      dec.on('data', r => out.push(r));
      dec.on('error', reject);
      dec.on('end', () => resolve(out));
    });
    process.stdout.write(records.length + '\t' + canon(records) + '\n');
  }
}
main().catch(e => { process.stdout.write('ERROR\t' + (e && e.stack || e) + '\n'); process.exit(1); });
