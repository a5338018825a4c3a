// read_by_folder.mjs — read an Iceberg table with icebird given ONLY its folder, as
// path-based readers do (icebird, DuckDB's iceberg_scan on a folder, the Hadoop catalog
// convention): icebird reads metadata/version-hint.text itself and opens
// metadata/v<N>.metadata.json. Nothing here tells it which metadata file is current.
//
// usage: node read_by_folder.mjs TABLE_DIR
// prints one JSON object {discovered_version, metadata_file, rows, format_version}; exit 0 when
// icebird found a metadata file and read the table, 1 otherwise (the error is printed).
import path from 'node:path';
import { PathResolver, installLocalFetch, tableUrlFor } from './lib/iceberg_io.mjs';
import { errMsg, printJSON } from './lib/common.mjs';

const tableDir = process.argv[2];
if (!tableDir) {
  console.error('usage: node read_by_folder.mjs TABLE_DIR');
  process.exit(2);
}
const dir = path.resolve(tableDir);
const restore = installLocalFetch(new PathResolver({ baseDir: dir }), []);
try {
  const icebird = await import('icebird');
  const tableUrl = tableUrlFor(dir);
  const version = await icebird.icebergLatestVersion({ tableUrl });
  // No metadataFileName: icebird resolves the current metadata from the hint on its own.
  const metadata = await icebird.icebergMetadata({ tableUrl });
  const rows = await icebird.icebergRead({ tableUrl, metadata });
  printJSON({
    discovered_version: String(version),
    metadata_file: `${version}.metadata.json`,
    format_version: metadata['format-version'],
    current_snapshot_id: String(metadata['current-snapshot-id']),
    rows: rows.length,
  });
} catch (e) {
  console.error(`icebird could not read ${dir} by its folder: ${errMsg(e)}`);
  process.exitCode = 1;
} finally {
  restore();
}
