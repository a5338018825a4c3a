// The DuckDB side of bench/parquet, on one thread:
//   node duckdb_side.mjs write OUT.parquet ROWS  -> "seconds,cpu_seconds,checksum" (COPY TO only)
//   node duckdb_side.mjs read FILE.parquet       -> "seconds,cpu_seconds,checksum" (a full decode)
// seconds is wall time; cpu_seconds the process CPU time (user + system, every thread of node
// and DuckDB) of the same span. Rows and checksum match parquet_bench.cc.
const [mode, file, rowsText] = process.argv.slice(2);
const modulesDir = process.env.GEOLAKE_ORACLES_DIR + '/node_modules/@duckdb/node-api/lib/index.js';
const { DuckDBInstance } = await import(modulesDir);
const inst = await DuckDBInstance.create(':memory:', {
  threads: '1',
  autoinstall_known_extensions: 'false',
  autoload_known_extensions: 'false',
});
const conn = await inst.connect();
const one = async sql => (await conn.runAndReadAll(sql)).getRowObjectsJS()[0];
const checksumSql = src => `SELECT sum(id)::VARCHAR AS a, sum(k)::VARCHAR AS b, sum(v) AS c,
  sum(strlen(name))::VARCHAR AS d, count_if(flag)::VARCHAR AS e FROM ${src}`;
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const fmt = r => `${r.a}:${r.b}:${Number(r.c).toExponential(6).replace(/e\+?/, 'e+')}:${r.d ?? 0}:${r.e}`;

if (mode === 'write') {
  const rows = BigInt(rowsText);
  await conn.run(`CREATE TABLE t AS SELECT i AS id, (i * 2654435761) % 1000003 AS k,
      ((i * 2654435761) % 1000003) / 7.0 AS v,
      CASE WHEN i % 10 = 0 THEN NULL ELSE 'n' || (i % 5000)::VARCHAR END AS name,
      i % 3 = 0 AS flag FROM range(${rows}) r(i) ORDER BY i`);
  const t0 = performance.now();
  const c0 = cpuSeconds();
  await conn.run(`COPY t TO '${file}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 65536)`);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds() - c0;
  console.log(`${seconds.toFixed(6)},${cpu.toFixed(6)},${fmt(await one(checksumSql('t')))}`);
} else if (mode === 'read') {
  const t0 = performance.now();
  const c0 = cpuSeconds();
  const r = await one(checksumSql(`read_parquet('${file}')`));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds() - c0;
  console.log(`${seconds.toFixed(6)},${cpu.toFixed(6)},${fmt(r)}`);
} else {
  console.error('usage: duckdb_side.mjs write OUT ROWS | read FILE');
  process.exit(2);
}
