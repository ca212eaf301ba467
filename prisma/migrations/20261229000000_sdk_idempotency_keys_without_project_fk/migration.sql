-- Issue 45: the Idempotency-Key's row is written with its receipt by the receipt writer's statement, whose receipt
-- row already checks its project (receipts_project_id_fkey): the key's own foreign key checked the same project
-- again, a trigger and a row lock per keyed receipt, 6 of its 8 µs of database CPU (bench/README.md). Projects are
-- never deleted (a project with receipts cannot be: receipts RESTRICT), so the cascade it offered never ran.
ALTER TABLE "sdk_idempotency_keys" DROP CONSTRAINT "sdk_idempotency_keys_project_id_fkey";
