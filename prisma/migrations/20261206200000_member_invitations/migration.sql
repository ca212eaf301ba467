-- An Owner's addMember invites: the invitee becomes a member only by accepting (docs/security.md, "Member
-- invitations"). One pending invitation per organization and user; who invited is kept as they were then.
CREATE TABLE "invitations" (
  "id" TEXT PRIMARY KEY,
  "organization_id" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "user_id" TEXT NOT NULL REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "role" "Role" NOT NULL,
  "invited_by_email" TEXT NOT NULL,
  "invited_by_name" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "invitations_organization_id_user_id_key" ON "invitations"("organization_id", "user_id");
CREATE INDEX "invitations_user_id_idx" ON "invitations"("user_id");
