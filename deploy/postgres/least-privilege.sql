-- PostgreSQL least privilege (issue 12, docs/security.md): one login role per service that owns
-- its schema and nothing else, so that a service (or whoever takes over its pod) reads and writes
-- its own tables only. The development default stays one superuser URL; production uses this
-- (Kubernetes: deploy/k8s/overlays/prod/cnpg-cluster.yaml declares the same roles and schemas).
--
-- Run it as a superuser (or a role with CREATEROLE that owns the database) in the service
-- database; it is idempotent, and on a database that the services already migrated as one
-- superuser it hands each schema and its tables to the schema's role:
--
--   psql "postgres://postgres@HOST:5432/weave" -v ON_ERROR_STOP=1 -f deploy/postgres/least-privilege.sql
--
-- then give each role a password (ALTER ROLE gateway PASSWORD '…') and each service its own
-- DATABASE_URL (postgres://gateway:…@HOST:5432/weave, …). The roles cannot create databases or
-- schemas: the database and the schemas exist before the services start, and the services'
-- migrations only create tables in the schema their role owns.
--
--   role                  schema              used by
--   gateway               identity            gateway; ops platform/key commands
--   reporting_projection  reporting           reporting-projection
--   payouts_read          payouts             payouts-read
--   timezone_settings     timezone_settings   timezone-settings
--   recommendations       recommendations     recommendations; ops ads import/list (the catalog)

DO $$
DECLARE
  owner record;
  object record;
BEGIN
  FOR owner IN
    SELECT * FROM (VALUES
      ('gateway', 'identity'),
      ('reporting_projection', 'reporting'),
      ('payouts_read', 'payouts'),
      ('timezone_settings', 'timezone_settings'),
      ('recommendations', 'recommendations')
    ) AS t(role, schema)
  LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = owner.role) THEN
      EXECUTE format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS', owner.role);
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), owner.role);
    EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I AUTHORIZATION %I', owner.schema, owner.role);
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', owner.schema, owner.role);
    -- Tables, sequences and views made earlier by another role (a superuser's first start).
    FOR object IN
      SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = owner.schema AND c.relkind IN ('r', 'p', 'S', 'v', 'm')
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i'))
    LOOP
      EXECUTE format('ALTER %s %I.%I OWNER TO %I',
        CASE object.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END,
        owner.schema, object.relname, owner.role);
    END LOOP;
    -- Functions too (identity's version triggers call one).
    FOR object IN
      SELECT p.oid::regprocedure AS signature FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = owner.schema AND p.prokind = 'f'
    LOOP
      EXECUTE format('ALTER FUNCTION %s OWNER TO %I', object.signature, owner.role);
    END LOOP;
  END LOOP;
  -- Nobody else connects to this database, creates objects in it or in `public` (PostgreSQL 15
  -- already keeps `public` closed; older versions do not).
  EXECUTE format('REVOKE CONNECT, TEMPORARY, CREATE ON DATABASE %I FROM PUBLIC', current_database());
  REVOKE CREATE ON SCHEMA public FROM PUBLIC;
END $$;
