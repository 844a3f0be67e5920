"""The parts of `slmactor import sessions` (the command itself is `slmactor.cli.import_sessions`):
finding files and reading them whatever a disk holds (`files`), what earlier runs imported
(`state`), where a session whose directory is gone belongs (`places`), progress a person can
read (`progress`), histories committed to git (`gitsource`), and the import loop (`run`)."""
