-- Each ledger key's validity (docs/ledger.md, "Keys and rotation"), published in the keys document so a verifier
-- refuses a checkpoint signed outside it: `not_before`, when the key began signing here (null: a key published
-- only, from before this database); `not_after`, when a newer key took over (null: the current key). Each is set
-- once: the key's row stays immutable otherwise.
ALTER TABLE "ledger_keys" ADD COLUMN "not_before" TIMESTAMPTZ(3), ADD COLUMN "not_after" TIMESTAMPTZ(3);

CREATE FUNCTION "ledger_keys_validity_once"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."id" IS DISTINCT FROM OLD."id" OR NEW."public_key" IS DISTINCT FROM OLD."public_key"
     OR NEW."created_at" IS DISTINCT FROM OLD."created_at"
     OR (OLD."not_before" IS NOT NULL AND NEW."not_before" IS DISTINCT FROM OLD."not_before")
     OR (OLD."not_after" IS NOT NULL AND NEW."not_after" IS DISTINCT FROM OLD."not_after") THEN
    RAISE EXCEPTION 'ledger_keys rows are immutable: only a validity not yet set can be set, once'
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
DROP TRIGGER "ledger_keys_append_only" ON "ledger_keys";
CREATE TRIGGER "ledger_keys_append_only" BEFORE DELETE ON "ledger_keys"
  FOR EACH ROW EXECUTE FUNCTION "refuse_change"();
CREATE TRIGGER "ledger_keys_no_truncate" BEFORE TRUNCATE ON "ledger_keys"
  FOR EACH STATEMENT EXECUTE FUNCTION "refuse_change"();
CREATE TRIGGER "ledger_keys_validity_once" BEFORE UPDATE ON "ledger_keys"
  FOR EACH ROW EXECUTE FUNCTION "ledger_keys_validity_once"();

-- Keys that signed before this release: each began at the earlier of its record and its first checkpoint, and
-- ended when the next began (or after its own last checkpoint, where two keys signed at once). Keys that signed
-- nothing yet keep both null: the configured one begins at the next start (src/ledger/keys.ts); the others are
-- published only, and the keys document ends them where the first key that signed here began.
WITH signed AS (
  SELECT k."id", LEAST(k."created_at", min(c."created_at")) AS "began", max(c."created_at") AS "last"
    FROM "ledger_keys" AS k JOIN "ledger_checkpoints" AS c ON c."key_id" = k."id"
   GROUP BY k."id", k."created_at"),
ordered AS (
  SELECT "id", "began", "last", lead("began") OVER (ORDER BY "began", "id") AS "next" FROM signed)
UPDATE "ledger_keys" AS k
   SET "not_before" = o."began",
       "not_after" = CASE WHEN o."next" IS NULL THEN NULL ELSE GREATEST(o."next", o."last" + interval '1 millisecond') END
  FROM ordered AS o
 WHERE k."id" = o."id";
