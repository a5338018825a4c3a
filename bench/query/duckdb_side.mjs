// The DuckDB side of bench/query: the same box query over the same data files.
//   node duckdb_side.mjs XMIN YMIN XMAX YMAX FILE...  -> "seconds,rows,wkb_bytes,cpu_seconds"
// Only the query is timed (best of 3, after one warm-up run; wall time and, separately, the
// least process CPU time of the 3); it reads the geometry of every matching row (sum of its
// length), as geolake decodes it.
const [xmin, ymin, xmax, ymax, ...files] = process.argv.slice(2);
const modulesDir = process.env.GEOLAKE_ORACLES_DIR + '/node_modules/@duckdb/node-api/lib/index.js';
const { DuckDBInstance } = await import(modulesDir);
const inst = await DuckDBInstance.create(':memory:', {
  threads: process.env.GEOLAKE_BENCH_THREADS || '2',
  autoinstall_known_extensions: 'false',
  autoload_known_extensions: 'false',
});
const conn = await inst.connect();
// The geometry as the file stores it (WKB BLOB), as geolake reads it.
await conn.run('SET enable_geoparquet_conversion = false');
const list = files.map(f => `'${f}'`).join(', ');
const sql = `SELECT count(*)::VARCHAR AS n, coalesce(sum(octet_length(geometry)), 0)::VARCHAR AS b
  FROM read_parquet([${list}])
  WHERE bbox.xmin <= ${xmax} AND bbox.xmax >= ${xmin} AND bbox.ymin <= ${ymax} AND bbox.ymax >= ${ymin}`;
let best = Infinity;
let bestCpu = Infinity;
let row;
for (let i = 0; i < 4; i++) {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  row = (await conn.runAndReadAll(sql)).getRowObjectsJS()[0];
  const c = process.cpuUsage(c0);
  const s = (performance.now() - t0) / 1000;
  if (i > 0 && s < best) best = s;
  if (i > 0) bestCpu = Math.min(bestCpu, (c.user + c.system) / 1e6);
}
console.log(`${best.toFixed(6)},${row.n},${row.b},${bestCpu.toFixed(6)}`);
