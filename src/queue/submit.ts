/**
 * `queue submit`: plans the run exactly as predict does (same claims checks, parameters and fingerprint), records
 * it and adds one BullMQ job per chunk. Job ids are the chunk numbers and the run name derives from the inputs, so
 * submitting the same inputs again adds nothing (and re-queues chunks that had failed for good).
 */
import { Queue } from "bullmq";
import { DEFAULT_CHUNK } from "../pipeline/batch.ts";
import { DEFAULT_K, type PredictInputs, planPredict } from "../pipeline/batch-predict.ts";
import type { VerifierConfig } from "../verification/config.ts";
import { connectRedis, QUEUE_PREFIX, RUNS_KEY } from "./redis.ts";
import {
  checkRunName,
  chunkId,
  indexFingerprint,
  modelFingerprints,
  RUN_FORMAT,
  type RunLane,
  type RunRecord,
  sha256,
} from "./run.ts";

export const DEFAULT_ATTEMPTS = 3;
export const DEFAULT_BACKOFF_MS = 5000;
/** Jobs per addBulk call: one round trip each, small enough to keep Redis responsive. */
const ADD_BATCH = 500;

export interface SubmitOptions extends PredictInputs {
  redis: string;
  run?: string;
  chunkSize?: number;
  /** Tries per chunk (the first included), with exponential backoff from backoffMs between them. */
  attempts?: number;
  backoffMs?: number;
}

export interface SubmitResult {
  name: string;
  claims: number;
  chunks: number;
  /** Chunks added by this call (0 when the run was there already). */
  added: number;
  /** Chunks that had failed for good and were queued again. */
  requeued: number;
  existed: boolean;
}

export async function submit(o: SubmitOptions): Promise<SubmitResult> {
  const plan = await planPredict(o);
  const lane: RunLane =
    plan.lane.kind === "task1"
      ? {
          kind: "task1",
          k: o.k ?? DEFAULT_K,
          verifier: plan.lane.options.verifier as VerifierConfig,
          reranker: o.reranker,
          ...(plan.lane.options.retrieval ? { retrieval: plan.lane.options.retrieval } : {}),
        }
      : {
          kind: "task2",
          fast: o.fast === true,
          ...(plan.lane.options.narratives ? { narratives: plan.lane.options.narratives } : {}),
        };
  const fingerprints = {
    index: plan.lane.kind === "task1" ? indexFingerprint(plan.lane.options.index) : undefined,
    models: modelFingerprints(lane),
  };
  // Same inputs on any machine (wherever the index or the claims file lie) give the same run.
  const key = sha256(JSON.stringify({ task: o.task, lane, fingerprints, input: plan.identity.input }));
  const name = checkRunName(o.run ?? `task${o.task}-${key.slice(0, 12)}`);
  const chunkSize = Math.max(1, Math.floor(o.chunkSize ?? DEFAULT_CHUNK));
  const record: RunRecord & { key: string } = {
    format: RUN_FORMAT,
    name,
    task: o.task,
    identity: plan.identity,
    lane,
    fingerprints,
    claims: plan.claims.length,
    skipped: plan.all.length - plan.claims.length,
    chunks: Math.ceil(plan.claims.length / chunkSize),
    chunkSize,
    attempts: o.attempts ?? DEFAULT_ATTEMPTS,
    backoffMs: o.backoffMs ?? DEFAULT_BACKOFF_MS,
    submittedAt: new Date().toISOString(),
    key,
  };

  const redis = await connectRedis(o.redis);
  const queue = new Queue(name, { connection: redis, prefix: QUEUE_PREFIX });
  try {
    // The record goes first: a submit killed half-way is completed by the next one (job ids make that safe).
    const created = await redis.hsetnx(RUNS_KEY, name, JSON.stringify(record));
    let run: RunRecord & { key: string } = record;
    if (!created) {
      run = JSON.parse((await redis.hget(RUNS_KEY, name)) as string);
      if (run.key !== key)
        throw new Error(
          `run "${name}" already holds other inputs (claims, task or parameters); choose another --run`,
        );
    }
    const before = await total(queue);
    for (let c = 0; c < run.chunks; c += ADD_BATCH) {
      const jobs = [];
      for (let i = c; i < Math.min(run.chunks, c + ADD_BATCH); i++)
        jobs.push({
          name: "chunk",
          data: { chunk: i, claims: plan.claims.slice(i * run.chunkSize, (i + 1) * run.chunkSize) },
          opts: {
            jobId: chunkId(i),
            attempts: run.attempts,
            backoff: { type: "exponential", delay: run.backoffMs },
          },
        });
      await queue.addBulk(jobs);
    }
    const added = (await total(queue)) - before;
    let requeued = 0;
    if (!created)
      for (const job of await queue.getFailed(0, -1)) {
        await job.retry("failed");
        requeued++;
      }
    return { name, claims: run.claims, chunks: run.chunks, added, requeued, existed: !created };
  } finally {
    await queue.close();
    redis.disconnect();
  }
}

async function total(queue: Queue): Promise<number> {
  const counts = await queue.getJobCounts();
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
