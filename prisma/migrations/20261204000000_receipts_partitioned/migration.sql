-- Receipts partitioned by month of created_at (issue 33; docs/scaling.md, "(a) Partitioning on PostgreSQL").
-- The existing table becomes the first partition, unchanged: `receipts_legacy`, everything before the first
-- month boundary after this migration (or after its newest receipt, when a clock put one later). No row is
-- copied, so none can be lost or duplicated. Later months get a partition each, made ahead by the service
-- (src/receipts/partitions.ts). Keys: PRIMARY KEY (project_id, created_at, id), which is also the list and
-- export index; receipts_decision for /decision; created_at alone for lookups that know only an id.

-- A receipt's id is a uuidv7 whose time is its created_at to the millisecond (src/receipts/ids.ts), so a lookup
-- that knows only an id knows its month. NULL for text that is not a uuidv7.
CREATE FUNCTION "receipt_id_time"(id TEXT) RETURNS TIMESTAMPTZ LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-7' THEN to_timestamp(('x' || substr(id, 1, 8) || substr(id, 10, 4))::bit(48)::bigint / 1000.0::float8) END
$$;

-- A receipt id for a time, for receipts written with SQL (tests, benches, imports): the time rounded to the
-- millisecond as the column keeps it, then 74 random bits (a v4 uuid's, after its version digit).
CREATE FUNCTION "receipt_id"(created_at TIMESTAMPTZ) RETURNS TEXT LANGUAGE sql VOLATILE AS $$
  SELECT substr(lpad(to_hex((extract(epoch FROM created_at::timestamptz(3)) * 1000)::bigint), 12, '0'), 1, 8) || '-'
      || substr(lpad(to_hex((extract(epoch FROM created_at::timestamptz(3)) * 1000)::bigint), 12, '0'), 9, 4) || '-7'
      || substr(gen_random_uuid()::text, 16)
$$;

-- Makes the partition of the UTC month holding `at`, unless it exists or the legacy partition holds that month
-- (a fresh installation may drop its empty legacy partition to import history by month: docs/operations.md);
-- returns its name, or NULL when nothing was made. Partitions do not inherit statement triggers, so each gets
-- its own TRUNCATE refusal, and a check that the id carries the receipt's time. One maker at a time: the
-- partition worker of every instance and the receipt writer's fallback take the same lock.
CREATE FUNCTION "receipts_make_partition"(at TIMESTAMPTZ) RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
  month TIMESTAMP := date_trunc('month', at AT TIME ZONE 'UTC');
  name TEXT := 'receipts_' || to_char(month, 'YYYY_MM');
BEGIN
  PERFORM pg_advisory_xact_lock(72707333);
  IF to_regclass(name) IS NOT NULL OR (to_regclass('receipts_legacy') IS NOT NULL AND month AT TIME ZONE 'UTC' < (receipts_legacy()).before) THEN
    RETURN NULL;
  END IF;
  EXECUTE format('CREATE TABLE %I PARTITION OF receipts (CONSTRAINT receipts_id_time CHECK (coalesce(receipt_id_time(id) = created_at, false)))
                  FOR VALUES FROM (%L) TO (%L)', name, month AT TIME ZONE 'UTC', (month + interval '1 month') AT TIME ZONE 'UTC');
  EXECUTE format('CREATE TRIGGER receipts_no_truncate BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION refuse_change()', name);
  RETURN name;
END;
$$;

DO $migration$
DECLARE
  boundary TIMESTAMPTZ;
  newest TIMESTAMPTZ;
  bound_check TEXT;
  scanned_at TIMESTAMPTZ;
  skew_ms BIGINT;
  other_ids BOOLEAN;
  prebuilt RECORD;
BEGIN
  -- The new key and the created_at index: built here (the table is locked meanwhile), unless a large
  -- installation built them beforehand with CREATE [UNIQUE] INDEX CONCURRENTLY (docs/operations.md).
  FOR prebuilt IN
    SELECT * FROM (VALUES ('receipts_legacy_key', 'CREATE UNIQUE INDEX receipts_legacy_key ON receipts (project_id, created_at, id)', 'UNIQUE INDEX receipts_legacy_key ON % USING btree (project_id, created_at, id)'),
                          ('receipts_legacy_created_at_idx', 'CREATE INDEX receipts_legacy_created_at_idx ON receipts (created_at)', 'INDEX receipts_legacy_created_at_idx ON % USING btree (created_at)'))
      AS i(name, build, shape)
  LOOP
    IF to_regclass(prebuilt.name) IS NULL THEN
      EXECUTE prebuilt.build;
    ELSIF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(prebuilt.name) AND indrelid = 'receipts'::regclass AND indisvalid
                        AND pg_get_indexdef(indexrelid) LIKE 'CREATE ' || prebuilt.shape) THEN
      RAISE EXCEPTION 'index % exists but is not a valid "%": drop it (DROP INDEX CONCURRENTLY %) and build it again, or let this migration build it',
        prebuilt.name, prebuilt.build, prebuilt.name;
    END IF;
  END LOOP;

  -- How far the legacy receipts' ids are from their created_at (the old code took the two apart), and whether any
  -- id is not a uuidv7 at all: lookups by id widen their time window by that (receipts_legacy(), src/receipts/ids.ts).
  -- One read of the whole table, during which receipts are still written when the indexes above were built
  -- beforehand; those are measured once writers are locked out, below.
  scanned_at := clock_timestamp();
  SELECT coalesce(max(abs(extract(epoch FROM created_at - receipt_id_time(id)) * 1000)), 0)::bigint,
         coalesce(bool_or(receipt_id_time(id) IS NULL), false)
    INTO skew_ms, other_ids FROM receipts;
  LOCK TABLE receipts IN ACCESS EXCLUSIVE MODE;
  -- Receipts committed since: stamped at most DATABASE_WAIT_MS before their commit, so an hour covers them.
  SELECT greatest(skew_ms, coalesce(max(abs(extract(epoch FROM created_at - receipt_id_time(id)) * 1000)), 0)::bigint),
         other_ids OR coalesce(bool_or(receipt_id_time(id) IS NULL), false)
    INTO skew_ms, other_ids FROM receipts WHERE created_at >= scanned_at - interval '1 hour';

  -- The boundary: the first UTC month boundary after now and after the newest receipt (one probe of the index).
  SELECT max(created_at) INTO newest FROM receipts;
  boundary := (date_trunc('month', greatest(now(), newest) AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
  -- Or the one a large installation checked beforehand (ADD CONSTRAINT receipts_legacy_bound CHECK (created_at < '…')
  -- NOT VALID, then VALIDATE CONSTRAINT; docs/operations.md): then attaching the table needs no read of it.
  SELECT pg_get_constraintdef(oid) INTO bound_check FROM pg_constraint WHERE conrelid = 'receipts'::regclass AND conname = 'receipts_legacy_bound';
  IF bound_check IS NOT NULL THEN
    ALTER TABLE receipts VALIDATE CONSTRAINT receipts_legacy_bound; -- nothing to do when it was validated
    boundary := substring(bound_check FROM '''([^'']+)''')::timestamptz;
    IF bound_check NOT LIKE 'CHECK ((created_at < %::timestamp with time zone))'
       OR boundary <> date_trunc('month', boundary AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' OR boundary <= now() THEN
      RAISE EXCEPTION 'receipts_legacy_bound must be CHECK (created_at < <the first of a later month, 00:00 UTC>), not %', bound_check;
    END IF;
  END IF;

  ALTER TABLE receipts RENAME TO receipts_legacy;
  ALTER TABLE receipts_legacy DROP CONSTRAINT receipts_pkey; -- (id) alone cannot be the key of a partition
  ALTER TABLE receipts_legacy ADD CONSTRAINT receipts_legacy_pkey PRIMARY KEY USING INDEX receipts_legacy_key;
  DROP INDEX receipts_project_id_created_at_id_idx; -- the key serves lists (backwards) and exports (forwards)
  DROP INDEX receipts_version_id_created_at_idx;    -- the evidence package counts from the rollup (src/evidence/package.ts)
  ALTER INDEX receipts_project_id_installation_id_created_at_idx RENAME TO receipts_legacy_decision_idx;
  DROP TRIGGER receipts_append_only ON receipts_legacy; -- the parent's is cloned onto it
  IF bound_check IS NULL THEN
    EXECUTE format('ALTER TABLE receipts_legacy ADD CONSTRAINT receipts_legacy_bound CHECK (created_at < %L)', boundary);
  END IF;
  -- Receipts written from now on carry their time in their id, as in every other partition.
  ALTER TABLE receipts_legacy ADD CONSTRAINT receipts_id_time CHECK (coalesce(receipt_id_time(id) = created_at, false)) NOT VALID;

  CREATE TABLE receipts (LIKE receipts_legacy) PARTITION BY RANGE (created_at);
  ALTER TABLE receipts ADD CONSTRAINT receipts_pkey PRIMARY KEY (project_id, created_at, id);
  ALTER TABLE receipts ADD CONSTRAINT receipts_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE RESTRICT ON UPDATE CASCADE;
  ALTER TABLE receipts ADD CONSTRAINT receipts_version_id_fkey FOREIGN KEY (version_id) REFERENCES consent_versions(id) ON DELETE RESTRICT ON UPDATE CASCADE;
  ALTER TABLE receipts ADD CONSTRAINT receipts_api_key_id_fkey FOREIGN KEY (api_key_id) REFERENCES api_keys(id) ON DELETE RESTRICT ON UPDATE CASCADE;
  CREATE INDEX receipts_decision ON receipts (project_id, installation_id, created_at DESC);
  CREATE INDEX receipts_created_at_idx ON receipts (created_at);
  -- Cloned to every partition, present and future (the legacy one when it is attached).
  CREATE TRIGGER receipts_append_only BEFORE UPDATE OR DELETE ON receipts FOR EACH ROW EXECUTE FUNCTION refuse_change();
  CREATE TRIGGER receipts_no_truncate BEFORE TRUNCATE ON receipts FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
  -- Its indexes and foreign keys match the parent's, so they are adopted, not built or checked again.
  EXECUTE format('ALTER TABLE receipts ATTACH PARTITION receipts_legacy FOR VALUES FROM (MINVALUE) TO (%L)', boundary);
  ALTER TABLE receipts_legacy DROP CONSTRAINT receipts_legacy_bound; -- the partition bound says it now

  -- What the service needs to find a legacy receipt by id (src/receipts/ids.ts), fixed at this migration.
  EXECUTE format($f$CREATE FUNCTION receipts_legacy(OUT before TIMESTAMPTZ, OUT skew_ms BIGINT, OUT other_ids BOOLEAN)
                    LANGUAGE sql IMMUTABLE AS $body$ SELECT %L::timestamptz, %s::bigint, %L::boolean $body$$f$, boundary, skew_ms, other_ids);
  COMMENT ON FUNCTION receipts_legacy IS 'receipts_legacy partition: receipts before `before`; their ids'' time is within skew_ms of created_at, or (other_ids) not a uuidv7';

  -- This month and the next two (this month is usually the legacy partition's last).
  PERFORM receipts_make_partition((date_trunc('month', now() AT TIME ZONE 'UTC') + n * interval '1 month') AT TIME ZONE 'UTC')
     FROM generate_series(0, 2) AS n;
END;
$migration$;
