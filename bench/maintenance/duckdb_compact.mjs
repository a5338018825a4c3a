// The DuckDB side of bench/maintenance: the same small data files rewritten into one file in
// Hilbert order, as a user without geolake would compact them:
//   node duckdb_compact.mjs OUT.parquet FILE...  -> "seconds,rows"
// COPY (SELECT * FROM read_parquet([...]) ORDER BY geo_hilbert) TO OUT (zstd); 2 threads unless
// GEOLAKE_BENCH_THREADS says otherwise; the geometry stays WKB (no GeoParquet conversion).
const [out, ...files] = process.argv.slice(2);
const modulesDir = process.env.GEOLAKE_ORACLES_DIR + '/node_modules/@duckdb/node-api/lib/index.js';
const { DuckDBInstance } = await import(modulesDir);
const inst = await DuckDBInstance.create(':memory:', {
  threads: process.env.GEOLAKE_BENCH_THREADS || '2',
  autoinstall_known_extensions: 'false',
  autoload_known_extensions: 'false',
});
const conn = await inst.connect();
await conn.run('SET enable_geoparquet_conversion = false');
const list = files.map(f => `'${f}'`).join(', ');
const t0 = performance.now();
await conn.run(`COPY (SELECT * FROM read_parquet([${list}]) ORDER BY geo_hilbert)
  TO '${out}' (FORMAT parquet, COMPRESSION zstd)`);
const s = (performance.now() - t0) / 1000;
const n = (await conn.runAndReadAll(`SELECT count(*)::VARCHAR AS n FROM read_parquet('${out}')`))
  .getRowObjectsJS()[0].n;
console.log(`${s.toFixed(6)},${n}`);
