-- Schema version 3: which installation of Rein created a task.
--
-- A `.rein/state.db` can arrive with a repository. A task is resumed on its
-- own only by the installation that created it (a random id kept in the
-- user's own state, outside every workspace); NULL for tasks written before
-- this version, which are therefore never resumed without being asked.
ALTER TABLE tasks ADD COLUMN installation TEXT;

PRAGMA user_version = 3;
