-- Issue 45 (extensions.md section 13): receipts that survive the network, and where a receipt came from.

-- The consent POST's Idempotency-Key (docs/sdk-api.md, "Idempotency-Key"): one row per project and key, written
-- by the receipt writer in the same statement as the receipt, so a key is taken exactly when its receipt is
-- stored. A second statement with the same key fails on the primary key (it waits for the first to commit), and
-- the writer answers it with the first receipt. `request_hash` is SHA-256 of the parsed body's canonical JSON
-- (RFC 8785): the same key with another body is refused. Rows older than 24 hours mean nothing and are deleted
-- by the idempotency-key purge worker (src/sdk/idempotency.ts, started in src/workers.ts).
CREATE TABLE "sdk_idempotency_keys" (
  "project_id" TEXT NOT NULL REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "key" TEXT NOT NULL,
  "request_hash" BYTEA NOT NULL,
  "receipt_id" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT "sdk_idempotency_keys_pkey" PRIMARY KEY ("project_id", "key")
);
CREATE INDEX "sdk_idempotency_keys_created_at_idx" ON "sdk_idempotency_keys" ("created_at");

-- Where a receipt came from, as its SDK says: {sdk, sdkVersion, platform, appId?, appVersion?} (null when not
-- sent). On the partitioned table, so every partition gains it.
ALTER TABLE "receipts" ADD COLUMN "source" JSONB;

-- Analytics by platform: the rollup is keyed by the source's platform too ('' for receipts without a source).
-- Existing rows are receipts without one.
ALTER TABLE "consent_stats_daily" ADD COLUMN "platform" TEXT NOT NULL DEFAULT '';
ALTER TABLE "consent_stats_daily" DROP CONSTRAINT "consent_stats_daily_pkey";
ALTER TABLE "consent_stats_daily" ADD CONSTRAINT "consent_stats_daily_pkey" PRIMARY KEY ("project_id", "day", "version_id", "platform", "shard");

-- The writer's upsert (20261130200000) with the platform in its key; `buckets` rows carry it.
CREATE OR REPLACE FUNCTION "consent_stats_add"(slot SMALLINT, buckets JSON) RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO consent_stats_daily AS s (project_id, day, version_id, platform, shard, receipts, accepted_all, rejected_all, customised, gpc,
                                        action_accept_all, action_reject_all, action_custom, action_opt_out, action_gpc,
                                        purposes, jurisdictions)
  SELECT b.project_id, b.day, b.version_id, COALESCE(b.platform, ''), slot, b.receipts, b.accepted_all, b.rejected_all, b.customised, b.gpc,
         b.accept_all, b.reject_all, b.custom, b.opt_out, b.gpc_action, b.purposes, b.jurisdictions
  FROM json_to_recordset(buckets) AS b(project_id TEXT, day DATE, version_id TEXT, platform TEXT, receipts INT, accepted_all INT, rejected_all INT,
                                       customised INT, gpc INT, accept_all INT, reject_all INT, custom INT, opt_out INT, gpc_action INT,
                                       purposes JSONB, jurisdictions JSONB)
  ON CONFLICT (project_id, day, version_id, platform, shard) DO UPDATE SET
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
    jurisdictions = CASE WHEN EXCLUDED.jurisdictions = '{}' THEN s.jurisdictions ELSE (
      SELECT jsonb_object_agg(key, total) FROM (
        SELECT key, sum(value::bigint) AS total
        FROM (SELECT * FROM jsonb_each_text(s.jurisdictions) UNION ALL SELECT * FROM jsonb_each_text(EXCLUDED.jurisdictions)) e
        GROUP BY key
      ) t
    ) END;
END $$;
