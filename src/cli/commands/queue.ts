/**
 * `climatecheck queue submit|work|status|collect`: predict spread over machines through one Redis (BullMQ); see
 * src/queue/. The Redis URL comes from --redis or $CLIMATECHECK_REDIS and is printed only with its password hidden.
 */
import type { Command } from "commander";
import { DataError } from "../../data/errors.ts";
import { readNarrativesConfig } from "../../narratives/config.ts";
import { DEFAULT_CHUNK } from "../../pipeline/batch.ts";
import { DEFAULT_K } from "../../pipeline/batch-predict.ts";
import { connectRedis } from "../../queue/redis.ts";
import { collect, formatStatus, runStatus } from "../../queue/status.ts";
import { DEFAULT_ATTEMPTS, DEFAULT_BACKOFF_MS, submit } from "../../queue/submit.ts";
import { DEFAULT_LOCK_MS, work } from "../../queue/work.ts";
import { readRetrievalConfig } from "../../retrieval/byo.ts";
import { resolveVerifierConfig } from "../../verification/config.ts";
import { indexWithProgress } from "../index-progress.ts";
import { addVerifierOptions, type VerifierFlags } from "../verifier-options.ts";
import { taskNumber, wholeNumber } from "./predict.ts";

const log = (m: string) => process.stderr.write(`${m}\n`);

function redisUrl(flag: string | undefined): string {
  const url = flag ?? process.env.CLIMATECHECK_REDIS;
  if (!url) throw new DataError("--redis", "no Redis URL (pass --redis URL or set CLIMATECHECK_REDIS)");
  return url;
}

const REDIS_HELP =
  "Redis URL, redis:// or rediss:// (TLS) (default: $CLIMATECHECK_REDIS, which keeps a password out of ps)";

interface SubmitFlags extends VerifierFlags {
  redis?: string;
  task: 1 | 2;
  claims: string;
  run?: string;
  index?: string;
  k: number;
  chunkSize: number;
  fast?: boolean;
  attempts: number;
  backoff: number;
}

export function register(program: Command): void {
  const queue = program
    .command("queue")
    .description("Batch predictions across machines: one Redis, any number of workers (BullMQ)");

  addVerifierOptions(queue.command("submit"), "task 1: ")
    .description(
      "Split a claims file into chunks on the queue; prints the run name (the same inputs: the same run)",
    )
    .option("--redis <url>", REDIS_HELP)
    .requiredOption("--task <n>", "task number (1, 2)", taskNumber)
    .requiredOption("--claims <file>", "claims file (claim_id, claim)")
    .option("--run <name>", "run name (default: derived from the inputs)")
    .option("--index <dir>", "task 1: index directory; workers need a copy (default: the default index)")
    .option("--k <n>", "task 1: abstracts per claim", wholeNumber("--k", 1, 1000), DEFAULT_K)
    .option(
      "--chunk-size <n>",
      "claims per chunk (job)",
      wholeNumber("--chunk-size", 1, 10000),
      DEFAULT_CHUNK,
    )
    .option("--fast", "task 2: without the sentence encoder")
    .option(
      "--attempts <n>",
      "tries per chunk before it fails",
      wholeNumber("--attempts", 1, 100),
      DEFAULT_ATTEMPTS,
    )
    .option(
      "--backoff <ms>",
      "wait before the first retry, doubling each time",
      wholeNumber("--backoff", 0, 3_600_000),
      DEFAULT_BACKOFF_MS,
    )
    .action(async (o: SubmitFlags) => {
      const r = await submit({
        redis: redisUrl(o.redis),
        task: o.task,
        claims: o.claims,
        run: o.run,
        k: o.k,
        chunkSize: o.chunkSize,
        fast: o.fast,
        attempts: o.attempts,
        backoffMs: o.backoff,
        ...(o.task === 1
          ? {
              index: await indexWithProgress(o.index),
              verifier: await resolveVerifierConfig(o),
              retrieval: await readRetrievalConfig(o.config),
            }
          : { narratives: await readNarrativesConfig(o.config) }),
        onSkip: (m) => log(`skipped: ${m}`),
      });
      log(
        r.existed
          ? `run ${r.name} was submitted already: ${r.added} chunks added, ${r.requeued} failed chunks queued again`
          : `submitted run ${r.name}: ${r.claims} claims in ${r.chunks} chunks`,
      );
      process.stdout.write(`${r.name}\n`);
    });

  queue
    .command("work")
    .description(
      "Work on the queue's runs (models and index loaded once); SIGTERM stops after the chunks in progress",
    )
    .option("--redis <url>", REDIS_HELP)
    .option("--index <dir>", "task 1: this machine's copy of the runs' index (default: the default index)")
    .option(
      "--concurrency <n>",
      "chunks at once (default as predict: 3 for task 1 with the built-in verifier, else 1)",
      wholeNumber("--concurrency", 1, 64),
    )
    .option("--exit-when-idle", "exit once no run has chunks left, instead of waiting for new runs")
    .option(
      "--config <file>",
      "this machine's profile: runs with their own models (same settings) use its model folders",
    )
    .option(
      "--lock-duration <ms>",
      "a dead worker's chunks go back to the queue after about this long",
      wholeNumber("--lock-duration", 1000, 3_600_000),
      DEFAULT_LOCK_MS,
    )
    .action(
      async (o: {
        redis?: string;
        index?: string;
        concurrency?: number;
        exitWhenIdle?: boolean;
        lockDuration: number;
        config?: string;
      }) => {
        const profile = o.config
          ? {
              retrieval: await readRetrievalConfig(o.config),
              verification: await resolveVerifierConfig({ config: o.config }),
              narratives: await readNarrativesConfig(o.config),
            }
          : undefined;
        const abort = new AbortController();
        const stop = (signal: string) => () => {
          if (abort.signal.aborted) process.exit(signal === "SIGINT" ? 130 : 143);
          log(`${signal}: stopping after the chunks in progress (again to quit now)`);
          abort.abort();
        };
        const onTerm = stop("SIGTERM");
        const onInt = stop("SIGINT");
        process.on("SIGTERM", onTerm);
        process.on("SIGINT", onInt);
        try {
          const s = await work({
            redis: redisUrl(o.redis),
            index: () => indexWithProgress(o.index),
            concurrency: o.concurrency,
            exitWhenIdle: o.exitWhenIdle,
            lockMs: o.lockDuration,
            profile,
            signal: abort.signal,
            log,
          });
          log(`worker done: ${s.chunks} chunks, ${s.claims} claims`);
          if (s.refused.length > 0) process.exitCode = 2;
        } finally {
          process.off("SIGTERM", onTerm);
          process.off("SIGINT", onInt);
        }
      },
    );

  queue
    .command("status")
    .description("A run's chunks (waiting, active, done, failed with their error), claims/s and ETA")
    .option("--redis <url>", REDIS_HELP)
    .requiredOption("--run <name>", "run name (printed by submit)")
    .option("--json", "print JSON")
    .action(async (o: { redis?: string; run: string; json?: boolean }) => {
      const redis = await connectRedis(redisUrl(o.redis));
      try {
        const s = await runStatus(redis, o.run);
        process.stdout.write(`${o.json ? JSON.stringify(s, null, 2) : formatStatus(s)}\n`);
      } finally {
        redis.disconnect();
      }
    });

  queue
    .command("collect")
    .description(
      "Write a finished run's predictions file (what predict writes); exit 2 listing missing chunks",
    )
    .option("--redis <url>", REDIS_HELP)
    .requiredOption("--run <name>", "run name (printed by submit)")
    .requiredOption("--out <file>", "predictions file to write (CSV)")
    .option("--zip", "also write predictions.zip (predictions.csv inside, CodaBench format) beside OUT")
    .option("--wait", "wait for the missing chunks instead of refusing (rides out a Redis restart)")
    .option(
      "--timeout <s>",
      "with --wait: give up after this many seconds, exit 2 with the reason",
      wholeNumber("--timeout", 1, 30 * 24 * 3600),
    )
    .action(
      async (o: {
        redis?: string;
        run: string;
        out: string;
        zip?: boolean;
        wait?: boolean;
        timeout?: number;
      }) => {
        if (o.timeout !== undefined && !o.wait) throw new DataError("--timeout", "only with --wait");
        // A waiting collect reconnects as a worker does; --timeout still bounds it.
        const redis = await connectRedis(redisUrl(o.redis), {
          worker: o.wait,
          log: o.wait ? log : undefined,
        });
        try {
          const r = await collect(redis, o.run, {
            out: o.out,
            zip: o.zip,
            wait: o.wait,
            timeoutMs: o.timeout === undefined ? undefined : o.timeout * 1000,
            onStuck: (why) => log(`run ${o.run} waits for nobody: ${why}`),
          });
          log(
            `wrote ${r.rows} rows for ${r.claims} claims to ${o.out}${r.zip ? `; submission ${r.zip}` : ""}`,
          );
        } finally {
          redis.disconnect();
        }
      },
    );
}
