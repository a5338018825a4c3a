// make_coverage OUT.gpkg [SIDE] [SEED]: write a polygon coverage of SIDE x SIDE quadrilaterals
// (default 1000 x 1000 = 1,000,000) to a GeoPackage (EPSG:4326). The (SIDE+1)^2 grid vertices are
// jittered once from a fixed seed and shared by the neighbouring cells, so the polygons tile
// the plane without gaps or overlaps, like a real parcel or admin coverage. Attributes: cell_id
// (int64), row, col (int64), name (text) and area (double, shoelace).
// make_coverage OUT.gpkg --points N [SEED]: N points instead, uniform over the same box, in
// random order (a point set larger than any in build/data); attributes point_id
// (int64), name (text) and value (double).
#include <gdal.h>
#include <ogr_api.h>
#include <ogr_srs_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

int WritePoints(const std::string& out, long long count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> lon(-10.0, 10.0), lat(40.0, 60.0), value(0.0, 1000.0);
  GDALAllRegister();
  GDALDatasetH ds =
      GDALCreate(GDALGetDriverByName("GPKG"), out.c_str(), 0, 0, 0, GDT_Unknown, nullptr);
  if (ds == nullptr) {
    std::fprintf(stderr, "make_coverage: cannot create %s\n", out.c_str());
    return 1;
  }
  OGRSpatialReferenceH srs = OSRNewSpatialReference(nullptr);
  OSRImportFromEPSG(srs, 4326);
  OSRSetAxisMappingStrategy(srs, OAMS_TRADITIONAL_GIS_ORDER);
  OGRLayerH layer = GDALDatasetCreateLayer(ds, "points", srs, wkbPoint, nullptr);
  OSRRelease(srs);
  const std::pair<const char*, OGRFieldType> fields[] = {
      {"point_id", OFTInteger64}, {"name", OFTString}, {"value", OFTReal}};
  for (const auto& [name, type] : fields) {
    OGRFieldDefnH f = OGR_Fld_Create(name, type);
    OGR_L_CreateField(layer, f, TRUE);
    OGR_Fld_Destroy(f);
  }
  OGRFeatureDefnH defn = OGR_L_GetLayerDefn(layer);
  GDALDatasetStartTransaction(ds, TRUE);
  for (long long i = 0; i < count; ++i) {
    OGRGeometryH point = OGR_G_CreateGeometry(wkbPoint);
    const double x = lon(rng);
    const double y = lat(rng);
    OGR_G_SetPoint_2D(point, 0, x, y);
    OGRFeatureH feature = OGR_F_Create(defn);
    OGR_F_SetFieldInteger64(feature, 0, i);
    OGR_F_SetFieldString(feature, 1, ("p" + std::to_string(i)).c_str());
    OGR_F_SetFieldDouble(feature, 2, value(rng));
    OGR_F_SetGeometryDirectly(feature, point);
    if (OGR_L_CreateFeature(layer, feature) != OGRERR_NONE) {
      std::fprintf(stderr, "make_coverage: cannot write point %lld\n", i);
      return 1;
    }
    OGR_F_Destroy(feature);
  }
  GDALDatasetCommitTransaction(ds);
  GDALClose(ds);
  std::fprintf(stderr, "make_coverage: %lld points -> %s\n", count, out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: make_coverage OUT.gpkg [SIDE] [SEED] | OUT.gpkg --points N [SEED]\n");
    return 2;
  }
  if (argc > 3 && std::string(argv[2]) == "--points") {
    return WritePoints(argv[1], std::atoll(argv[3]),
                       argc > 4 ? static_cast<unsigned>(std::atoi(argv[4])) : 42);
  }
  const std::string out = argv[1];
  const int side = argc > 2 ? std::atoi(argv[2]) : 1000;
  const unsigned seed = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 42;
  const auto start = std::chrono::steady_clock::now();

  // Vertices over lon [-10, 10), lat [40, 60): cell size 20 / side degrees, jitter up to a
  // quarter of a cell, so every quadrilateral stays simple (convex enough) and valid.
  const double cell = 20.0 / side;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(-0.25 * cell, 0.25 * cell);
  const int n = side + 1;
  std::vector<double> vx(static_cast<std::size_t>(n) * n), vy(vx.size());
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      const bool border = r == 0 || c == 0 || r == side || c == side;
      const std::size_t i = static_cast<std::size_t>(r) * n + c;
      vx[i] = -10.0 + c * cell + (border ? 0.0 : jitter(rng));
      vy[i] = 40.0 + r * cell + (border ? 0.0 : jitter(rng));
    }
  }

  GDALAllRegister();
  GDALDriverH driver = GDALGetDriverByName("GPKG");
  GDALDatasetH ds = GDALCreate(driver, out.c_str(), 0, 0, 0, GDT_Unknown, nullptr);
  if (ds == nullptr) {
    std::fprintf(stderr, "make_coverage: cannot create %s\n", out.c_str());
    return 1;
  }
  OGRSpatialReferenceH srs = OSRNewSpatialReference(nullptr);
  OSRImportFromEPSG(srs, 4326);
  OSRSetAxisMappingStrategy(srs, OAMS_TRADITIONAL_GIS_ORDER);
  OGRLayerH layer = GDALDatasetCreateLayer(ds, "coverage", srs, wkbPolygon, nullptr);
  OSRRelease(srs);
  const char* int_fields[] = {"cell_id", "row", "col"};
  for (const char* name : int_fields) {
    OGRFieldDefnH f = OGR_Fld_Create(name, OFTInteger64);
    OGR_L_CreateField(layer, f, TRUE);
    OGR_Fld_Destroy(f);
  }
  OGRFieldDefnH name_field = OGR_Fld_Create("name", OFTString);
  OGR_L_CreateField(layer, name_field, TRUE);
  OGR_Fld_Destroy(name_field);
  OGRFieldDefnH area_field = OGR_Fld_Create("area", OFTReal);
  OGR_L_CreateField(layer, area_field, TRUE);
  OGR_Fld_Destroy(area_field);

  OGRFeatureDefnH defn = OGR_L_GetLayerDefn(layer);
  GDALDatasetStartTransaction(ds, TRUE);
  for (int r = 0; r < side; ++r) {
    for (int c = 0; c < side; ++c) {
      const std::size_t corners[4] = {
          static_cast<std::size_t>(r) * n + c, static_cast<std::size_t>(r) * n + c + 1,
          static_cast<std::size_t>(r + 1) * n + c + 1, static_cast<std::size_t>(r + 1) * n + c};
      OGRGeometryH ring = OGR_G_CreateGeometry(wkbLinearRing);
      double area = 0;
      for (int k = 0; k <= 4; ++k) {
        const std::size_t a = corners[k % 4];
        const std::size_t b = corners[(k + 1) % 4];
        OGR_G_AddPoint_2D(ring, vx[a], vy[a]);
        if (k < 4) area += vx[a] * vy[b] - vx[b] * vy[a];
      }
      OGRGeometryH poly = OGR_G_CreateGeometry(wkbPolygon);
      OGR_G_AddGeometryDirectly(poly, ring);
      OGRFeatureH feature = OGR_F_Create(defn);
      const long long id = static_cast<long long>(r) * side + c;
      OGR_F_SetFieldInteger64(feature, 0, id);
      OGR_F_SetFieldInteger64(feature, 1, r);
      OGR_F_SetFieldInteger64(feature, 2, c);
      const std::string name = "cell_" + std::to_string(r) + "_" + std::to_string(c);
      OGR_F_SetFieldString(feature, 3, name.c_str());
      OGR_F_SetFieldDouble(feature, 4, area / 2);
      OGR_F_SetGeometryDirectly(feature, poly);
      if (OGR_L_CreateFeature(layer, feature) != OGRERR_NONE) {
        std::fprintf(stderr, "make_coverage: cannot write feature %lld\n", id);
        return 1;
      }
      OGR_F_Destroy(feature);
    }
  }
  GDALDatasetCommitTransaction(ds);
  GDALClose(ds);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "make_coverage: %d polygons in %.1f s -> %s\n", side * side, seconds,
               out.c_str());
  return 0;
}
