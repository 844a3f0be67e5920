// slmactor-client: talk to the slmactor daemon from Node (ESM), as clients/PROTOCOL.md describes.
//
//   import { Client } from "slmactor-client";
//   const c = new Client({ project: process.cwd() });
//   const run = await c.startRun("fix the flaky upload test");
//   c.recordTool(run.runId, "Bash", { command: "npm test", ok: false, error: "1 failed" }); // never blocks
//   const advice = await c.onFailure(run.runId, "Edit", message, { args });
//   if (advice.repairedArgs) args = advice.repairedArgs;   // a remembered, deterministic repair
//   await c.resolved(advice, { fixedArgs: args });
//   const prompt = await c.memoryBlock("", { runId: run.runId });
//   await c.finishRun(run.runId, null, { success: true });  // the daemon builds the report
//   c.close();
//
// Asks go to ctl.sock on a DEALER with a deadline and Lazy-Pirate retries (a fresh socket per
// attempt, the same request id); BUSY, TIMEOUT and UNAVAILABLE answers are retried after a short
// back-off. Tells go to events.sock on a PUSH socket with ZMQ_IMMEDIATE: `tell` returns at once,
// and a tell that cannot be handed to ZeroMQ (daemon down, queue full) is counted in `dropped`
// at once and reported to the daemon with the next tell that goes through. Tells sent in the
// first CONNECT_WAIT_MS of a client whose daemon socket exists wait for the connection instead.

import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { decode, encode } from "@msgpack/msgpack";
import { Dealer, Push } from "zeromq";
import { withheld } from "./privacy.js";

export const PROTOCOL_VERSION = 1;
/** Milliseconds the first tells wait for the connection to a daemon whose socket exists. */
export const CONNECT_WAIT_MS = 200;
/** Error codes worth retrying after a back-off (BUSY, TIMEOUT, UNAVAILABLE). */
const RETRYABLE = new Set([7, 8, 9]);
const ERROR_NAMES = {
  1: "BAD_FRAMES", 2: "BAD_MSGPACK", 3: "BAD_VERSION", 4: "UNKNOWN_KIND", 5: "BAD_FIELD",
  6: "TOO_LARGE", 7: "BUSY", 8: "TIMEOUT", 9: "UNAVAILABLE", 10: "INTERNAL", 11: "NOT_FOUND",
  12: "BAD_PROJECT", 13: "STORE_ERROR", 14: "SHUTTING_DOWN", 15: "FORBIDDEN", 16: "INVALID",
};

/** No reply from the daemon within the deadline and retries (not running, or wedged). */
export class DaemonUnavailable extends Error {
  constructor(message) {
    super(message);
    this.name = "DaemonUnavailable";
  }
}

/** The daemon answered with an error reply. */
export class RequestFailed extends Error {
  constructor(code, reason, name = ERROR_NAMES[code] ?? String(code)) {
    super(`${name}: ${reason}`);
    this.name = "RequestFailed";
    this.code = code;
    this.codeName = name;
    this.reason = reason;
    /** BUSY: the daemon's hint of how long to wait before resending (ms; 0 = none). */
    this.retryMs = 0;
  }
}

/** `$SLMACTOR_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/slmactor`, else `/tmp/slmactor-<uid>`. */
export function defaultRuntimeDir() {
  if (process.env.SLMACTOR_RUNTIME_DIR) return process.env.SLMACTOR_RUNTIME_DIR;
  if (process.env.XDG_RUNTIME_DIR) return join(process.env.XDG_RUNTIME_DIR, "slmactor");
  return `/tmp/slmactor-${process.getuid ? process.getuid() : 0}`;
}

function argsText(value) {
  if (value === undefined || value === null || value === "") return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** `fields` without the entries at their wire default ("", false, empty list, undefined). */
function compact(fields) {
  const out = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === null || value === "" || value === false) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    out[key] = value;
  }
  return out;
}

function newRunId() {
  const t = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `run-${t}-${randomBytes(3).toString("hex")}`;
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

function asObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? value : {};
}

function str(data, key) {
  return typeof data[key] === "string" ? data[key] : "";
}

export class Client {
  /**
   * @param {object} [options]
   * @param {string} [options.runtimeDir] the daemon's runtime directory (default: defaultRuntimeDir())
   * @param {string} [options.project] the project root every message is about (absolute after resolve)
   * @param {number} [options.timeout] milliseconds per ask attempt (2500)
   * @param {number} [options.retries] ask attempts (3)
   * @param {number} [options.tellHwm] tells queued locally before they are dropped (10000)
   */
  constructor({ runtimeDir, project, timeout = 2500, retries = 3, tellHwm = 10000 } = {}) {
    const root = runtimeDir ?? defaultRuntimeDir();
    this.ctlPath = join(root, "ctl.sock");
    this.eventsPath = join(root, "events.sock");
    this.project = project ? resolve(String(project)) : "";
    this.timeout = timeout;
    this.retries = Math.max(1, retries);
    this.tellHwm = tellHwm;
    this._clientId = randomBytes(6).toString("hex");
    this._ids = 0;
    this._seq = 0;
    this._dropped = 0;
    this._unreported = 0;
    /** Seq of the last tell queued, and tells queued since the daemon last confirmed (flush). */
    this._lastSent = 0;
    this._pending = 0;
    this._push = null;
    /** Tells handed to zeromq.js whose send has not completed yet (its `send` is asynchronous). */
    this._sending = new Set();
    this._early = null;
    this._closed = false;
  }

  /** Random per client: names its tells and prefixes its request ids. */
  get clientId() {
    return this._clientId;
  }

  /** Tells this client could not hand to ZeroMQ (daemon down or queue full). */
  get dropped() {
    return this._dropped;
  }

  /** Sequence number of the last tell sent (read-your-writes, PROTOCOL.md §7 rule 5). */
  get lastSeq() {
    return this._seq;
  }

  // ------------------------------------------------------------------ asks

  /**
   * Send an ask and resolve with its result; rejects with RequestFailed or DaemonUnavailable.
   * `withProject: false` leaves the client's project out (the daemon-wide kinds).
   */
  async ask(kind, fields = {}, { timeout, retries, withProject = true } = {}) {
    if (this._closed) throw new DaemonUnavailable("client is closed");
    // Tells held for the connection go first, so an ask naming their seq can see them; so do
    // tells still inside zeromq.js's asynchronous send (the daemon waits only briefly for them).
    if (this._early !== null) await this._earlyDone;
    if (this._sending.size > 0) await Promise.allSettled([...this._sending]);
    const id = `${this._clientId}.${++this._ids}`;
    let body = { v: PROTOCOL_VERSION, id };
    if (this.project && withProject) body.project = this.project;
    Object.assign(body, fields);
    // What the user keeps out of memory never leaves (./privacy.js): an ask always goes, scrubbed.
    if (withProject) body = withheld("", body, body.project || "") ?? body;
    const frames = [Buffer.from(kind, "ascii"), Buffer.from(encode(body))];
    const wait = timeout ?? this.timeout;
    const attempts = Math.max(1, retries ?? this.retries);
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (!existsSync(this.ctlPath)) {
        throw new DaemonUnavailable(`slmactor daemon not reachable at ${this.ctlPath}: no socket (is the daemon running?)`);
      }
      const reply = await this._attempt(frames, id, wait);
      if (reply === null) continue; // Lazy Pirate: the next attempt uses a fresh socket
      if (reply.ok === true) return reply.result;
      const error = asObject(reply.error);
      const code = typeof error.code === "number" ? error.code : 10;
      if (RETRYABLE.has(code) && attempt < attempts) {
        // BUSY says how long to wait (`retry_ms`, honoured up to 1 s); else a short back-off.
        const hint = typeof error.retry_ms === "number" ? error.retry_ms : 0;
        await sleep(code === 7 && hint > 0 ? Math.min(Math.max(hint, 10), 1000) : 50 * attempt);
        continue;
      }
      const failure = new RequestFailed(code, str(error, "reason"), str(error, "name") || undefined);
      failure.retryMs = typeof error.retry_ms === "number" ? error.retry_ms : 0;
      throw failure;
    }
    throw new DaemonUnavailable(`slmactor daemon not reachable at ${this.ctlPath}: no reply within ${wait} ms`);
  }

  async _attempt(frames, id, wait) {
    const sock = new Dealer({ linger: 0, sendTimeout: wait });
    sock.connect(`ipc://${this.ctlPath}`);
    const deadline = Date.now() + wait;
    try {
      await sock.send(frames);
      for (;;) {
        const left = deadline - Date.now();
        if (left <= 0) return null;
        sock.receiveTimeout = left;
        let kind, body;
        try {
          [kind, body] = await sock.receive();
        } catch {
          return null; // EAGAIN: the deadline passed
        }
        let reply;
        try {
          reply = decode(body);
        } catch {
          continue;
        }
        if (kind.toString() !== "reply" || asObject(reply).id !== id) continue; // a late answer
        return reply;
      }
    } catch {
      return null;
    } finally {
      sock.close();
    }
  }

  ping(actor = "control") {
    return this.ask("ping", actor === "control" ? {} : { actor }, { withProject: false });
  }

  status() {
    return this.ask("status", {}, { withProject: false });
  }

  // ------------------------------------------------------------------ tells

  _tells() {
    if (this._push === null) {
      this._push = new Push({ linger: 100, immediate: true, sendTimeout: 0, sendHighWaterMark: this.tellHwm });
      this._push.connect(`ipc://${this.eventsPath}`);
      if (existsSync(this.eventsPath)) {
        // The connection completes asynchronously: hold the first tells, briefly.
        this._early = [];
        this._earlyDone = new Promise((done) => { this._earlyFlushed = done; });
        // With ZMQ_IMMEDIATE a message can be queued only once the ZMTP handshake is done:
        // "connect" comes before it, and a tell flushed then would be dropped.
        this._push.events.on("handshake", () => this._flushEarly());
        this._earlyTimer = setTimeout(() => this._flushEarly(), CONNECT_WAIT_MS);
        this._earlyTimer.unref?.();
      }
    }
    return this._push;
  }

  _flushEarly() {
    const early = this._early;
    if (early === null) return;
    this._early = null;
    clearTimeout(this._earlyTimer);
    for (const frames of early) this._send(frames);
    this._earlyFlushed();
  }

  _send(frames) {
    const push = this._push;
    if (push === null || this._closed || !push.writable) {
      this._drop();
      return false;
    }
    try {
      const sent = push.send(frames).catch(() => this._drop());
      this._sending.add(sent);
      sent.finally(() => this._sending.delete(sent));
    } catch {
      this._drop();
      return false;
    }
    if (this._unreported > 0) this._reportDrops();
    return true;
  }

  _drop() {
    this._dropped += 1;
    this._unreported += 1;
  }

  _reportDrops() {
    const count = this._unreported;
    this._unreported = 0;
    const body = { v: PROTOCOL_VERSION, client: this._clientId, count };
    try {
      this._push.send([Buffer.from("client.dropped"), Buffer.from(encode(body))]).catch(() => {
        this._unreported += count;
      });
    } catch {
      this._unreported += count;
    }
  }

  /** Send a fire-and-forget message; false when it had to be dropped. Never blocks or throws. */
  tell(kind, fields = {}) {
    if (this._closed) {
      this._drop();
      return false;
    }
    const project = "project" in fields ? fields.project : this.project;
    if (!project && kind !== "client.dropped") {
      // The daemon files no tell without a project (the project rule): undeliverable.
      this._drop();
      return false;
    }
    // A call on a path the project excludes is not sent (and not lost): ./privacy.js.
    const kept = kind === "client.dropped" ? fields : withheld(kind, fields, project);
    if (kept === null) return true;
    fields = kept;
    this._tells();
    const body = { v: PROTOCOL_VERSION, ...fields, client: this._clientId, seq: ++this._seq };
    if (this.project && !("project" in fields)) body.project = this.project;
    let frames;
    try {
      frames = [Buffer.from(kind, "ascii"), Buffer.from(encode(body))];
    } catch {
      this._drop();
      return false;
    }
    if (this._early !== null && this._push.writable) this._flushEarly();
    if (this._early !== null) {
      if (this._early.length >= this.tellHwm) {
        this._drop();
        return false;
      }
      this._early.push(frames);
      this._queued(body.seq);
      return true;
    }
    const sent = this._send(frames);
    if (sent) this._queued(body.seq);
    return sent;
  }

  _queued(seq) {
    this._lastSent = seq;
    this._pending += 1;
  }

  /**
   * Wait, at most `timeout` ms, until the daemon confirms every tell sent so far (the
   * `working.applied` ask). Call it before close() after a burst: the daemon queues only 256
   * tells per connection, and ZeroMQ's linger does not cover bytes its I/O thread still holds
   * when the process exits. Tells still unconfirmed at the deadline are counted in `dropped`.
   * @param {{timeout?: number}} [options]
   * @returns {Promise<{applied: number, caughtUp: boolean, unconfirmed: number}>}
   */
  async flush({ timeout = 2000 } = {}) {
    const last = this._lastSent;
    const pending = this._pending;
    if (pending === 0 || this._closed) return { applied: last, caughtUp: pending === 0, unconfirmed: 0 };
    const deadline = Date.now() + timeout;
    let applied = 0;
    let caughtUp = false;
    while (Date.now() < deadline) {
      try {
        const reply = await this.ask("working.applied", { client: this._clientId, seq: last },
          { timeout: Math.max(1, Math.min(deadline - Date.now(), this.timeout)), retries: 1, withProject: false });
        applied = Number(reply.applied) || 0;
        caughtUp = reply.caught_up === true;
      } catch {
        break;
      }
      if (caughtUp) break;
      await new Promise((done) => setTimeout(done, 10)); // a backlog: let it drain
    }
    let unconfirmed = 0;
    if (!caughtUp) {
      unconfirmed = Math.min(pending, Math.max(last - applied, 0));
      this._dropped += unconfirmed;
    }
    this._pending = 0;
    return { applied, caughtUp, unconfirmed };
  }

  /** Record one tool call and its outcome (the hot path). */
  recordTool(runId, tool, { path, args, command, ok = true, error, key, at } = {}) {
    const fields = compact({ run_id: runId, tool, path, args: argsText(args), command, error, key, at });
    if (!ok) fields.ok = false; // `ok` is sent only when false (its default is true)
    return this.tell("record_tool", fields);
  }

  focus(runId, paths) {
    return this.tell("focus", { run_id: runId, paths: [...paths] });
  }

  fail(runId, { key, tool, path, message } = {}) {
    return this.tell("fail", compact({ run_id: runId, key, tool, path, message }));
  }

  resolve(runId, key, { resolution, resolvedBy } = {}) {
    return this.tell("resolve", compact({ run_id: runId, key, resolution, resolved_by: resolvedBy }));
  }

  decide(runId, text) {
    return this.tell("decide", { run_id: runId, text });
  }

  summarize(runId, text) {
    return this.tell("summarize", { run_id: runId, text });
  }

  // ------------------------------------------------------------------ verbs

  /** Start a run (a new id unless `runId`); a live run id starts over unless `keep`. */
  async startRun(task = "", { runId, role = "worker", keep = false } = {}) {
    const id = runId || newRunId();
    const reply = asObject(await this.ask("run.start", compact({ run_id: id, task, role, keep })));
    return {
      runId: str(reply, "run_id") || id,
      task,
      restarted: reply.restarted === true,
      counters: asObject(reply.counters),
    };
  }

  /** A tool call failed: the remembered repair, if any. `args` as JSON text or a JSON value. */
  async onFailure(runId, tool, message, { args, language, model } = {}) {
    const request = { run_id: runId, tool, message, args: argsText(args), language: language ?? "", model: model ?? "" };
    const reply = asObject(await this.ask("evolve.on_failure", compact(request)));
    const fp = reply.fingerprint;
    const apply = reply.apply === true;
    const newArgs = str(reply, "new_args");
    return {
      runId, tool, message, args: request.args, language: request.language, model: request.model,
      found: reply.found === true,
      apply,
      ruleId: str(reply, "rule_id"),
      newArgs,
      repairedArgs: apply ? newArgs : "",
      guidance: str(reply, "guidance"),
      reason: str(reply, "reason"),
      confidence: typeof reply.confidence === "number" ? reply.confidence : 0,
      fingerprint: typeof fp === "string" ? fp : str(asObject(fp), "id"),
      raw: reply,
    };
  }

  /** The failure `advice` answered was fixed: by its rule, or with `fixedArgs`. */
  async resolved(advice, { fixedArgs, resolution } = {}) {
    const fixed = argsText(fixedArgs);
    const byRule = advice.apply && Boolean(advice.ruleId) && (!fixed || fixed === advice.newArgs);
    const reply = asObject(await this.ask("evolve.resolved", compact({
      run_id: advice.runId, fingerprint: advice.fingerprint, rule_id: byRule ? advice.ruleId : "",
      resolution: resolution || (byRule ? "repaired from memory" : ""),
      tool: advice.tool, message: advice.message, language: advice.language, model: advice.model,
      failed_args: fixed ? advice.args : "", fixed_args: fixed,
    })));
    return {
      fingerprint: str(reply, "fingerprint"),
      learned: reply.learned && typeof reply.learned === "object" ? reply.learned : null,
      transform: typeof reply.transform === "string" ? reply.transform : null,
      bound: reply.bound === true,
      raw: reply,
    };
  }

  /** The memory block for a task (none: the project's) as text, or with `sections: true` {text, tokens, budget, sections}. */
  async memoryBlock(task = "", { runId, role = "worker", files, tags, budget, language, model, sections = false } = {}) {
    const reply = asObject(await this.ask("memory.block", compact({
      role, budget: budget || undefined, query: task, files: files ? [...files] : undefined,
      tags: tags ? [...tags] : undefined, run_id: runId, language, model,
    })));
    const block = {
      text: str(reply, "text"),
      tokens: typeof reply.tokens === "number" ? reply.tokens : 0,
      budget: typeof reply.budget === "number" ? reply.budget : 0,
      sections: asObject(reply.sections),
    };
    return sections ? block : block.text;
  }

  /** Past episodes most like this task, best first: [{id, score, query, summary, success, why, episode}]. */
  async recall(task, { files, n = 3, language, model, successOnly, explain } = {}) {
    const reply = asObject(await this.ask("memory.recall", compact({
      query: task, files: files ? [...files] : undefined, n, language, model,
      success_only: successOnly, explain,
    })));
    const hits = Array.isArray(reply.hits) ? reply.hits : [];
    return hits.filter((h) => h && typeof h === "object").map((hit) => {
      const episode = Object.keys(asObject(hit.episode)).length ? asObject(hit.episode) : asObject(hit.entry);
      return {
        id: str(hit, "id"),
        score: typeof hit.score === "number" ? hit.score : 0,
        query: str(episode, "query"),
        summary: str(episode, "summary"),
        success: episode.success === true,
        why: str(hit, "why"),
        episode,
      };
    });
  }

  /** Observe a fact about the project (kind: command, layout, convention, gotcha, file, dependency). */
  remember(subject, text, { kind = "convention", sources } = {}) {
    return this.ask("fact.observe", compact({ kind, subject, text, sources: sources ? [...sources] : undefined }));
  }

  /**
   * The run ended. Without `report` the daemon builds it from what it saw (calls, errors, files,
   * failures); a report given is merged with that, nothing counted twice.
   */
  async finishRun(runId, report = null, { success, summary, model, language, wait = false, timeout } = {}) {
    const body = { ...(report ?? {}) };
    if (!("run_id" in body)) body.run_id = runId;
    if (model && !("model" in body)) body.model = model;
    if (language && !("language" in body)) body.language = language;
    if (success !== undefined && !("planned_tasks" in body) && !("completed_tasks" in body) && !("blocked_tasks" in body)) {
      body.planned_tasks = 1;
      body.completed_tasks = success ? 1 : 0;
    }
    const reply = asObject(await this.ask("run.finish", compact({
      report: body, summary, wait, run_id: runId, client: this._seq ? this._clientId : "",
      seq: this._seq || undefined,
    }), { timeout }));
    return {
      runId: str(reply, "run_id"),
      accepted: reply.accepted === true,
      success: reply.success === true,
      tally: asObject(reply.tally),
      duplicate: reply.duplicate === true,
      raw: reply,
    };
  }

  /** Close the sockets; queued tells get CLOSE_LINGER (100 ms) to leave. Never hangs. After a
   *  burst of tells, `await flush()` first so none is lost uncounted. */
  close() {
    if (this._closed) return;
    if (this._early !== null && this._early.length) {
      for (let i = 0; i < this._early.length; i++) this._drop();
    }
    this._early = null;
    clearTimeout(this._earlyTimer);
    this._earlyFlushed?.();
    this._closed = true;
    if (this._push !== null) this._push.close();
    this._push = null;
  }
}
