#!/usr/bin/python3
"""bench/ops/join.py: `geolake join` against PostGIS and GeoPandas in one run (docs/ops.md).

Cases (each checked for equal results across the tools before a time is printed):
  points   N generated points (uniform over the lower 48's box, fixed seed) x US counties:
           the number of points per county (geolake --aggregate count --how left; PostGIS
           LEFT JOIN ... GROUP BY; GeoPandas sjoin + groupby);
  cities   GeoNames cities500 x Natural Earth 10m countries, within: cities per country;
  overlap  M generated squares (0.02-0.2 degrees, fixed seed) -> US counties, largest-overlap
           (PostGIS DISTINCT ON ... ORDER BY ST_Area(ST_Intersection); GeoPandas overlay +
           idxmax); assignments compared where the best overlap is not a near tie.
Tools: geolake (release build, --workers 2, GeoParquet inputs made by `geolake convert`, CSV
output, the whole command timed), PostGIS (CREATE TABLE AS over GiST-indexed tables, serial and
with 2 parallel workers forced; loading not timed), GeoPandas (Debian's python3-geopandas; the
join and aggregation in memory, reading not timed). Each time is the best of RUNS. Peak RSS: the
geolake process and the GeoPandas process (reading included); PostgreSQL's is not measured.
Prints a table of seconds and the ratios other/geolake (targets, issue 19: >= 5x PostGIS's best
on the point joins, >= 3x on largest-overlap, >= 10x GeoPandas).

Usage: bench/ops/join.py GEOLAKE_BIN [--points N] [--squares M] [--runs R] [--cases a,b,c]
Needs ogr2ogr, PostgreSQL + PostGIS and python3-geopandas (make bench installs them).
"""
import argparse
import csv
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.environ.get("GEOLAKE_DATA_DIR", os.path.join(ROOT, "build", "data"))
csv.field_size_limit(sys.maxsize)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


class Postgis:
    def __init__(self, work):
        self.dir = os.path.join(work, "pg")
        os.chmod(work, 0o755)
        self.uri = run([os.path.join(ROOT, "scripts", "pg-test-server.sh"), "start",
                        self.dir]).stdout.strip()
        self.sql("CREATE EXTENSION postgis")

    def sql(self, text, *settings):
        args = ["psql", self.uri, "-q", "-At", "-v", "ON_ERROR_STOP=1"]
        for s in settings:
            args += ["-c", s]
        return run(args + ["-c", text]).stdout

    def timed_ctas(self, query, settings):
        out = run(["psql", self.uri, "-q", "-At", "-v", "ON_ERROR_STOP=1",
                   "-c", "DROP TABLE IF EXISTS bench_out", "-c", settings,
                   "-c", "\\timing on", "-c", f"CREATE TABLE bench_out AS {query}"]).stdout
        for line in out.splitlines():
            if line.startswith("Time:"):
                return float(line.split()[1]) / 1000
        sys.exit("no timing from psql: " + out[-300:])

    def load(self, path, table, layer_sql=None):
        cmd = ["ogr2ogr", "-f", "PostgreSQL", "PG:" + self.uri, path, "-nln", table,
               "-lco", "GEOMETRY_NAME=geom", "-lco", "SPATIAL_INDEX=GIST", "-t_srs", "EPSG:4326"]
        if layer_sql:
            cmd += ["-sql", layer_sql]
        run(cmd)
        self.sql(f"ANALYZE {table}")

    def stop(self):
        subprocess.run([os.path.join(ROOT, "scripts", "pg-test-server.sh"), "stop", self.dir],
                       capture_output=True)


SERIAL = "SET max_parallel_workers_per_gather = 0"
PARALLEL = ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; "
            "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; "
            "SET min_parallel_index_scan_size = 0")

GPD_POINTS = r"""
import sys, time, resource, json
import geopandas as gpd
left, right, key, pred, out = sys.argv[1:6]
l = gpd.read_parquet(left) if left.endswith(".parquet") else gpd.read_file(left)
r = gpd.read_file(right)
t0 = time.perf_counter()
j = gpd.sjoin(l[["geometry"]], r[[key, "geometry"]], predicate=pred, how="inner")
counts = j.groupby(key).size()
s = time.perf_counter() - t0
counts.to_csv(out, header=["count"])
print(json.dumps({"seconds": s, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

GPD_OVERLAP = r"""
import sys, time, resource, json
import geopandas as gpd
left, right, out = sys.argv[1:4]
l = gpd.read_parquet(left) if left.endswith(".parquet") else gpd.read_file(left)
r = gpd.read_file(right)
t0 = time.perf_counter()
r = r[["geoid", "geometry"]].copy()
r["geometry"] = r.geometry.make_valid()
o = gpd.overlay(l[["id", "geometry"]], r, how="intersection", keep_geom_type=True)
o["a"] = o.geometry.area
best = o.loc[o.groupby("id")["a"].idxmax(), ["id", "geoid", "a"]]
s = time.perf_counter() - t0
best.to_csv(out, index=False)
print(json.dumps({"seconds": s, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def best_of(runs, fn):
    times, rss = [], 0
    for _ in range(runs):
        s, r = fn()
        times.append(s)
        rss = max(rss, r)
    return min(times), rss


def geolake_time(runs, cmd):
    def once():
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", cmd[-1] + ".rss"] + cmd[:-1],
                           capture_output=True, text=True)
        s = time.perf_counter() - t0
        if p.returncode != 0:
            sys.exit(f"geolake: exit {p.returncode}: {p.stderr[-600:]}")
        return s, int(open(cmd[-1] + ".rss").read().split()[-1])
    return best_of(runs, once)


def gpd_time(runs, script, argv):
    def once():
        p = subprocess.run(["/usr/bin/python3", "-c", script] + argv, capture_output=True,
                           text=True)
        if p.returncode != 0:
            sys.exit("geopandas: " + p.stderr[-800:])
        j = json.loads(p.stdout.strip().splitlines()[-1])
        return j["seconds"], j["rss"]
    return best_of(runs, once)


def counts_of_csv(path, key, col="count"):
    with open(path, newline="") as f:
        return {r[key]: int(r[col]) for r in csv.DictReader(f) if int(r[col]) > 0}


def counts_of_pg(text):
    out = {}
    for line in text.splitlines():
        k, n = line.split("|")
        if int(n) > 0:
            out[k] = int(n)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("geolake")
    ap.add_argument("--points", type=int, default=5_000_000)
    ap.add_argument("--squares", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cases", default="points,cities,overlap")
    a = ap.parse_args()
    cases = a.cases.split(",")
    work = tempfile.mkdtemp(prefix="geolake_bench_join_")
    pg = None
    rows = []
    try:
        gl = [a.geolake, "--warehouse", os.path.join(work, "wh"), "--progress", "off",
              "--workers", "2"]
        pg = Postgis(work)
        counties = os.path.join(DATA, "us_counties.gpkg")
        pg.load(counties, "counties")
        rnd = random.Random(20261204)
        print(f"# {os.uname().nodename}: {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}",
              flush=True)

        if "points" in cases:
            pts_csv = os.path.join(work, "points.csv")
            with open(pts_csv, "w") as f:
                f.write("id,x,y\n")
                for i in range(a.points):
                    f.write(f"{i},{rnd.uniform(-125, -66):.6f},{rnd.uniform(24, 50):.6f}\n")
            pts_pq = os.path.join(work, "points.parquet")
            run(["ogr2ogr", "-f", "GPKG", os.path.join(work, "points.gpkg"), pts_csv,
                 "-oo", "X_POSSIBLE_NAMES=x", "-oo", "Y_POSSIBLE_NAMES=y",
                 "-oo", "AUTODETECT_TYPE=YES", "-a_srs", "EPSG:4326", "-nln", "points"])
            run([a.geolake, "--progress", "off", "convert", os.path.join(work, "points.gpkg"),
                 pts_pq])
            pg.sql("CREATE TABLE points (id bigint, x float8, y float8)")
            run(["psql", pg.uri, "-q", "-c", f"\\copy points FROM '{pts_csv}' CSV HEADER"])
            pg.sql("ALTER TABLE points ADD COLUMN geom geometry(Point, 4326); "
                   "UPDATE points SET geom = ST_SetSRID(ST_MakePoint(x, y), 4326); "
                   "CREATE INDEX ON points USING gist (geom); ANALYZE points")
            out = os.path.join(work, "pc.csv")
            g_s, g_rss = geolake_time(a.runs, gl + [
                "join", pts_pq, counties, "-o", out, "--aggregate", "count", "--how", "left",
                "--columns", "geoid,count", out])
            ours = counts_of_csv(out, "geoid")
            q = ("SELECT c.geoid, count(p.id) AS n FROM counties c LEFT JOIN points p "
                 "ON ST_Intersects(c.geom, p.geom) GROUP BY c.geoid")
            theirs = counts_of_pg(pg.sql(q.replace("AS n", "")))
            assert ours == theirs, f"points: geolake and PostGIS differ on {len(set(ours.items()) ^ set(theirs.items()))} counties"
            ps = min(pg.timed_ctas(q, SERIAL) for _ in range(a.runs))
            pp = min(pg.timed_ctas(q, PARALLEL) for _ in range(a.runs))
            gout = os.path.join(work, "gpd_pc.csv")
            # GeoPandas reads the GeoPackage (Debian 12 has no pyarrow for read_parquet).
            gp_s, gp_rss = gpd_time(a.runs, GPD_POINTS, [os.path.join(work, "points.gpkg"),
                                                          counties, "geoid", "intersects", gout])
            assert counts_of_csv(gout, "geoid") == ours, "points: GeoPandas differs"
            rows.append((f"{a.points} points x counties (count)", g_s, g_rss, ps, pp, gp_s, gp_rss, 5))

        if "cities" in cases:
            cities = os.path.join(DATA, "geonames_cities500.fgb")
            countries = os.path.join(DATA, "ne_countries_10m.gpkg")
            pg.load(cities, "cities")
            pg.load(countries, "countries")
            out = os.path.join(work, "cc.csv")
            g_s, g_rss = geolake_time(a.runs, gl + [
                "join", cities, countries, "-o", out, "--predicate", "within", "--aggregate",
                "count", "--columns", "name,count", out])
            ours = counts_of_csv(out, "name")
            q = ("SELECT c.name, count(p.*) AS n FROM countries c JOIN cities p "
                 "ON ST_Within(p.geom, c.geom) GROUP BY c.name")
            theirs = counts_of_pg(pg.sql(q.replace("AS n", "")))
            assert ours == theirs, "cities: geolake and PostGIS differ"
            ps = min(pg.timed_ctas(q, SERIAL) for _ in range(a.runs))
            pp = min(pg.timed_ctas(q, PARALLEL) for _ in range(a.runs))
            gout = os.path.join(work, "gpd_cc.csv")
            gp_s, gp_rss = gpd_time(a.runs, GPD_POINTS, [cities, countries, "name", "within", gout])
            gp_counts = counts_of_csv(gout, "name")
            if gp_counts != ours:
                print(f"# cities: GeoPandas differs on {len(set(gp_counts.items()) ^ set(ours.items()))} "
                      "countries (shapely on invalid polygons; geolake repairs them first)")
            rows.append(("cities500 x NE countries (within, count)", g_s, g_rss, ps, pp, gp_s, gp_rss, 5))

        if "overlap" in cases:
            sq = os.path.join(work, "squares.geojsonl")
            with open(sq, "w") as f:
                for i in range(a.squares):
                    x, y = rnd.uniform(-124, -67), rnd.uniform(25, 49)
                    d = rnd.uniform(0.02, 0.2)
                    ring = [[x, y], [x + d, y], [x + d, y + d], [x, y + d], [x, y]]
                    f.write(json.dumps({"type": "Feature", "properties": {"id": i},
                                        "geometry": {"type": "Polygon", "coordinates": [ring]}}) + "\n")
            sq_pq = os.path.join(work, "squares.parquet")
            run([a.geolake, "--progress", "off", "convert", sq, sq_pq])
            pg.load(sq, "squares")
            out = os.path.join(work, "lo.csv")
            g_s, g_rss = geolake_time(a.runs, gl + [
                "join", sq_pq, counties, "-o", out, "--predicate", "largest-overlap",
                "--columns", "id,geoid", out])
            with open(out, newline="") as f:
                ours = {r["id"]: (r["geoid"], float(r["overlap_area"])) for r in csv.DictReader(f)}
            q = ("SELECT DISTINCT ON (s.id) s.id, c.geoid, ST_Area(ST_Intersection(s.geom, "
                 "ST_MakeValid(c.geom))) AS a FROM squares s JOIN counties c ON "
                 "ST_Intersects(s.geom, c.geom) ORDER BY s.id, 3 DESC")
            theirs = {}
            for line in pg.sql(q).splitlines():
                i, g, ar = line.split("|")
                theirs[i] = (g, float(ar))
            differ = [i for i in theirs if i in ours and ours[i][0] != theirs[i][0]
                      and abs(ours[i][1] - theirs[i][1]) > 1e-9 * max(1.0, theirs[i][1])]
            missing = set(theirs) ^ {i for i, v in ours.items() if v[1] > 0}
            assert not differ and not missing, f"overlap: {len(differ)} assignments differ, {len(missing)} missing"
            ps = min(pg.timed_ctas(q, SERIAL) for _ in range(a.runs))
            pp = min(pg.timed_ctas(q, PARALLEL) for _ in range(a.runs))
            gout = os.path.join(work, "gpd_lo.csv")
            gp_s, gp_rss = gpd_time(a.runs, GPD_OVERLAP, [sq, counties, gout])
            rows.append((f"{a.squares} squares -> counties (largest-overlap)", g_s, g_rss, ps, pp, gp_s, gp_rss, 3))
    finally:
        if pg:
            pg.stop()
        shutil.rmtree(work, ignore_errors=True)

    print(f"{'case':48} {'geolake':>8} {'pg_ser':>8} {'pg_par2':>8} {'gpd':>8} | "
          f"{'pgbest/gl':>9} {'gpd/gl':>7} | {'gl MiB':>7} {'gpd MiB':>7} | target")
    for name, g, g_rss, ps, pp, gp, gp_rss, target in rows:
        pgbest = min(ps, pp)
        print(f"{name:48} {g:8.2f} {ps:8.2f} {pp:8.2f} {gp:8.2f} | {pgbest / g:9.2f} {gp / g:7.2f} | "
              f"{g_rss / 1024:7.0f} {gp_rss / 1024:7.0f} | >= {target}x PostGIS, >= 10x GeoPandas")


if __name__ == "__main__":
    main()
