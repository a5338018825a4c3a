#include "geolake/cli/commands.h"

namespace geolake::cli {

const std::vector<CommandSpec>& Commands() {
  static const std::vector<CommandSpec> kCommands = {
      {"create", "Create a table", RegisterCreate},
      {"ingest", "Load vector sources into a table (parallel, resumable)", RegisterIngest},
      {"query", "Bbox and attribute query, pruned at every level", RegisterQuery},
      {"describe", "Show a table's schema, partitioning and properties", RegisterDescribe},
      {"snapshots", "List a table's snapshots", RegisterSnapshots},
      {"files", "List a table's live data files", RegisterFiles},
      {"append", "Commit existing Parquet data files to a table", RegisterAppend},
      {"compact", "Rewrite small files (binpack, sort, hilbert)", RegisterCompact},
      {"rewrite-manifests", "Rewrite many small manifests into few, by partition",
       RegisterRewriteManifests},
      {"expire-snapshots", "Drop old snapshots and the files only they use",
       RegisterExpireSnapshots},
      {"remove-orphans", "Delete files no snapshot references", RegisterRemoveOrphans},
      {"maintain", "Run maintenance whose policy thresholds are crossed", RegisterMaintain},
      {"join", "Spatial join of two tables or sources (predicates, inner or left)", RegisterJoin},
      {"dissolve", "Merge polygons by attribute or by touching (union per group)",
       RegisterDissolve},
      {"make-valid", "Repair invalid geometries (GEOS linework or structure)", RegisterMakeValid},
      {"simplify", "Simplify geometries (Douglas-Peucker, topology-preserving, coverage)",
       RegisterSimplify},
      {"reproject", "Reproject a table or sources into another CRS", RegisterReproject},
      {"eliminate", "Merge small polygons into neighbours", RegisterEliminate},
      {"polygonize", "Turn a raster into polygons, one per connected region of a value",
       RegisterPolygonize},
      {"render", "Draw features or data-file boxes as PNG", RegisterRender},
      {"inspect", "Show a Parquet file's schema, row groups and metadata", RegisterInspect},
      {"cat", "Print a Parquet file's rows", RegisterCat},
      {"convert", "Write any vector source as GeoParquet", RegisterConvert},
      {"geoinfo", "Profile a vector source: types, extent, validity, area, spatial keys",
       RegisterGeoinfo},
  };
  return kCommands;
}

}  // namespace geolake::cli
