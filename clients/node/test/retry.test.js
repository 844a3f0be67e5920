// Client retry logic against a stand-in ROUTER on a real ipc socket (no daemon needed): a BUSY
// answer is retried after its retry_ms hint with the same request id; a final error is not.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { decode, encode } from "@msgpack/msgpack";
import { Router } from "zeromq";
import { Client, RequestFailed } from "../index.js";

async function standIn(answers) {
  const dir = mkdtempSync("/tmp/sa-node-router-");
  const router = new Router({ linger: 0 });
  await router.bind(`ipc://${join(dir, "ctl.sock")}`);
  const seen = [];
  const serve = (async () => {
    for (const answer of answers) {
      const [identity, kind, body] = await router.receive();
      const request = decode(body);
      seen.push({ kind: kind.toString(), id: request.id, at: Date.now() });
      await router.send([identity, Buffer.from("reply"), Buffer.from(encode({ v: 1, id: request.id, ...answer }))]);
    }
  })();
  return { dir, seen, serve, close: () => { router.close(); rmSync(dir, { recursive: true, force: true }); } };
}

test("BUSY is retried after its retry_ms hint, with the same request id", async () => {
  const busy = { ok: false, error: { code: 7, name: "BUSY", reason: "inbox full", retry_ms: 120 } };
  const server = await standIn([busy, { ok: true, result: { pong: true } }]);
  const c = new Client({ runtimeDir: server.dir, timeout: 2000, retries: 3 });
  try {
    assert.deepEqual(await c.ask("ping"), { pong: true });
    await server.serve;
    assert.equal(server.seen.length, 2);
    assert.equal(server.seen[0].id, server.seen[1].id);
    assert.ok(server.seen[1].at - server.seen[0].at >= 100, "waited for the hint");
  } finally {
    c.close();
    server.close();
  }
});

test("a final error is not retried", async () => {
  const bad = { ok: false, error: { code: 5, name: "BAD_FIELD", reason: "field 'n': expected an integer" } };
  const server = await standIn([bad]);
  const c = new Client({ runtimeDir: server.dir, timeout: 2000, retries: 3 });
  try {
    await assert.rejects(c.ask("memory.recall", { n: "x" }), (err) => err instanceof RequestFailed && err.code === 5);
    await server.serve;
    assert.equal(server.seen.length, 1);
  } finally {
    c.close();
    server.close();
  }
});
