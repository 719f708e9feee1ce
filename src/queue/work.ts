/**
 * `queue work`: takes the runs on a Redis oldest first, refuses any whose index or models differ from this
 * machine's, and works on the others' chunks with BullMQ workers. Models load once per kind of run. A worker stays on
 * a run until every chunk is done or failed, so its stalled-job check returns the chunks of a worker that died.
 */
import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Lane } from "../pipeline/batch.ts";
import { planLanes } from "../pipeline/batch-predict.ts";
import type { Claim } from "../types.ts";
import { checkIn, checkOut, newWorkerId, recordRefusal } from "./presence.ts";
import { connectRedis, QUEUE_PREFIX } from "./redis.ts";
import { type LocalProfile, listRuns, localLane, mismatch, type RunRecord } from "./run.ts";

/** A chunk whose worker stops renewing its lock this long (ms) goes back to the queue. */
export const DEFAULT_LOCK_MS = 30_000;
/** Times a chunk may be given back after its worker died before it counts as failed. */
const MAX_STALLED = 3;
/** How often a worker checks whether its run still has chunks (one Redis call each). */
const POLL_MS = 1000;

export interface WorkOptions {
  redis: string;
  /** Task 1 index folder (called once, when the first task 1 run comes). */
  index: () => Promise<string>;
  /** Chunks at once; default: what the lane is built for (3 for task 1 with its encoder pool, else 1). */
  concurrency?: number;
  exitWhenIdle?: boolean;
  lockMs?: number;
  /** Stops taking chunks; the chunks in progress finish first. */
  signal: AbortSignal;
  log: (message: string) => void;
  /** This machine's profile (`--config`): runs with their own models use its model folders. */
  profile?: LocalProfile;
}

export interface WorkSummary {
  chunks: number;
  claims: number;
  /** Runs refused, with the reason. */
  refused: { run: string; reason: string }[];
}

interface OpenLane {
  key: string;
  lane: Lane<Claim, unknown>;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((r) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      r();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

export async function work(o: WorkOptions): Promise<WorkSummary> {
  const redis = await connectRedis(o.redis, { worker: true, log: o.log });
  const summary: WorkSummary = { chunks: 0, claims: 0, refused: [] };
  const refused = new Set<string>();
  let index: string | undefined;
  let open: OpenLane | undefined;
  const me = newWorkerId();
  try {
    while (!o.signal.aborted) {
      await checkIn(redis, me);
      let run: RunRecord | undefined;
      for (const r of await listRuns(redis)) {
        if (refused.has(r.name) || !(await hasWork(redis, r.name))) continue;
        if (r.lane.kind === "task1") index ??= await o.index();
        const why = mismatch(r, index, o.profile);
        if (why) {
          refused.add(r.name);
          summary.refused.push({ run: r.name, reason: why });
          await recordRefusal(redis, r.name, me, why);
          o.log(`refusing run ${r.name}: ${why}`);
          continue;
        }
        run = r;
        break;
      }
      if (!run) {
        if (o.exitWhenIdle) break;
        await sleep(2000, o.signal);
        continue;
      }
      const spec = localLane(run.lane, index, o.profile);
      const key = JSON.stringify(spec);
      if (open?.key !== key) {
        await open?.lane.close();
        open = undefined;
        o.log(`loading the models for run ${run.name} (task ${run.task})`);
        // One lane in this process, as predict uses by default (task 1: 2 encoder threads, chunks overlapped).
        const [lane] = await planLanes(spec, 0, Number.POSITIVE_INFINITY);
        open = { key, lane };
      }
      if (o.signal.aborted) break; // stopped while the models loaded: take no chunk
      await workOn(redis, run, open.lane, o, summary, () => checkIn(redis, me));
    }
  } finally {
    await open?.lane.close();
    // Not waited for when Redis is gone: the check-in then expires by itself.
    await Promise.race([
      checkOut(redis, me).catch(() => {}),
      new Promise((r) => setTimeout(r, 1000).unref()),
    ]);
    redis.disconnect();
  }
  return summary;
}

/** Chunks waiting, active or waiting for a retry. */
async function pending(queue: Queue): Promise<boolean> {
  const c = await queue.getJobCounts("waiting", "active", "delayed", "prioritized");
  return Object.values(c).some((n) => n > 0);
}

async function hasWork(redis: Redis, name: string): Promise<boolean> {
  const queue = new Queue(name, { connection: redis, prefix: QUEUE_PREFIX });
  try {
    return await pending(queue);
  } finally {
    await queue.close();
  }
}

/** Works on one run until none of its chunks is waiting, active or waiting for a retry, or until the signal. */
async function workOn(
  redis: Redis,
  run: RunRecord,
  lane: Lane<Claim, unknown>,
  o: WorkOptions,
  summary: WorkSummary,
  checkIn: () => Promise<void>,
): Promise<void> {
  const lockDuration = o.lockMs ?? DEFAULT_LOCK_MS;
  o.log(`working on run ${run.name}: ${run.chunks} chunks of ${run.chunkSize} claims`);
  const worker = new Worker<{ chunk: number; claims: Claim[] }, unknown[]>(
    run.name,
    async (job) => {
      const started = Date.now();
      const results = await lane.process(job.data.claims);
      if (results.length !== job.data.claims.length)
        throw new Error(`the lane returned ${results.length} results for ${job.data.claims.length} claims`);
      o.log(
        `${run.name} ${job.id}: ${results.length} claims in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      return results;
    },
    {
      connection: redis,
      prefix: QUEUE_PREFIX,
      concurrency: o.concurrency ?? lane.concurrency ?? 1,
      lockDuration,
      stalledInterval: Math.max(500, Math.floor(lockDuration / 2)),
      maxStalledCount: MAX_STALLED,
    },
  );
  let lastError = "";
  worker.on("error", (e) => {
    if (e.message !== lastError) o.log(`worker: ${e.message}`);
    lastError = e.message;
  });
  worker.on("completed", (job) => {
    summary.chunks++;
    summary.claims += job.data.claims.length;
  });
  worker.on("failed", (job, e) => {
    if (job) o.log(`${run.name} ${job.id} failed (try ${job.attemptsMade} of ${run.attempts}): ${e.message}`);
  });
  const queue = new Queue(run.name, { connection: redis, prefix: QUEUE_PREFIX });
  try {
    while (!o.signal.aborted && (await pending(queue))) {
      await checkIn();
      await sleep(POLL_MS, o.signal);
    }
  } finally {
    // Not forced: the chunks in progress finish and are saved before the worker lets go.
    await worker.close();
    await queue.close();
  }
}
