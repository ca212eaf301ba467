-- Consent analytics: what visitors did and where (issue 16), and a cheaper write (issue 14).
--
-- Actions are a fixed set, so they are plain integer columns; jurisdictions are open-ended codes, so they are
-- a JSONB map like `purposes` (code → receipts). Existing rows only gain columns (zeros, `{}`): nothing to convert.
ALTER TABLE "consent_stats_daily"
  ADD COLUMN "action_accept_all" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "action_reject_all" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "action_custom" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "action_opt_out" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "action_gpc" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "jurisdictions" JSONB NOT NULL DEFAULT '{}';

-- The writer's upsert, as a function: PL/pgSQL keeps the plan of its INSERT for the session, so a batch costs
-- no parse and plan of the upsert (about two thirds of what the rollup added to a batch on PostgreSQL when the
-- statement was sent whole each time; bench/README.md). `buckets` is the batch summed per
-- (project, UTC day, version) by src/stats/rollup.ts, in key order (rows are locked in that order, so two
-- transactions cannot deadlock); `slot` is the writer's transaction slot, the shard it adds to.
CREATE FUNCTION "consent_stats_add"(slot SMALLINT, buckets JSON) RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO consent_stats_daily AS s (project_id, day, version_id, shard, receipts, accepted_all, rejected_all, customised, gpc,
                                        action_accept_all, action_reject_all, action_custom, action_opt_out, action_gpc,
                                        purposes, jurisdictions)
  SELECT b.project_id, b.day, b.version_id, slot, b.receipts, b.accepted_all, b.rejected_all, b.customised, b.gpc,
         b.accept_all, b.reject_all, b.custom, b.opt_out, b.gpc_action, b.purposes, b.jurisdictions
  FROM json_to_recordset(buckets) AS b(project_id TEXT, day DATE, version_id TEXT, receipts INT, accepted_all INT, rejected_all INT,
                                       customised INT, gpc INT, accept_all INT, reject_all INT, custom INT, opt_out INT, gpc_action INT,
                                       purposes JSONB, jurisdictions JSONB)
  ON CONFLICT (project_id, day, version_id, shard) DO UPDATE SET
    receipts = s.receipts + EXCLUDED.receipts,
    accepted_all = s.accepted_all + EXCLUDED.accepted_all,
    rejected_all = s.rejected_all + EXCLUDED.rejected_all,
    customised = s.customised + EXCLUDED.customised,
    gpc = s.gpc + EXCLUDED.gpc,
    action_accept_all = s.action_accept_all + EXCLUDED.action_accept_all,
    action_reject_all = s.action_reject_all + EXCLUDED.action_reject_all,
    action_custom = s.action_custom + EXCLUDED.action_custom,
    action_opt_out = s.action_opt_out + EXCLUDED.action_opt_out,
    action_gpc = s.action_gpc + EXCLUDED.action_gpc,
    purposes = (
      SELECT COALESCE(jsonb_object_agg(key, total), '{}') FROM (
        SELECT key, sum(value::bigint) AS total
        FROM (SELECT * FROM jsonb_each_text(s.purposes) UNION ALL SELECT * FROM jsonb_each_text(EXCLUDED.purposes)) e
        GROUP BY key
      ) t
    ),
    -- Most receipts of contract clients carry no jurisdiction: skip the merge then.
    jurisdictions = CASE WHEN EXCLUDED.jurisdictions = '{}' THEN s.jurisdictions ELSE (
      SELECT jsonb_object_agg(key, total) FROM (
        SELECT key, sum(value::bigint) AS total
        FROM (SELECT * FROM jsonb_each_text(s.jurisdictions) UNION ALL SELECT * FROM jsonb_each_text(EXCLUDED.jurisdictions)) e
        GROUP BY key
      ) t
    ) END;
END $$;

-- Backfill (test/stats.test.ts runs the statement below again): receipts that already carry an action or a
-- jurisdiction (stored since 20261130100000) are added to shard 0 of their day, without touching the other
-- counts, which the rollup already holds.
WITH counted AS (
  SELECT project_id, version_id, (created_at AT TIME ZONE 'UTC')::date AS day,
         count(*) FILTER (WHERE action = 'accept_all') AS accept_all,
         count(*) FILTER (WHERE action = 'reject_all') AS reject_all,
         count(*) FILTER (WHERE action = 'custom') AS custom,
         count(*) FILTER (WHERE action = 'opt_out') AS opt_out,
         count(*) FILTER (WHERE action = 'gpc') AS gpc_action
  FROM receipts WHERE action IS NOT NULL OR jurisdiction IS NOT NULL
  GROUP BY 1, 2, 3
), places AS (
  SELECT project_id, version_id, day, jsonb_object_agg(jurisdiction, n) AS jurisdictions
  FROM (
    SELECT project_id, version_id, (created_at AT TIME ZONE 'UTC')::date AS day, jurisdiction, count(*) AS n
    FROM receipts WHERE jurisdiction IS NOT NULL
    GROUP BY 1, 2, 3, 4
  ) j
  GROUP BY 1, 2, 3
)
INSERT INTO consent_stats_daily AS s (project_id, day, version_id, shard, action_accept_all, action_reject_all, action_custom,
                                      action_opt_out, action_gpc, jurisdictions)
SELECT c.project_id, c.day, c.version_id, 0, c.accept_all, c.reject_all, c.custom, c.opt_out, c.gpc_action, COALESCE(p.jurisdictions, '{}')
FROM counted c LEFT JOIN places p USING (project_id, version_id, day)
ON CONFLICT (project_id, day, version_id, shard) DO UPDATE SET
  action_accept_all = s.action_accept_all + EXCLUDED.action_accept_all,
  action_reject_all = s.action_reject_all + EXCLUDED.action_reject_all,
  action_custom = s.action_custom + EXCLUDED.action_custom,
  action_opt_out = s.action_opt_out + EXCLUDED.action_opt_out,
  action_gpc = s.action_gpc + EXCLUDED.action_gpc,
  jurisdictions = EXCLUDED.jurisdictions;
