"""The command line as a shell meets it: completion scripts (`completion`) and "did you mean"
for a mistyped command or option (`suggest`)."""
