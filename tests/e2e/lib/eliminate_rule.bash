# eliminate_rule_sql NAME THRESHOLD ORDER [GROUP_COLUMN]: prints the SQL (PL/pgSQL) of the
# small-polygon elimination rule of docs/cli.md ("eliminate"), the independent statement of the
# rule that tests/e2e/eliminate_vs_postgis.sh compares geolake with and bench/ops/dissolve.sh
# times as PostGIS's side.
#
# Input tables: c(rid bigint, area double precision[, GROUP_COLUMN]) and borders(a, b, len): the
# shared border length of each pair a < b that touches along a line (len > 0) where one of them
# is below THRESHOLD. Rounds until no region below THRESHOLD has a neighbour left: each such
# region picks its neighbour by ORDER (an ORDER BY after the candidate; aliases e (a, b, len)
# and ra, rb (rid, area[, GROUP_COLUMN]) of the region and its candidate), mutual choices keep
# the larger (ties to the lower row id), chains go to their root, and merged areas and borders
# add up. With GROUP_COLUMN, only neighbours of the same group count.
# Output: NAME_owner(rid, owner) and NAME_rounds(n); work tables NAME_r and NAME_e stay.
eliminate_rule_sql() {
  local name="$1" threshold="$2" order="$3" group="${4:-}" columns="rid, area" same="true"
  if [ -n "$group" ]; then
    columns="rid, area, $group"
    same="ra.$group = rb.$group"
  fi
  cat <<SQL
CREATE TABLE ${name}_owner AS SELECT rid, rid AS owner FROM c;
CREATE TABLE ${name}_r AS SELECT $columns FROM c;
CREATE TABLE ${name}_e AS SELECT a, b, len FROM borders UNION ALL SELECT b, a, len FROM borders;
CREATE TABLE ${name}_rounds (n int);
DO \$\$
DECLARE n bigint; rounds int := 0;
BEGIN
  LOOP
    CREATE TEMP TABLE ch AS
      SELECT DISTINCT ON (e.a) e.a AS r, e.b AS t
      FROM ${name}_e e JOIN ${name}_r ra ON ra.rid = e.a JOIN ${name}_r rb ON rb.rid = e.b
      WHERE ra.area < $threshold AND $same
      ORDER BY e.a, $order;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n = 0 THEN DROP TABLE ch; EXIT; END IF;
    rounds := rounds + 1;
    DELETE FROM ch USING ch c2, ${name}_r ra, ${name}_r rt
      WHERE c2.r = ch.t AND c2.t = ch.r AND ra.rid = ch.r AND rt.rid = ch.t
        AND (ra.area > rt.area OR (ra.area = rt.area AND ch.r > ch.t));
    CREATE TEMP TABLE rt AS
      WITH RECURSIVE walk(r, cur) AS (
        SELECT r, t FROM ch
        UNION ALL
        SELECT w.r, ch.t FROM walk w JOIN ch ON ch.r = w.cur)
      SELECT r, cur AS root FROM walk w WHERE NOT EXISTS (SELECT 1 FROM ch WHERE ch.r = w.cur);
    UPDATE ${name}_r SET area = ${name}_r.area + s.add
      FROM (SELECT root, sum(x.area) AS add FROM rt JOIN ${name}_r x ON x.rid = rt.r
            GROUP BY root) s
      WHERE ${name}_r.rid = s.root;
    UPDATE ${name}_owner o SET owner = rt.root FROM rt WHERE o.owner = rt.r;
    DELETE FROM ${name}_r USING rt WHERE ${name}_r.rid = rt.r;
    CREATE TEMP TABLE e2 AS
      SELECT coalesce(x.root, e.a) AS a, coalesce(y.root, e.b) AS b, sum(e.len) AS len
      FROM ${name}_e e LEFT JOIN rt x ON x.r = e.a LEFT JOIN rt y ON y.r = e.b
      GROUP BY 1, 2;
    DELETE FROM e2 WHERE a = b;
    DELETE FROM ${name}_e;
    INSERT INTO ${name}_e SELECT * FROM e2;
    DROP TABLE e2; DROP TABLE rt; DROP TABLE ch;
  END LOOP;
  INSERT INTO ${name}_rounds VALUES (rounds);
END \$\$;
SQL
}
