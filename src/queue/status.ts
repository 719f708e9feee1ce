/** `queue status` and `queue collect`: a run's progress, and its predictions file once every chunk is done. */
import { type Job, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { DataError } from "../data/errors.ts";
import { fingerprint } from "../pipeline/batch-checkpoint.ts";
import { writePredictions } from "../pipeline/batch-predict.ts";
import { writeSubmissionZip } from "../pipeline/submission-zip.ts";
import type { Claim } from "../types.ts";
import { type Presence, presence, whyStuck } from "./presence.ts";
import { QUEUE_PREFIX } from "./redis.ts";
import { chunkId, type RunRecord, readRun } from "./run.ts";

type ChunkJob = Job<{ chunk: number; claims: Claim[] }, unknown[]>;

export interface RunStatus {
  run: string;
  task: 1 | 2;
  claims: number;
  chunkSize: number;
  chunks: { total: number; waiting: number; active: number; retrying: number; done: number; failed: number };
  claimsDone: number;
  /** Over the span from the first chunk started to the last one finished; null before any is done. */
  claimsPerSecond: number | null;
  etaSeconds: number | null;
  failed: { chunk: string; attempts: number; error: string }[];
  /** Workers around (checked in within WORKER_GONE_MS) and those that refused this run, with their reasons. */
  workers: Presence;
  /** Why the chunks left wait for nobody (see whyStuck); null when done or when a worker may still take them. */
  stuck: string | null;
}

/** Jobs fetched per call when paging through a state. */
const PAGE = 1000;

export async function runStatus(redis: Redis, name: string): Promise<RunStatus> {
  const run = await readRun(redis, name);
  const queue = new Queue(name, { connection: redis, prefix: QUEUE_PREFIX });
  try {
    const c = await queue.getJobCounts("waiting", "prioritized", "active", "delayed", "completed", "failed");
    const [first] = await queue.getJobs(["completed"], 0, 0, true);
    const [last] = await queue.getJobs(["completed"], 0, 0, false);
    const failedJobs = await queue.getFailed(0, 99);
    // Every chunk but the last is full.
    const lastSize = run.claims - (run.chunks - 1) * run.chunkSize;
    const lastDone = (await queue.getJobState(chunkId(run.chunks - 1))) === "completed";
    const claimsDone = lastDone ? (c.completed - 1) * run.chunkSize + lastSize : c.completed * run.chunkSize;
    const span = first && last ? ((last.finishedOn ?? 0) - (first.processedOn ?? 0)) / 1000 : 0;
    const rate = claimsDone > 0 && span > 0 ? claimsDone / span : null;
    const workers = await presence(redis, name);
    const left = c.waiting + c.prioritized + c.active + c.delayed > 0;
    return {
      run: name,
      task: run.task,
      claims: run.claims,
      chunkSize: run.chunkSize,
      chunks: {
        total: run.chunks,
        waiting: c.waiting + c.prioritized,
        active: c.active,
        retrying: c.delayed,
        done: c.completed,
        failed: c.failed,
      },
      claimsDone,
      claimsPerSecond: rate,
      etaSeconds: rate && c.failed === 0 ? (run.claims - claimsDone) / rate : null,
      failed: failedJobs.map((j) => ({
        chunk: j.id ?? "?",
        attempts: j.attemptsMade,
        error: j.failedReason ?? "unknown error",
      })),
      workers,
      stuck: (left && whyStuck(workers)) || null,
    };
  } finally {
    await queue.close();
  }
}

export function formatStatus(s: RunStatus): string {
  const k = s.chunks;
  const lines = [
    `run ${s.run}: task ${s.task}, ${s.claims} claims in ${k.total} chunks of ${s.chunkSize}`,
    `chunks: ${k.done} done, ${k.active} active, ${k.waiting} waiting, ${k.retrying} waiting to retry, ${k.failed} failed`,
    `claims: ${s.claimsDone} of ${s.claims} done` +
      (s.claimsPerSecond ? `, ${s.claimsPerSecond.toFixed(1)} claims/s` : "") +
      (s.etaSeconds !== null && s.claimsDone < s.claims ? `, ETA ${Math.ceil(s.etaSeconds)} s` : ""),
  ];
  const w = s.workers;
  lines.push(
    `workers: ${w.live.length} seen in the last minute` +
      (w.lastSeenSecondsAgo !== null && w.live.length === 0 ? ` (last ${w.lastSeenSecondsAgo} s ago)` : "") +
      `, ${w.refusals.length} refused this run`,
  );
  for (const r of w.refusals) lines.push(`refused by ${r.worker}: ${r.reason}`);
  if (s.stuck) lines.push(`waiting for nobody: ${s.stuck}`);
  for (const f of s.failed) lines.push(`failed ${f.chunk} after ${f.attempts} tries: ${f.error}`);
  if (k.failed > s.failed.length) lines.push(`(${k.failed - s.failed.length} more failed chunks)`);
  return lines.join("\n");
}

/** collect while chunks are missing: exit 2 with the list. */
export class IncompleteRun extends DataError {
  readonly missing: string[];
  constructor(run: string, missing: string[], failed: number, why?: string) {
    const shown =
      missing.slice(0, 20).join(", ") + (missing.length > 20 ? `, ... (${missing.length - 20} more)` : "");
    super(
      `run ${run}`,
      `incomplete: ${missing.length} chunk(s) not done (${shown})` +
        (failed
          ? `; ${failed} failed for good (see queue status; submit the same inputs again to retry them)`
          : "") +
        (why ? `; ${why}` : "; collect --wait waits for them"),
    );
    this.name = "IncompleteRun";
    this.missing = missing;
  }
}

/** Every completed chunk's job, by chunk number. */
async function completedChunks(queue: Queue, run: RunRecord): Promise<Map<number, ChunkJob>> {
  const done = new Map<number, ChunkJob>();
  for (let start = 0; ; start += PAGE) {
    const page = (await queue.getJobs(["completed"], start, start + PAGE - 1, true)) as ChunkJob[];
    for (const job of page) if (job) done.set(job.data.chunk, job);
    if (page.length < PAGE || done.size >= run.chunks) break;
  }
  return done;
}

export interface CollectOptions {
  out: string;
  zip?: boolean;
  /** Waits for missing chunks instead of refusing (still refuses once a chunk failed for good). */
  wait?: boolean;
  pollMs?: number;
  /** With wait: gives up after this long (IncompleteRun naming why the chunks are not done). */
  timeoutMs?: number;
  /** With wait: told each new reason why the chunks left wait for nobody (see whyStuck). */
  onStuck?: (why: string) => void;
}

/** A Redis call that may hang while Redis is away (a waiting collect reconnects forever), cut at the deadline. */
function before<T>(p: Promise<T>, deadline: number): Promise<T | typeof TIMED_OUT> {
  if (!Number.isFinite(deadline)) return p;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof TIMED_OUT>((r) => {
    timer = setTimeout(() => r(TIMED_OUT), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
const TIMED_OUT = Symbol("timed out");

/** Writes the run's predictions file, the same bytes predict writes for the same inputs, atomically. */
export async function collect(
  redis: Redis,
  name: string,
  o: CollectOptions,
): Promise<{ rows: number; claims: number; zip?: string }> {
  const run = await readRun(redis, name);
  const queue = new Queue(name, { connection: redis, prefix: QUEUE_PREFIX });
  try {
    let done = new Map<number, ChunkJob>();
    const deadline =
      o.wait && o.timeoutMs !== undefined ? Date.now() + o.timeoutMs : Number.POSITIVE_INFINITY;
    let stuck: string | undefined;
    let first = true;
    for (;;) {
      // The first poll is never cut (a slow start is not Redis being away); later ones are, at the deadline.
      const polled = await before(
        (async () => {
          done = await completedChunks(queue, run);
          const missing = Array.from({ length: run.chunks }, (_, i) => i).filter((i) => !done.has(i));
          const failed = missing.length ? await queue.getFailedCount() : 0;
          const why = missing.length && o.wait && !failed ? whyStuck(await presence(redis, name)) : undefined;
          return { missing, failed, why };
        })(),
        first ? Number.POSITIVE_INFINITY : deadline,
      );
      first = false;
      if (polled === TIMED_OUT) {
        const missing = Array.from({ length: run.chunks }, (_, i) => i).filter((i) => !done.has(i));
        throw new IncompleteRun(
          name,
          missing.map(chunkId),
          0,
          `gave up after ${(o.timeoutMs ?? 0) / 1000} s: ${stuck ?? "Redis did not answer"}`,
        );
      }
      const { missing, failed, why } = polled;
      if (missing.length === 0) break;
      if (!o.wait || failed > 0) throw new IncompleteRun(name, missing.map(chunkId), failed);
      if (why && why !== stuck) o.onStuck?.(why);
      stuck = why;
      if (Date.now() >= deadline)
        throw new IncompleteRun(
          name,
          missing.map(chunkId),
          0,
          `gave up after ${(o.timeoutMs ?? 0) / 1000} s: ${why ?? "the workers are still on it"}`,
        );
      await new Promise((r) => setTimeout(r, Math.min(o.pollMs ?? 1000, Math.max(0, deadline - Date.now()))));
    }
    const claims: Claim[] = [];
    const results: unknown[] = [];
    for (let i = 0; i < run.chunks; i++) {
      const job = done.get(i) as ChunkJob;
      if (job.returnvalue?.length !== job.data.claims.length)
        throw new Error(
          `run ${name}: ${chunkId(i)} holds ${job.returnvalue?.length} results for ${job.data.claims.length} claims`,
        );
      claims.push(...job.data.claims);
      results.push(...job.returnvalue);
    }
    // The chunks must add up to the claims that were submitted, in order.
    if (fingerprint(claims.map((c) => [c.id, c.text])) !== run.identity.input)
      throw new Error(
        `run ${name}: the chunks' claims do not match the claims fingerprint recorded at submit`,
      );
    const rows = await writePredictions(run.task, o.out, claims, results);
    const zip = o.zip ? await writeSubmissionZip(o.out) : undefined;
    return { rows, claims: claims.length, zip };
  } finally {
    await queue.close();
  }
}
