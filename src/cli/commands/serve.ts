/**
 * `climatecheck serve`: the HTTP API and web page over a pipeline loaded at start, in one process or, with
 * --workers N, in N processes sharing the port (a check runs on one thread; more processes use more cores).
 */
import { availableParallelism } from "node:os";
import type { Command } from "commander";
import { corpusOf } from "../../data/builtin-corpus.ts";
import { profileInfo } from "../../models/profile.ts";
import { readNarrativesConfig } from "../../narratives/config.ts";
import { openPipeline } from "../../pipeline/pipeline.ts";
import { readRetrievalConfig } from "../../retrieval/byo.ts";
import { isClusterWorker, reportListening, runPrimary } from "../../server/cluster.ts";
import { startServer } from "../../server/start.ts";
import { resolveVerifierConfig } from "../../verification/config.ts";
import { indexWithProgress } from "../index-progress.ts";
import { addVerifierOptions, type VerifierFlags } from "../verifier-options.ts";

interface ServeOptions extends VerifierFlags {
  port: string;
  host: string;
  index?: string;
  fast?: boolean;
  maxInFlight: string;
  timeout: string;
  headersTimeout: string;
  bodyTimeout: string;
  idleTimeout: string;
  maxConnections: string;
  workers: string;
  cors?: string;
}

/** `*`, or one origin as a browser sends it (scheme://host[:port], no path). */
const validOrigin = (v: string) => {
  if (v === "*") return true;
  try {
    return new URL(v).origin === v;
  } catch {
    return false;
  }
};

/** Two processes use a laptop's cores without doubling memory more than once (each holds index and models). */
const DEFAULT_WORKERS = String(Math.min(2, availableParallelism()));

const WARM_UP_CLAIM = "Global temperatures have risen since 1900.";

const whole = (v: string, min: number, max: number) => {
  const n = Number(v);
  return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
};

export function register(program: Command): void {
  addVerifierOptions(program.command("serve"))
    .description(
      "Serve the HTTP API (/v1/check, /v1/verify, /v1/narratives, /v1/abstracts/:id) and the web page",
    )
    .option("--port <n>", "port", "8080")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--index <dir>", "index directory (default: the default index, built on first use)")
    .option("--fast", "no re-ranker (narratives always use the fast model here)")
    .option("--max-in-flight <n>", "requests doing pipeline work at once; more get 503", "4")
    .option("--timeout <ms>", "request timeout in milliseconds (504)", "30000")
    .option("--workers <n>", "server processes sharing the port, one core each", DEFAULT_WORKERS)
    .option("--cors <origin>", "let pages from this origin (or * for any) call the API; off by default")
    .option("--headers-timeout <ms>", "time a client has to send a request's headers (408)", "10000")
    .option("--body-timeout <ms>", "time a client has to send a whole request, body included (408)", "30000")
    .option("--idle-timeout <ms>", "time a kept-alive connection may wait for its next request", "5000")
    .option("--max-connections <n>", "open connections at most; more are closed at once", "1024")
    .action(async (opts: ServeOptions, cmd: Command) => {
      const port = whole(opts.port, 0, 65535);
      const maxInFlight = whole(opts.maxInFlight, 1, 1000);
      const timeoutMs = whole(opts.timeout, 1, 3_600_000);
      const workers = whole(opts.workers, 1, 64);
      if (port === undefined) cmd.error("--port must be a whole number from 0 to 65535");
      if (maxInFlight === undefined) cmd.error("--max-in-flight must be a whole number from 1 to 1000");
      if (timeoutMs === undefined) cmd.error("--timeout must be a whole number of milliseconds");
      if (workers === undefined) cmd.error("--workers must be a whole number from 1 to 64");
      const headersTimeoutMs = whole(opts.headersTimeout, 100, 3_600_000);
      const bodyTimeoutMs = whole(opts.bodyTimeout, 100, 3_600_000);
      const idleTimeoutMs = whole(opts.idleTimeout, 100, 3_600_000);
      const maxConnections = whole(opts.maxConnections, 1, 1_000_000);
      for (const [flag, v] of [
        ["--headers-timeout", headersTimeoutMs],
        ["--body-timeout", bodyTimeoutMs],
        ["--idle-timeout", idleTimeoutMs],
      ] as const)
        if (v === undefined) cmd.error(`${flag} must be a whole number of milliseconds from 100`);
      if (maxConnections === undefined) cmd.error("--max-connections must be a whole number from 1");
      if (opts.cors !== undefined && !validOrigin(opts.cors))
        cmd.error("--cors must be * or an origin such as https://example.org (no path)");
      const verifier = await resolveVerifierConfig(opts);
      const retrieval = await readRetrievalConfig(opts.config);
      const narratives = await readNarrativesConfig(opts.config);
      const profile = opts.config ? profileInfo(opts.config) : null;
      // The primary builds the default index (with its progress bar) before the workers open it.
      const index = await indexWithProgress(opts.index, retrieval);
      if (workers > 1 && !isClusterWorker()) process.exit(await runPrimary(workers));
      const pipeline = await openPipeline({ index, fast: opts.fast, verifier, retrieval, narratives });
      // The encoder loads on first use; one check now keeps that second or more off the first user's request.
      const warm = performance.now();
      await pipeline.check(WARM_UP_CLAIM);
      const warmMs = Math.round(performance.now() - warm);
      const server = await startServer(pipeline, {
        port,
        host: opts.host,
        maxInFlight,
        timeoutMs,
        cors: opts.cors,
        profile,
        headersTimeoutMs,
        bodyTimeoutMs,
        idleTimeoutMs,
        maxConnections,
      }).catch(async (e: NodeJS.ErrnoException) => {
        await pipeline.close();
        if (e.code !== "EADDRINUSE" && e.code !== "EACCES" && e.code !== "EADDRNOTAVAIL") throw e;
        process.stderr.write(`climatecheck serve: cannot listen on ${opts.host}:${port} (${e.code})\n`);
        process.exit(2);
      });
      const info = {
        url: server.url,
        index: pipeline.indexDir,
        warm_up_ms: warmMs,
        abstracts: pipeline.abstracts,
        corpus: corpusOf(pipeline.indexDir, pipeline.abstracts),
        retrieval: pipeline.retrieval,
        verifier: pipeline.verifierName,
        backends: pipeline.backends,
        profile,
      };
      if (isClusterWorker()) reportListening(info);
      else process.stderr.write(`${JSON.stringify({ level: "info", msg: "listening", ...info })}\n`);
      let stopping = false;
      const stop = async () => {
        if (stopping) return;
        stopping = true;
        await server.close();
        await pipeline.close();
        process.exit(0);
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
