/**
 * A real redis-server for the queue tests (Debian's, installed by .ci/run): its own loopback port and temp dir, AOF
 * on request, a password or TLS on request; stop() kills it and start() brings it back on the same port and data.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { tempDir } from "./retrieval-fixtures.ts";

export const HAS_REDIS = spawnSync("redis-server", ["--version"]).status === 0;

export interface RedisOptions {
  /** appendonly yes; "always" fsyncs every write (a kill loses nothing acknowledged), "everysec" once a second. */
  aof?: "always" | "everysec";
  password?: string;
  /** TLS only (no plain port), with a self-signed certificate for 127.0.0.1; `ca` is its PEM file. */
  tls?: boolean;
}

export interface TestRedis {
  url: string;
  port: number;
  dir: string;
  /** The certificate to trust (NODE_EXTRA_CA_CERTS) when tls. */
  ca?: string;
  start(): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Stops it and removes its dir. */
  cleanup(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

export async function startRedis(o: RedisOptions = {}): Promise<TestRedis> {
  const dir = tempDir("cc-redis-");
  const port = await freePort();
  const args = ["--bind", "127.0.0.1", "--dir", dir, "--save", "", "--daemonize", "no"];
  args.push("--appendonly", o.aof ? "yes" : "no", "--appendfsync", o.aof ?? "everysec");
  if (o.password) args.push("--requirepass", o.password);
  let ca: string | undefined;
  if (o.tls) {
    ca = join(dir, "cert.pem");
    const key = join(dir, "key.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-keyout",
        key,
        "-out",
        ca,
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    args.push("--port", "0", "--tls-port", String(port), "--tls-cert-file", ca, "--tls-key-file", key);
    args.push("--tls-ca-cert-file", ca, "--tls-auth-clients", "no");
  } else args.push("--port", String(port));
  let child: ChildProcess | undefined;
  const start = async () => {
    const proc = spawn("redis-server", args, { stdio: ["ignore", "pipe", "inherit"] });
    child = proc;
    await new Promise<void>((resolve, reject) => {
      let out = "";
      proc.stdout?.on("data", (d) => {
        out += d;
        if (/Ready to accept connections/.test(out)) resolve();
      });
      proc.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${out.slice(-500)}`)));
    });
  };
  const stop = async (signal: NodeJS.Signals = "SIGKILL") => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill(signal);
    await exited;
  };
  await start();
  const auth = o.password ? `:${o.password}@` : "";
  return {
    url: `${o.tls ? "rediss" : "redis"}://${auth}127.0.0.1:${port}`,
    port,
    dir,
    ca,
    start,
    stop,
    async cleanup() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
