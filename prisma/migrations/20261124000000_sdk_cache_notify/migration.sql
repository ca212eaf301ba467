-- The SDK config cache of every instance (src/sdk/cache.ts) listens on `sdk_cache` and drops a
-- project's entry when one of these commits: a version is published, a key is revoked, or the
-- project's allowed origins change. The payload is the project id. NOTIFY is delivered at commit.
CREATE FUNCTION "notify_sdk_cache"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'projects' THEN
    PERFORM pg_notify('sdk_cache', NEW.id);
  ELSE
    PERFORM pg_notify('sdk_cache', NEW.project_id);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "consent_versions_notify_sdk_cache" AFTER INSERT ON "consent_versions"
  FOR EACH ROW EXECUTE FUNCTION "notify_sdk_cache"();
CREATE TRIGGER "api_keys_notify_sdk_cache" AFTER UPDATE ON "api_keys"
  FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at) EXECUTE FUNCTION "notify_sdk_cache"();
CREATE TRIGGER "projects_notify_sdk_cache" AFTER UPDATE ON "projects"
  FOR EACH ROW WHEN (OLD.enforce_origins IS DISTINCT FROM NEW.enforce_origins OR OLD.allowed_origins IS DISTINCT FROM NEW.allowed_origins)
  EXECUTE FUNCTION "notify_sdk_cache"();
