-- Audit events written outside any request (the admin tool, `npm run admin -- member …`) have no signed-in
-- actor: `actor_via` names the tool instead ("admin-cli"); NULL for events of operator requests.
ALTER TABLE "audit_events" ADD COLUMN "actor_via" TEXT;
