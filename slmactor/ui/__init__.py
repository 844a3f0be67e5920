"""`slmactor ui`: a local page to see and curate what slmactor remembers.

Rooms: `access` (who may ask: loopback only, the launch's token, this user's uid), `views` (what
the page shows, read through the daemon's asks — the page keeps no state and writes no file),
`html` (the page itself, pure rendering), `server` (the HTTP door and the actions, each one ask
the CLI sends too).

The stack is Python's own `http.server` and server-rendered HTML with inline SVG charts: no
JavaScript, no build step, no dependency to install or audit, and nothing fetched from anywhere.
A page read once per click by one user does not need more; every action is a plain HTML form.
"""
