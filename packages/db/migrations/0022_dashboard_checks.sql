-- Two checks the first dashboard migration left out: a session's role is one of the roles, and an
-- address is stored one way. NOT VALID, as for the letters' constraints: every row written from
-- now on is checked, and the rows already there (written by code that kept both rules) are not
-- read under the table's lock.
ALTER TABLE "dashboard_sessions" ADD CONSTRAINT "dashboard_sessions_known_role" CHECK (role IN ('owner', 'member', 'viewer')) NOT VALID;--> statement-breakpoint
ALTER TABLE "dashboard_users" ADD CONSTRAINT "dashboard_users_email_normalized" CHECK ("dashboard_users"."email" = lower(btrim("dashboard_users"."email"))) NOT VALID;
