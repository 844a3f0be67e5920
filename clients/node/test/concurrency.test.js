// Many asks at once on one Node client, against a real daemon: each gets its own reply. The
// client opens a DEALER per ask attempt, so overlapping asks never read each other's replies;
// these tests hold it to that (and to a cancelled-by-deadline ask not disturbing the rest).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startDaemon } from "./daemon.js";

let daemon;
before(async () => {
  daemon = await startDaemon();
});
after(async () => {
  await daemon?.cleanup();
});

test("a hundred overlapping asks on one client each get their own reply", async () => {
  const c = daemon.client();
  try {
    await Promise.all(Array.from({ length: 50 }, (_, i) => c.ask("run.start", { run_id: `run-${i}`, task: `task number ${i}` })));
    const actors = ["recall", "distiller", "working", "metrics", "graph"];
    const asks = Array.from({ length: 100 }, (_, i) =>
      i % 2
        ? c.ask("working.snapshot", { run_id: `run-${i % 50}` }).then((r) => [`task number ${i % 50}`, r.snapshot.task])
        : c.ping(actors[i % actors.length]).then((r) => [actors[i % actors.length], r.actor]),
    );
    for (const [want, got] of await Promise.all(asks)) assert.equal(got, want);
  } finally {
    c.close();
  }
});

test("asks that time out beside others leave the others answered", async () => {
  const c = daemon.client();
  try {
    // A zero-retry ask with a 1 ms deadline mostly times out; whatever it does, the asks
    // around it must still get their own answers.
    const asks = Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0
        ? c.ask("status", {}, { timeout: 1, retries: 1, withProject: false }).then(() => null, (e) => e.name)
        : c.ping("recall").then((r) => r.actor),
    );
    const results = await Promise.all(asks);
    results.forEach((r, i) => {
      if (i % 3 === 0) assert.ok(r === null || r === "DaemonUnavailable", String(r));
      else assert.equal(r, "recall");
    });
  } finally {
    c.close();
  }
});
