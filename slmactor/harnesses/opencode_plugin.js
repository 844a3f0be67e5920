// slmactor hook plugin for OpenCode: installed by `slmactor hook install --harness opencode`,
// removed by `slmactor hook uninstall --harness opencode`. Generated; install again to change it.
//
// OpenCode loads it from its plugins folder (`.opencode/plugins/`, `~/.config/opencode/plugins/`)
// and calls the hooks its plugin API defines (`Hooks` of @opencode-ai/plugin 1.18):
//  * `tool.execute.after` (a finished call; `bash` finishes whatever its exit code, which is in
//    `metadata.exit`): the call goes, as one JSON payload on stdin, to
//    `slmactor hook opencode tool.execute.after`; what the hook answers for a failed call
//    (`additionalContext`: advice from memory) is appended to the output the model reads.
//  * `event`, `message.part.updated` of a tool part in state "error": a call that threw (an
//    `edit` whose oldString is not in the file) fires no `tool.execute.after`; it is sent the same
//    way, its error as the response.
//  * `event`, `session.idle`: the turn is over; `slmactor hook opencode session.idle` reports it,
//    after the calls still being sent.
// A hook that is missing, fails or overstays its deadline changes nothing: OpenCode goes on.
import { spawn } from "node:child_process";

const COMMANDS = __SLMACTOR_COMMANDS__;
const TIMEOUT_MS = __SLMACTOR_TIMEOUT_MS__;
const MAX_ANSWER = 1 << 20;

function runHook(event, payload) {
  const line = COMMANDS[event];
  if (!line) return Promise.resolve(null);
  return new Promise((resolve) => {
    let answer = "";
    let settled = false;
    let child = null;
    const settle = (value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      try { child && child.kill("SIGKILL"); } catch (_) { /* already gone */ }
      settle(null);
    }, TIMEOUT_MS);
    try {
      child = spawn("/bin/sh", ["-c", line], { stdio: ["pipe", "pipe", "ignore"] });
    } catch (_) {
      settle(null);
      return;
    }
    child.on("error", () => settle(null));
    child.stdout.on("data", (chunk) => {
      if (answer.length < MAX_ANSWER) answer += chunk;
    });
    child.on("close", () => {
      try { settle(JSON.parse(answer)); } catch (_) { settle(null); }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function context(answer) {
  const text = answer && typeof answer.additionalContext === "string" ? answer.additionalContext : "";
  return text.trim();
}

export const SlmactorPlugin = async ({ directory }) => {
  const inFlight = new Set();
  const sentErrors = new Set();
  const track = (promise) => {
    inFlight.add(promise);
    promise.finally(() => inFlight.delete(promise));
    return promise;
  };
  const payload = (event, sessionID, fields) => ({
    hook_event_name: event, session_id: sessionID || "", cwd: directory || "", ...fields,
  });
  return {
    "tool.execute.after": async (input, output) => {
      try {
        const answer = await track(runHook("tool.execute.after", payload("tool.execute.after", input.sessionID, {
          tool_name: input.tool, tool_input: input.args || {}, tool_use_id: input.callID || "",
          tool_response: { title: output.title, output: output.output, metadata: output.metadata },
        })));
        const advice = context(answer);
        if (advice && typeof output.output === "string") output.output = `${output.output}\n\n${advice}`;
      } catch (_) { /* fail open */ }
    },
    event: async ({ event }) => {
      try {
        const props = event.properties || {};
        if (event.type === "message.part.updated") {
          const part = props.part || {};
          const state = part.state || {};
          if (part.type !== "tool" || state.status !== "error" || sentErrors.has(part.callID)) return;
          sentErrors.add(part.callID);
          await track(runHook("tool.execute.after", payload("tool.execute.after", part.sessionID || props.sessionID, {
            tool_name: part.tool, tool_input: state.input || {}, tool_use_id: part.callID || "",
            tool_response: { status: "error", error: state.error, metadata: state.metadata },
          })));
        } else if (event.type === "session.idle") {
          await Promise.allSettled([...inFlight]);
          await runHook("session.idle", payload("session.idle", props.sessionID, {}));
        }
      } catch (_) { /* fail open */ }
    },
    dispose: async () => {
      await Promise.allSettled([...inFlight]);
    },
  };
};
