// A real slmactor daemon for the tests: `python -m slmactor serve` with a private runtime
// directory, user store and project under /tmp (ipc paths must stay short). The Python is
// $SLMACTOR_PYTHON (CI: the project's .venv), else python3. Ready = its "ready in N ms" log line.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Client } from "../index.js";

export async function startDaemon() {
  const base = mkdtempSync("/tmp/sa-node-");
  const runtimeDir = join(base, "rt");
  const project = join(base, "project");
  mkdirSync(project);
  const python = process.env.SLMACTOR_PYTHON || "python3";
  const child = spawn(python, ["-m", "slmactor", "serve"], {
    env: { ...process.env, SLMACTOR_RUNTIME_DIR: runtimeDir, SLMACTOR_HOME: join(base, "home") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const exited = new Promise((done) => child.on("exit", (code) => done(code)));
  // The daemon logs "ready in N ms" once both sockets are bound: wait for that line.
  const ready = new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`daemon not ready within 20 s:\n${log}`)), 20000);
    const read = (chunk) => {
      log += chunk;
      if (/ready in \d+ ms/.test(log)) {
        clearTimeout(timer);
        done();
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`daemon exited ${code}:\n${log}`));
    });
  });
  try {
    await ready;
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  return {
    runtimeDir,
    project,
    client: (options = {}) => new Client({ runtimeDir, project, ...options }),
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
    async cleanup() {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
      rmSync(base, { recursive: true, force: true });
    },
  };
}
