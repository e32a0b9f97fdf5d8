// An ACP (Agent Client Protocol) test client: drives an agent (`rein acp`)
// over newline-delimited JSON-RPC on its stdio with the official TypeScript
// SDK, runs a JSON script, and prints a JSONL transcript on stdout.
//
//   node tests/acp/client.mjs <modules-folder> <script.json>
//
// <modules-folder> is what tests/acp/install.sh prints (it holds
// node_modules/@agentclientprotocol/sdk, pinned). See tests/acp/README.md for
// the script's format and the output lines.
//
// Exit code: 0 when the script ran (whatever the agent did), 1 on a harness
// error (bad arguments or script, SDK missing), with the error on stderr.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

// --- output ---------------------------------------------------------------------
// One JSON object a line, written synchronously: the lines keep the order the
// events happened in, and none is lost when we exit.
function out(obj) {
  fs.writeSync(1, JSON.stringify(obj) + "\n");
}

function errorJson(e) {
  // A JSON-RPC error (RequestError, or the error object of a response) keeps
  // its code/message/data; anything else becomes its message.
  if (e && typeof e === "object" && "code" in e) {
    return { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) };
  }
  return { message: String(e?.message ?? e) };
}

class HarnessError extends Error {}

// --- arguments and script -------------------------------------------------------
function loadScript(file) {
  let s;
  try {
    s = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new HarnessError(`cannot read the script ${file}: ${e.message}`);
  }
  const bad = (why) => {
    throw new HarnessError(`bad script ${file}: ${why}`);
  };
  if (!s || typeof s !== "object") bad("not an object");
  if (!Array.isArray(s.agent) || s.agent.length === 0 || !s.agent.every((a) => typeof a === "string"))
    bad("`agent` must be a non-empty array of strings");
  if (typeof s.cwd !== "string" || !path.isAbsolute(s.cwd)) bad("`cwd` must be an absolute path");
  const modes = ["allow_once", "allow_always", "reject_once", "reject_always", "cancelled", "never"];
  if (s.permission !== undefined && !modes.includes(s.permission))
    bad(`\`permission\` must be one of ${modes.join(", ")}`);
  if (s.permissions !== undefined && (!Array.isArray(s.permissions) || !s.permissions.every((p) => modes.includes(p))))
    bad(`\`permissions\` must be an array of ${modes.join(", ")}`);
  if (s.steps !== undefined && (!Array.isArray(s.steps) || !s.steps.every((st) => Array.isArray(st?.prompt))))
    bad("`steps` must be an array of {prompt: [ContentBlock...]}");
  if (s.buffers !== undefined && (typeof s.buffers !== "object" || Array.isArray(s.buffers))) bad("`buffers` must be an object");
  const edit = s.on_permission_edit_buffer;
  if (edit !== undefined && (typeof edit?.path !== "string" || typeof edit?.content !== "string"))
    bad("`on_permission_edit_buffer` must be {path, content}");
  return s;
}

// The SDK, by file URL (it is installed outside the repo): the entry the
// package's `exports["."]` names, and the zod schemas it validates with itself
// (dist/v1/schema/zod.gen.js, beside the entry's folder; not in `exports`).
async function loadSdk(modulesDir) {
  const pkgDir = path.join(modulesDir, "node_modules", "@agentclientprotocol", "sdk");
  let pkg;
  try {
    pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
  } catch (e) {
    throw new HarnessError(`no @agentclientprotocol/sdk in ${modulesDir} (run tests/acp/install.sh): ${e.message}`);
  }
  const dot = pkg.exports?.["."];
  const rel = (typeof dot === "string" ? dot : dot?.import ?? dot?.default) ?? pkg.main;
  const entry = path.join(pkgDir, rel);
  const acp = await import(pathToFileURL(entry).href);
  const zod = await import(pathToFileURL(path.join(path.dirname(entry), "..", "schema", "zod.gen.js")).href);
  if (typeof acp.client !== "function" || typeof acp.ndJsonStream !== "function" || !zod.zSessionNotification)
    throw new HarnessError(`${entry}: not the SDK API this client was written for (2.4.0)`);
  return { acp, zod, version: pkg.version };
}

// --- schema validation ----------------------------------------------------------
// What the agent sends, checked against the protocol's schemas (the SDK's
// generated zod schemas). Requests and notifications by method; responses by
// the method of our request with that id.
function makeValidator(zod) {
  const params = {
    "session/update": zod.zSessionNotification,
    "session/request_permission": zod.zRequestPermissionRequest,
    "fs/read_text_file": zod.zReadTextFileRequest,
    "fs/write_text_file": zod.zWriteTextFileRequest,
  };
  const results = {
    initialize: zod.zInitializeResponse,
    "session/new": zod.zNewSessionResponse,
    "session/load": zod.zLoadSessionResponse,
    "session/list": zod.zListSessionsResponse,
    "session/prompt": zod.zPromptResponse,
  };
  const issues = (r) => describeIssues(r.error.issues, []);
  // Returns [method, error] for an invalid message, else null.
  return (msg, ourRequests) => {
    if (msg.jsonrpc !== "2.0") return [msg.method ?? null, { message: 'jsonrpc is not "2.0"' }];
    if (typeof msg.method === "string") {
      const schema = params[msg.method];
      if (!schema) return null; // other methods: the SDK answers method-not-found
      const r = schema.safeParse(msg.params);
      return r.success ? null : [msg.method, issues(r)];
    }
    const method = ourRequests.get(msg.id) ?? null;
    if ("error" in msg) {
      const r = zod.zError.safeParse(msg.error);
      return r.success ? null : [method, issues(r)];
    }
    if (!("result" in msg)) return [method, { message: "a response with neither result nor error" }];
    const schema = results[method];
    if (!schema) return null;
    const r = schema.safeParse(msg.result);
    return r.success ? null : [method, issues(r)];
  };
}

// zod's issues as {path, message}. A tagged union (session/update's
// `sessionUpdate`, a content block's `type`, ...) fails as one bare "Invalid
// input" naming every variant; the variants whose tag did match are the ones
// worth reading, so the issues of the closest of those are shown instead.
const TAGS = new Set(["sessionUpdate", "type", "outcome"]);
function describeIssues(list, prefix) {
  return list.flatMap((i) => {
    const at = [...prefix, ...i.path.map(String)];
    if (i.code === "invalid_union" && Array.isArray(i.errors)) {
      const tagMatched = i.errors.filter(
        (branch) => !branch.some((b) => b.code === "invalid_value" && TAGS.has(String(b.path.at(-1)))),
      );
      if (tagMatched.length > 0 && tagMatched.length < i.errors.length) {
        const closest = tagMatched.reduce((a, b) => (b.length < a.length ? b : a));
        return describeIssues(closest, at);
      }
    }
    return [{ path: at.join("."), message: i.message }];
  });
}

// Splits a byte stream into lines (by bytes, so a UTF-8 character split
// between chunks is whole when decoded).
function lineSplitter(onLine) {
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    let nl;
    while ((nl = pending.indexOf(10)) >= 0) {
      const line = pending.subarray(0, nl).toString("utf8").trim();
      pending = pending.subarray(nl + 1);
      if (line) onLine(line);
    }
  };
}

// fs/read_text_file's `line` (1-based) and `limit` (a number of lines).
function sliceLines(text, line, limit) {
  if (line == null && limit == null) return text;
  const lines = text.split(/(?<=\n)/); // keeps each line's "\n"
  const start = Math.max((line ?? 1) - 1, 0);
  return lines.slice(start, limit == null ? undefined : start + limit).join("");
}

// --- the run ----------------------------------------------------------------------
async function main() {
  const [modulesDir, scriptFile] = process.argv.slice(2);
  if (!modulesDir || !scriptFile || process.argv.length !== 4)
    throw new HarnessError("usage: node tests/acp/client.mjs <modules-folder> <script.json>");
  const script = loadScript(scriptFile);
  const { acp, zod } = await loadSdk(path.resolve(modulesDir));
  const validate = makeValidator(zod);

  const buffers = new Map(Object.entries(script.buffers ?? {}).map(([p, t]) => [path.resolve(p), t]));
  const steps = script.steps ?? [];

  // --- the agent process
  let stderr = "inherit";
  if (script.stderr_path) {
    fs.mkdirSync(path.dirname(script.stderr_path), { recursive: true });
    stderr = fs.openSync(script.stderr_path, "w");
  }
  const child = spawn(script.agent[0], script.agent.slice(1), {
    cwd: script.cwd,
    env: { ...process.env, ...(script.env ?? {}) },
    stdio: ["pipe", "pipe", stderr],
  });
  if (typeof stderr === "number") fs.closeSync(stderr); // the child has its own copy
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
    // A spawn failure (no such program): no exit event follows.
    child.on("error", (e) => {
      out({ event: "spawn_error", error: errorJson(e) });
      spawnError = e;
      resolve({ code: null, signal: null });
    });
  });
  let spawnError = null;
  let agentGone = false; // exited, killed by us, or timed out
  exited.then(() => (agentGone = true));
  // Writing to an agent that died is an EPIPE, not our crash.
  child.stdin.on("error", () => {});

  // --- the wire, tee'd: every line in both directions, raw as sent
  const ourRequests = new Map(); // id -> method, of our requests (to validate the responses)
  let sessionId = null;
  let updatesThisPrompt = 0;
  let agentCx = null; // the SDK's ClientContext, for session/cancel
  let stopped = false; // killed by kill_after_updates, or timed out
  let cancelWhenUnderWay = null; // {call, after}: cancel_after_permissions, armed

  const logToAgent = lineSplitter((line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      out({ dir: "to_agent", raw: line });
      return;
    }
    out({ dir: "to_agent", msg });
    if (typeof msg.method === "string" && msg.id !== undefined) ourRequests.set(msg.id, msg.method);
  });

  // Logs and checks a line from the agent, before the SDK sees it. Every line
  // goes on to the SDK, invalid ones too, as in a real client: the SDK drops
  // a session/update that does not parse (printing "Error handling
  // notification" on stderr) and answers an invalid request with -32602.
  const onFromAgentLine = (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      out({ dir: "from_agent", raw: line });
      out({ event: "schema_error", method: null, error: { message: "not JSON" } });
      return; // the SDK answers it with a parse error, as a real client would
    }
    out({ dir: "from_agent", msg });
    if (!msg || typeof msg !== "object" || Array.isArray(msg)) {
      out({ event: "schema_error", method: null, error: { message: "not a JSON-RPC object" } });
      return;
    }
    const bad = validate(msg, ourRequests);
    if (bad) out({ event: "schema_error", method: bad[0], error: bad[1] });
    if (msg.method === "session/update" && msg.id === undefined) {
      updatesThisPrompt++;
      if (script.kill_after_updates != null && updatesThisPrompt === script.kill_after_updates && !stopped) {
        stopped = true;
        out({ event: "kill", after_updates: updatesThisPrompt });
        child.kill("SIGKILL");
      }
      if (script.close_after_updates != null && updatesThisPrompt === script.close_after_updates && !stopped) {
        // The panel closes (its window, the editor): stdin ends, nothing is killed.
        stopped = true;
        out({ event: "close", after_updates: updatesThisPrompt });
        child.stdin.end();
      }
      const update = msg.params?.update;
      if (
        cancelWhenUnderWay &&
        update?.sessionUpdate === "tool_call_update" &&
        update.toolCallId === cancelWhenUnderWay.call &&
        agentCx &&
        sessionId
      ) {
        out({ event: "cancel", after_permissions: cancelWhenUnderWay.after });
        cancelWhenUnderWay = null;
        // "running" is said just before the process starts: a moment for it.
        setTimeout(
          () => agentCx.notify("session/cancel", { sessionId }).catch((e) => out({ event: "cancel_error", error: errorJson(e) })),
          300,
        );
      }
      if (script.cancel_after_updates != null && updatesThisPrompt === script.cancel_after_updates && agentCx && sessionId) {
        out({ event: "cancel", after_updates: updatesThisPrompt });
        agentCx.notify("session/cancel", { sessionId }).catch((e) => out({ event: "cancel_error", error: errorJson(e) }));
      }
    }
  };

  const toAgent = new WritableStream({
    write(chunk) {
      logToAgent(Buffer.from(chunk));
      return new Promise((resolve) => child.stdin.write(chunk, () => resolve()));
    },
    close() {
      child.stdin.end();
    },
  });
  // The SDK cancels this stream when the connection closes (after the run);
  // the agent may still write or end after that, and is still logged.
  let fromAgentOpen = true;
  const fromAgent = new ReadableStream({
    start(controller) {
      const enqueue = (bytes) => fromAgentOpen && controller.enqueue(new Uint8Array(bytes));
      let pending = Buffer.alloc(0);
      child.stdout.on("data", (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        let nl;
        while ((nl = pending.indexOf(10)) >= 0) {
          const bytes = pending.subarray(0, nl + 1);
          pending = pending.subarray(nl + 1);
          const line = bytes.toString("utf8").trim();
          if (!line) continue;
          onFromAgentLine(line);
          enqueue(bytes);
        }
      });
      child.stdout.on("end", () => {
        const line = pending.toString("utf8").trim();
        if (line) {
          onFromAgentLine(line);
          enqueue(pending);
        }
        if (fromAgentOpen) controller.close();
        fromAgentOpen = false;
      });
    },
    cancel() {
      fromAgentOpen = false;
    },
  });

  // --- our side of the protocol
  const app = acp.client({ name: "rein-acp-test-client" });
  app.onNotification("session/update", () => {}); // seen on the wire already

  let permissionCount = 0;
  app.onRequest("session/request_permission", async ({ params }) => {
    const n = permissionCount++;
    if (n === 0 && script.on_permission_edit_buffer) {
      // The user types in the editor while the edit waits for approval.
      const { path: p, content } = script.on_permission_edit_buffer;
      buffers.set(path.resolve(p), content);
      out({ event: "buffer_changed", path: p, content });
    }
    const mode = script.permissions?.[n] ?? script.permission ?? "allow_once";
    if (mode === "never") {
      out({ event: "permission", params, answer: null });
      return new Promise(() => {}); // the agent waits (until it cancels or we stop)
    }
    let answer;
    if (mode === "cancelled") {
      answer = { outcome: { outcome: "cancelled" } };
    } else {
      const option = (params.options ?? []).find((o) => o.kind === mode);
      if (option) {
        answer = { outcome: { outcome: "selected", optionId: option.optionId } };
      } else {
        // No option of that kind offered: the closest honest answer.
        out({ event: "permission_no_option", kind: mode });
        answer = { outcome: { outcome: "cancelled" } };
      }
    }
    out({ event: "permission", params, answer });
    if (script.cancel_after_permissions != null && n + 1 === script.cancel_after_permissions && agentCx && sessionId) {
      // The user presses stop once the call it allowed says it is under
      // way (its next update, "running `…`"): sent with the answer, the
      // cancel could reach the agent first and stop the call before it ran.
      cancelWhenUnderWay = { call: params.toolCall?.toolCallId, after: n + 1 };
    }
    return answer;
  });

  if (script.fs) {
    app.onRequest("fs/read_text_file", async ({ params }) => {
      const p = path.resolve(params.path);
      let text, source;
      if (buffers.has(p)) {
        text = buffers.get(p);
        source = "buffer";
      } else {
        try {
          text = fs.readFileSync(p, "utf8");
        } catch (e) {
          out({ event: "fs_read", path: params.path, source: "disk", error: e.code ?? e.message });
          throw e.code === "ENOENT" ? acp.RequestError.resourceNotFound(params.path) : acp.RequestError.internalError(undefined, e.message);
        }
        source = "disk";
      }
      out({ event: "fs_read", path: params.path, source });
      return { content: sliceLines(text, params.line, params.limit) };
    });
    app.onRequest("fs/write_text_file", async ({ params }) => {
      const p = path.resolve(params.path);
      let target = "disk";
      if (buffers.has(p)) {
        buffers.set(p, params.content);
        target = "buffer";
        // An editor that saves what the agent wrote (the user's other
        // unsaved text in that buffer is saved with it).
        if (script.save_on_write) {
          fs.writeFileSync(p, params.content);
          target = "buffer+disk";
        }
      } else {
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, params.content);
      }
      out({ event: "fs_write", path: params.path, content: params.content, target });
      return {};
    });
  }

  if (script.terminal) {
    // The editor's terminal: runs what the agent asks, as the user's shell
    // would (no sandbox), and keeps the output for terminal/output.
    const terminals = new Map();
    let nextTerminal = 0;
    app.onRequest("terminal/create", async ({ params }) => {
      const id = `term-${++nextTerminal}`;
      const limit = params.outputByteLimit ?? 1 << 20;
      const proc = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? script.cwd,
        env: { ...process.env, ...Object.fromEntries((params.env ?? []).map((v) => [v.name, v.value])) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const t = { output: "", truncated: false, exit: null, proc };
      const take = (chunk) => {
        t.output += chunk.toString("utf8");
        if (Buffer.byteLength(t.output) > limit) {
          t.output = t.output.slice(-limit);
          t.truncated = true;
        }
      };
      proc.stdout.on("data", take);
      proc.stderr.on("data", take);
      t.exited = new Promise((resolve) =>
        proc.on("close", (code, signal) => {
          t.exit = { exitCode: code, signal };
          resolve(t.exit);
        }),
      );
      terminals.set(id, t);
      out({ event: "terminal_create", id, params });
      return { terminalId: id };
    });
    const get = (params) => {
      const t = terminals.get(params.terminalId);
      if (!t) throw acp.RequestError.invalidParams(undefined, `no terminal ${params.terminalId}`);
      return t;
    };
    app.onRequest("terminal/output", async ({ params }) => {
      const t = get(params);
      return { output: t.output, truncated: t.truncated, ...(t.exit ? { exitStatus: t.exit } : {}) };
    });
    app.onRequest("terminal/wait_for_exit", async ({ params }) => get(params).exited);
    app.onRequest("terminal/kill", async ({ params }) => {
      const t = get(params);
      if (!t.exit) t.proc.kill("SIGKILL");
      out({ event: "terminal_kill", id: params.terminalId });
      return {};
    });
    app.onRequest("terminal/release", async ({ params }) => {
      const t = get(params);
      if (!t.exit) t.proc.kill("SIGKILL");
      terminals.delete(params.terminalId);
      out({ event: "terminal_release", id: params.terminalId, output: t.output, exit: t.exit });
      return {};
    });
  }

  // --- timeout: stop everything
  const timeoutMs = script.timeout_ms ?? 120000;
  const timer = setTimeout(() => {
    stopped = true;
    out({ event: "timeout", after_ms: timeoutMs });
    child.kill("SIGKILL");
  }, timeoutMs);

  // A request, or null once the agent is gone (the SDK rejects pending
  // requests when the stream closes, but an agent killed mid-request could
  // otherwise leave us waiting for the timeout).
  // Gone means exited and its stdout read to the end (a last response written
  // just before exiting still counts), or exited 1 s ago (a grandchild may
  // hold the pipe open).
  const stdoutClosed = new Promise((resolve) => child.on("close", resolve));
  const gone = exited
    .then(() => Promise.race([stdoutClosed, new Promise((resolve) => setTimeout(resolve, 1000))]))
    .then(() => ({ gone: true }));
  const call = async (method, params) => {
    try {
      const r = await Promise.race([agentCx.request(method, params).then((result) => ({ result })), gone]);
      return r.gone ? { error: { message: "the agent exited" } } : r;
    } catch (e) {
      return { error: errorJson(e) };
    }
  };

  const fsCaps = !!script.fs;
  const run = async (cx) => {
    agentCx = cx;
    const init = await call("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: fsCaps, writeTextFile: fsCaps }, terminal: !!script.terminal },
      clientInfo: { name: "rein-acp-test-client", version: "1.0.0" },
    });
    out({ event: "initialize", ...init });
    if (init.error || stopped) return;

    if (script.list_sessions) {
      const params = typeof script.list_sessions === "object" ? script.list_sessions : {};
      const r = await call("session/list", params);
      out({ event: "sessions", ...r });
      if (stopped) return;
    }

    const mcpServers = script.mcp_servers ?? [];
    const [method, params] = script.load_session
      ? ["session/load", { sessionId: script.load_session, cwd: script.cwd, mcpServers }]
      : ["session/new", { cwd: script.cwd, mcpServers }];
    updatesThisPrompt = 0; // session/load replays updates; counted like a prompt's
    if (script.load_session) sessionId = script.load_session;
    const s = await call(method, params);
    out({ event: "session", method, ...s });
    if (s.error || stopped) return;
    sessionId = s.result?.sessionId ?? sessionId;

    for (const [index, step] of steps.entries()) {
      updatesThisPrompt = 0;
      const r = await call("session/prompt", { sessionId, prompt: step.prompt });
      out({ event: "prompt_result", index, result: r.error ? { error: r.error } : r.result });
      if (stopped || agentGone) return;
    }
  };

  const stream = acp.ndJsonStream(toAgent, fromAgent);
  try {
    await app.connectWith(stream, run);
  } catch (e) {
    // The connection closed under us (the agent died or sent garbage).
    if (!stopped) out({ event: "connection_closed", error: errorJson(e) });
  }

  // --- the end: close the agent's stdin, give it 10 s to exit (unless we
  // killed it already)
  child.stdin.end();
  const killer = stopped
    ? null
    : setTimeout(() => {
        out({ event: "kill", reason: "no exit 10 s after stdin closed" });
        child.kill("SIGKILL");
      }, 10000);
  const { code, signal } = await exited;
  clearTimeout(killer);
  clearTimeout(timer);
  out({ event: "done", exit_code: code, signal });
  if (spawnError) throw new HarnessError(`cannot start the agent ${script.agent[0]}: ${spawnError.message}`);
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`acp client: ${e instanceof HarnessError ? e.message : e?.stack ?? e}\n`);
    process.exit(1);
  },
);
