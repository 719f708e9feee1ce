/**
 * `predict` as a resumable batch: reads the claims, runs task 1 (retrieve k abstracts, verify each) or task 2
 * (narratives) through runBatch with a checkpoint beside the output, writes the official file atomically and,
 * on request, the CodaBench zip.
 */
import { resolve } from "node:path";
import { readClaims, writeTask1Predictions, writeTask2Predictions } from "../data/climatecheck.ts";
import { DataError } from "../data/errors.ts";
import { readManifest } from "../index/schema.ts";
import type { NarrativesConfig } from "../narratives/config.ts";
import type { RetrievalConfig } from "../retrieval/byo.ts";
import { checkClaim } from "../retrieval/retriever.ts";
import type { Claim, Task1Prediction } from "../types.ts";
import type { VerifierConfig } from "../verification/config.ts";
import { type BatchSummary, type Lane, runBatch } from "./batch.ts";
import { fingerprint, type RunIdentity } from "./batch-checkpoint.ts";
import { openLanes } from "./batch-lanes.ts";
import type { Task1LaneOptions, Task1Result } from "./batch-task1.ts";
import { narrativesModelPath, type Task2LaneOptions, type Task2Result } from "./batch-task2.ts";
import { writeSubmissionZip } from "./submission-zip.ts";

export interface PredictBatchOptions {
  task: 1 | 2;
  claims: string;
  out: string;
  /** Task 1: index folder, abstracts per claim, verifier backend, re-ranker (null = none). */
  index?: string;
  k?: number;
  verifier?: VerifierConfig;
  reranker?: string | null;
  /** Task 1: a profile's retrieval section (its own ONNX models). */
  retrieval?: RetrievalConfig;
  /** Task 2: the model without the sentence encoder, or another model file, or a profile's narratives backend. */
  fast?: boolean;
  model?: string;
  narratives?: NarrativesConfig;
  /** Worker threads, each with its own models; 0 = one lane in this thread. Default DEFAULT_WORKERS. */
  workers?: number;
  /** Claims per chunk (the unit of checkpointing). */
  chunkSize?: number;
  /** Also write predictions.zip (CodaBench) beside the output. */
  zip?: boolean;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number, resumed: number) => void;
  /** Lanes to use instead of the real models (tests). */
  openLanes?: () => Promise<Lane<Claim, unknown>[]>;
  /** Called for each claim left out of task 1 (cannot be searched). */
  onSkip?: (message: string) => void;
}

export interface PredictBatchSummary extends BatchSummary {
  skipped: number;
  rows: number;
  zip?: string;
}

/**
 * Task 1 defaults to one in-process lane: from ENCODER_POOL_MIN_CLAIMS claims it sends all sentence encoding
 * (claims too) to 2 encoder worker threads and keeps several chunks in flight, so retrieval here overlaps encoding
 * there; two worker lanes (a model and an index per thread) cost more CPU per claim (BENCHMARKS.md, "predict").
 */
export const DEFAULT_WORKERS = { 1: 0, 2: 0 } as const;
/** Task 1 claims from which the in-process lane starts 2 encoder worker threads (~20 s to start under load). */
export const ENCODER_POOL_MIN_CLAIMS = 64;
export const DEFAULT_K = 10;

/** `<out>.partial.jsonl`: the checkpoint of a run writing `out`. */
export function checkpointPath(out: string): string {
  return `${out}.partial.jsonl`;
}

/** What a predict run is, before any model opens: its claims, its identity and its lanes. */
export interface PredictPlan {
  task: 1 | 2;
  /** Every claim of the file, and those that are run (task 1 leaves out claims that cannot be searched). */
  all: Claim[];
  claims: Claim[];
  /** The parameters and claims fingerprint the checkpoint (and a queue run) records. */
  identity: RunIdentity;
  /** The lanes' kind and options (task 1: index, k, verifier, re-ranker). */
  lane: LaneSpec;
}

export type LaneSpec =
  | { kind: "task1"; options: Task1LaneOptions }
  | { kind: "task2"; options: Task2LaneOptions };

export type PredictInputs = Pick<
  PredictBatchOptions,
  | "task"
  | "claims"
  | "index"
  | "k"
  | "verifier"
  | "reranker"
  | "retrieval"
  | "fast"
  | "model"
  | "narratives"
  | "onSkip"
>;

/** Reads and checks the claims and fixes the run's parameters; shared by predict and `queue submit`. */
export async function planPredict(o: PredictInputs): Promise<PredictPlan> {
  const all = await readClaims(o.claims);
  if (o.task === 2) {
    const byo = o.narratives && o.narratives.backend !== "builtin" ? o.narratives : undefined;
    const lane: LaneSpec = {
      kind: "task2",
      options: { fast: o.fast, model: o.model, ...(byo ? { narratives: byo } : {}) },
    };
    // The built-in run's identity is unchanged, so its checkpoints stay valid.
    const params = byo ? { task: 2, narratives: byo } : { task: 2, model: narrativesModelPath(o) };
    return { task: 2, all, claims: all, identity: identity(params, all), lane };
  }
  const claims = all.filter((c) => {
    try {
      checkClaim(c.text, `${o.claims}, claim ${c.id}`);
      return true;
    } catch (e) {
      if (!(e instanceof DataError)) throw e;
      o.onSkip?.(e.message);
      return false;
    }
  });
  if (claims.length === 0) throw new DataError(o.claims, "no claim can be searched");
  if (!o.index) throw new Error("predict --task 1 needs an index folder");
  const index = resolve(o.index);
  const manifest = readManifest(index);
  const k = o.k ?? DEFAULT_K;
  const verifier = o.verifier ?? { backend: "builtin" };
  const params = {
    task: 1,
    k,
    index,
    indexCreated: manifest.createdAt,
    indexDocs: manifest.committed.docs,
    verifier,
    reranker: o.reranker === undefined ? "shipped" : o.reranker,
  };
  const byo = o.retrieval && o.retrieval.backend !== "builtin" ? o.retrieval : undefined;
  const lane: LaneSpec = {
    kind: "task1",
    options: { index, k, verifier, reranker: o.reranker, ...(byo ? { retrieval: byo } : {}) },
  };
  if (byo) Object.assign(params, { retrieval: byo });
  return { task: 1, all, claims, identity: identity(params, claims), lane };
}

function identity(params: Record<string, unknown>, claims: readonly Claim[]): RunIdentity {
  return { params, input: fingerprint(claims.map((c) => [c.id, c.text])) };
}

/** Writes the official file of a task from one result per claim, in claim order (atomically); returns its rows. */
export async function writePredictions(
  task: 1 | 2,
  out: string,
  claims: readonly Pick<Claim, "id">[],
  results: readonly unknown[],
): Promise<number> {
  if (task === 2) {
    await writeTask2Predictions(
      out,
      (results as Task2Result[]).map((codes, i) => ({ claimId: claims[i].id, codes })),
    );
    return claims.length;
  }
  const rows: Task1Prediction[] = [];
  (results as Task1Result[]).forEach((hits, i) => {
    hits.forEach(([abstractId, label], r) => {
      rows.push({ claimId: claims[i].id, abstractId, rank: r + 1, label });
    });
  });
  await writeTask1Predictions(out, rows);
  return rows.length;
}

/**
 * The lanes of a plan: `workers` threads (0 = this thread). An in-process task 1 lane gets 2 encoder worker
 * threads when `claims` repays starting them.
 */
export function planLanes(lane: LaneSpec, workers: number, claims: number): Promise<Lane<Claim, unknown>[]> {
  if (lane.kind === "task2") return openLanes("task2", lane.options, workers);
  const encoderWorkers = workers === 0 && claims >= ENCODER_POOL_MIN_CLAIMS ? 2 : 0;
  return openLanes("task1", { ...lane.options, encoderWorkers }, workers);
}

export async function predictBatch(o: PredictBatchOptions): Promise<PredictBatchSummary> {
  const plan = await planPredict(o);
  const workers = o.workers ?? DEFAULT_WORKERS[o.task];
  let rows = 0;
  const summary = await runBatch<Claim, unknown>({
    items: plan.claims,
    checkpoint: checkpointPath(o.out),
    identity: plan.identity,
    openLanes: o.openLanes ?? (() => planLanes(plan.lane, workers, plan.claims.length)),
    chunkSize: o.chunkSize,
    signal: o.signal,
    onProgress: o.onProgress,
    write: async (results) => {
      rows = await writePredictions(o.task, o.out, plan.claims, results);
    },
  });
  const zip = o.zip ? await writeSubmissionZip(o.out) : undefined;
  return { ...summary, skipped: plan.all.length - plan.claims.length, rows, zip };
}
