-- Consent analytics (extensions.md §5): receipts counted per project, version and UTC day,
-- kept by the receipt writer in the receipt's own transaction (src/sdk/receipt-writer.ts).
-- `shard` lets the writer's concurrent transactions add to different rows of the same day
-- instead of queueing on one row lock; readers sum over it. `purposes` maps every purpose
-- key to how many of the day's receipts granted it.
CREATE TABLE "consent_stats_daily" (
  "project_id" TEXT NOT NULL REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "day" DATE NOT NULL,
  "version_id" TEXT NOT NULL REFERENCES "consent_versions"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "shard" SMALLINT NOT NULL DEFAULT 0,
  "receipts" INTEGER NOT NULL DEFAULT 0,
  "accepted_all" INTEGER NOT NULL DEFAULT 0,
  "rejected_all" INTEGER NOT NULL DEFAULT 0,
  "customised" INTEGER NOT NULL DEFAULT 0,
  "gpc" INTEGER NOT NULL DEFAULT 0,
  "purposes" JSONB NOT NULL DEFAULT '{}',
  PRIMARY KEY ("project_id", "day", "version_id", "shard")
);

-- Backfill (test/stats.test.ts runs the statement below again on an emptied table).
-- acceptedAll: every optional purpose of the version granted (also when it has none);
-- rejectedAll: every optional purpose denied; customised: the rest.
WITH optional AS (
  SELECT v.id AS version_id, array_agg(p->>'key') AS keys
  FROM consent_versions v, jsonb_array_elements(v.config->'purposes') p
  WHERE NOT COALESCE((p->>'required')::boolean, false)
  GROUP BY v.id
), classified AS (
  SELECT r.project_id, r.version_id, (r.created_at AT TIME ZONE 'UTC')::date AS day, r.gpc, r.choices,
         COALESCE(cardinality(o.keys), 0) AS optional,
         (SELECT count(*) FROM unnest(o.keys) k WHERE r.choices->>k = 'true') AS granted
  FROM receipts r LEFT JOIN optional o ON o.version_id = r.version_id
), counts AS (
  SELECT project_id, version_id, day, count(*) AS receipts,
         count(*) FILTER (WHERE granted = optional) AS accepted_all,
         count(*) FILTER (WHERE granted = 0 AND optional > 0) AS rejected_all,
         count(*) FILTER (WHERE granted > 0 AND granted < optional) AS customised,
         count(*) FILTER (WHERE gpc) AS gpc
  FROM classified GROUP BY project_id, version_id, day
), purposes AS (
  SELECT project_id, version_id, day, jsonb_object_agg(key, granted) AS purposes
  FROM (
    SELECT c.project_id, c.version_id, c.day, e.key, count(*) FILTER (WHERE e.value = 'true') AS granted
    FROM classified c, jsonb_each_text(c.choices) e
    GROUP BY c.project_id, c.version_id, c.day, e.key
  ) g
  GROUP BY project_id, version_id, day
)
INSERT INTO consent_stats_daily (project_id, day, version_id, shard, receipts, accepted_all, rejected_all, customised, gpc, purposes)
SELECT c.project_id, c.day, c.version_id, 0, c.receipts, c.accepted_all, c.rejected_all, c.customised, c.gpc, COALESCE(p.purposes, '{}')
FROM counts c LEFT JOIN purposes p USING (project_id, version_id, day);
