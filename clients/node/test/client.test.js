// The Node client against a real daemon: the verbs, tells that never block and count their
// drops at once, deadlines and retries, the project rule.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Client, DaemonUnavailable, RequestFailed } from "../index.js";
import { startDaemon } from "./daemon.js";

const GUTTER = '{"path": "app.py", "old_str": "  7|     x = 1", "new_str": "  7|     x = 2"}';
const FIXED = '{"path": "app.py", "old_str": "    x = 1", "new_str": "    x = 2"}';
const FAILURE = "old_str not found in app.py";

let daemon;
before(async () => {
  daemon = await startDaemon();
});
after(async () => {
  await daemon?.cleanup();
});

async function metricsOf(c, runId) {
  const shown = await c.ask("metrics.show", { last: 0 });
  return shown.runs.find((r) => r.run_id === runId);
}

test("verbs: a failure fixed once is repaired from memory the next run", async () => {
  const c = daemon.client();
  try {
    const run = await c.startRun("fix the off-by-one in app.py");
    assert.match(run.runId, /^run-/);
    assert.equal(run.restarted, false);
    const advice = await c.onFailure(run.runId, "Edit", FAILURE, { args: GUTTER });
    // The first time only the shipped read-again rule answers: guidance, nothing rewritten.
    assert.equal(advice.found, true);
    assert.equal(advice.repairedArgs, "");
    assert.match(advice.fingerprint, /^fp_/);
    const learned = await c.resolved(advice, { fixedArgs: FIXED });
    assert.equal(learned.transform, "strip_line_number_prefix");
    const finished = await c.finishRun(run.runId, null, { success: true, wait: true, timeout: 20000 });
    assert.equal(finished.accepted, true);
    assert.equal(finished.success, true);

    const second = await c.startRun("fix the off-by-one in app.py");
    const again = await c.onFailure(second.runId, "Edit", FAILURE, { args: GUTTER });
    assert.equal(again.apply, true);
    assert.deepEqual(JSON.parse(again.repairedArgs), JSON.parse(FIXED));
    const text = await c.memoryBlock("fix the off-by-one in app.py", { runId: second.runId });
    assert.equal(typeof text, "string");
    assert.match(text, /fix the off-by-one/);
    const block = await c.memoryBlock("fix the off-by-one", { sections: true });
    assert.ok("episodic" in block.sections && block.budget > 0);
    const hits = await c.recall("off-by-one app.py");
    assert.equal(hits[0].query, "fix the off-by-one in app.py");
    assert.ok(await c.remember("tests", "run npm test", { kind: "command" }));
  } finally {
    c.close();
  }
});

test("finishRun without a report: the daemon counts what it was told", async () => {
  const c = daemon.client();
  try {
    const run = await c.startRun("tidy the parser");
    assert.equal(c.recordTool(run.runId, "Read", { path: "parser.js" }), true);
    c.recordTool(run.runId, "Edit", { path: "parser.js", args: { path: "parser.js" } });
    c.recordTool(run.runId, "Bash", { command: "npm test", ok: false, error: "2 failing" });
    await c.finishRun(run.runId, null, { wait: true, timeout: 20000 });
    const record = await metricsOf(c, run.runId);
    assert.deepEqual([record.tool_calls, record.tool_errors, record.failures], [3, 1, 1]);
    assert.equal(c.dropped, 0);
  } finally {
    c.close();
  }
});

test("a re-sent startRun starts the run over", async () => {
  const c = daemon.client();
  try {
    await c.startRun("first", { runId: "node-again" });
    c.recordTool("node-again", "Bash", { command: "ls", ok: false, error: "nope" });
    const snap = await c.ask("working.snapshot", { run_id: "node-again", client: c.clientId, seq: c.lastSeq });
    assert.equal(snap.snapshot.counters.calls, 1);
    const again = await c.startRun("first", { runId: "node-again" });
    assert.equal(again.restarted, true);
    assert.deepEqual(again.counters, { calls: 0, errors: 0, redundant: 0 });
  } finally {
    c.close();
  }
});

test("the project rule: a missing project is BAD_PROJECT for every kind", async () => {
  const c = new Client({ runtimeDir: daemon.runtimeDir, project: "/no/such/project/dir" });
  try {
    for (const [kind, fields] of [["run.start", { run_id: "r" }], ["evolve.on_failure", { run_id: "r", tool: "Edit", message: "x" }]]) {
      await assert.rejects(c.ask(kind, fields), (err) => err instanceof RequestFailed && err.code === 12);
    }
    assert.equal((await c.ping()).actor, "control"); // daemon-wide kinds carry no project
  } finally {
    c.close();
  }
  const none = new Client({ runtimeDir: daemon.runtimeDir });
  try {
    assert.equal(none.recordTool("r", "Read", { path: "a.js" }), false); // would be filed nowhere
    assert.equal(none.dropped, 1);
  } finally {
    none.close();
  }
});

test("tells never block and are counted as dropped at once without a daemon", () => {
  const dir = mkdtempSync("/tmp/sa-node-none-");
  const c = new Client({ runtimeDir: dir, project: dir });
  try {
    const started = Date.now();
    for (let i = 0; i < 500; i++) assert.equal(c.recordTool("r", "Read"), false);
    assert.equal(c.dropped, 500);
    assert.ok(Date.now() - started < 2000);
  } finally {
    c.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("asks: no socket fails at once; a socket nobody answers fails after deadline x retries", async () => {
  const dir = mkdtempSync("/tmp/sa-node-dead-");
  try {
    const none = new Client({ runtimeDir: dir, timeout: 5000 });
    const t0 = Date.now();
    await assert.rejects(none.ping(), (err) => err instanceof DaemonUnavailable && /no socket/.test(err.message));
    assert.ok(Date.now() - t0 < 1000);
    none.close();
    writeFileSync(join(dir, "ctl.sock"), ""); // left behind by a killed daemon: nobody listens
    const stale = new Client({ runtimeDir: dir, timeout: 150, retries: 2 });
    const t1 = Date.now();
    await assert.rejects(stale.ping(), (err) => err instanceof DaemonUnavailable && /no reply within 150 ms/.test(err.message));
    const took = Date.now() - t1;
    assert.ok(took >= 250 && took < 3000, `took ${took} ms`); // two attempts of 150 ms
    stale.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("error replies reject with the code, name and reason", async () => {
  const c = daemon.client();
  try {
    await assert.rejects(c.ask("memory.recall", { n: "three" }), (err) =>
      err instanceof RequestFailed && err.code === 5 && err.codeName === "BAD_FIELD" && /'n'/.test(err.reason));
    await assert.rejects(c.ask("no.such.kind", {}), (err) => err instanceof RequestFailed && err.code === 4);
  } finally {
    c.close();
  }
});

test("flush: a burst of tells is confirmed by the daemon before close", async () => {
  const c = new Client({ runtimeDir: daemon.runtimeDir, project: daemon.project, tellHwm: 100000 });
  try {
    let queued = 0;
    for (let i = 0; i < 20000; i++) queued += c.recordTool("node-flush", "Bash", { command: `echo ${i}` }) ? 1 : 0;
    const flushed = await c.flush({ timeout: 10000 });
    assert.equal(flushed.caughtUp, true);
    assert.equal(flushed.unconfirmed, 0);
    assert.equal(flushed.applied, c.lastSeq);
    const snap = await c.ask("working.snapshot", { run_id: "node-flush" });
    assert.equal(snap.snapshot.counters.calls, queued);
    assert.deepEqual(await c.flush(), { applied: c.lastSeq, caughtUp: true, unconfirmed: 0 });
  } finally {
    c.close();
  }
});
