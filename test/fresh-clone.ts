/**
 * A newcomer's first run, for the first-run test and benchmark: the repository cloned into an empty temporary
 * folder (nothing beside it, so no ../shared/data), an environment without our data variables or npm's own, then
 * README's first command: `npm ci`, then `npm start` (on a free port) until it logs `listening`.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { PACKAGE_ROOT } from "../src/data/paths.ts";

const run = promisify(execFile);

/** The environment of a fresh shell: no CLIMATECHECK_* or ONNXRUNTIME_* variables, nothing from a running npm. */
export function newcomerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(CLIMATECHECK_|ONNXRUNTIME_|npm_|NODE_OPTIONS$|NODE_TEST_CONTEXT$|INIT_CWD$)/i.test(k)) continue;
    env[k] = v;
  }
  return env;
}

export interface FreshClone {
  /** The temporary folder: it holds the clone and nothing else. */
  root: string;
  repo: string;
  remove(): Promise<void>;
}

/** `git clone` of this checkout's HEAD (committed files only) into an empty temporary folder. */
export async function freshClone(): Promise<FreshClone> {
  const root = await mkdtemp(join(tmpdir(), "cc-fresh-"));
  const repo = join(root, "climatecheck");
  await run("git", ["clone", "--quiet", "--no-hardlinks", PACKAGE_ROOT, repo]);
  return { root, repo, remove: () => rm(root, { recursive: true, force: true }) };
}

/** `npm ci` as README says, with its output (stdout and stderr) and time. */
export async function npmCi(repo: string): Promise<{ ms: number; output: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      "npm",
      ["ci"],
      { cwd: repo, env: newcomerEnv(), maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const output = `${stdout}${stderr}`;
        if (err) reject(new Error(`npm ci failed (${err.message}):\n${output}`));
        else resolve({ ms: performance.now() - started, output });
      },
    );
  });
}

export interface Started {
  /** From spawning `npm start` to its `listening` line. */
  ms: number;
  url: string;
  /** The listening line's fields. */
  info: Record<string, unknown>;
  /** stderr lines so far (more arrive while it runs: request logs). */
  lines: string[];
  stop(): Promise<void>;
}

/** `npm start -- --port 0` (README's command on a free port); resolves on the `listening` line. */
export function npmStart(repo: string, timeoutMs = 600_000): Promise<Started> {
  const started = performance.now();
  // Its own process group, so npm, the shell and the server (with its workers) stop together.
  const child: ChildProcess = spawn("npm", ["start", "--", "--port", "0"], {
    cwd: repo,
    env: newcomerEnv(),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const lines: string[] = [];
  let exited = false;
  const gone = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (!exited && child.pid) process.kill(-child.pid, "SIGTERM");
    const timer = setTimeout(() => child.pid && !exited && process.kill(-child.pid, "SIGKILL"), 10_000);
    await gone;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`npm start did not listen within ${timeoutMs} ms:\n${lines.join("\n")}`));
    }, timeoutMs);
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        lines.push(line);
        if (!line.startsWith("{")) continue;
        try {
          const info = JSON.parse(line) as Record<string, unknown>;
          if (info.msg === "listening") {
            clearTimeout(timer);
            resolve({ ms: performance.now() - started, url: String(info.url), info, lines, stop });
          }
        } catch {
          // not a JSON line
        }
      }
    };
    child.stderr?.on("data", onData);
    child.stdout?.on("data", onData);
    child.once("exit", (code) => {
      exited = true;
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}) before listening:\n${lines.join("\n")}`));
    });
  });
}
