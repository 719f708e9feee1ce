/**
 * `predict` as a resumable batch: reads the claims, runs task 1 (retrieve k abstracts, verify each) or task 2
 * (narratives) through runBatch with a checkpoint beside the output, writes the official file atomically and,
 * on request, the CodaBench zip.
 */
import { resolve } from "node:path";
import { readClaims, writeTask1Predictions, writeTask2Predictions } from "../data/climatecheck.ts";
import { DataError } from "../data/errors.ts";
import { readManifest } from "../index/schema.ts";
import { checkClaim } from "../retrieval/retriever.ts";
import type { Claim, Task1Prediction } from "../types.ts";
import type { VerifierConfig } from "../verification/config.ts";
import { type BatchSummary, type Lane, runBatch } from "./batch.ts";
import { fingerprint } from "./batch-checkpoint.ts";
import { openLanes } from "./batch-lanes.ts";
import type { Task1Result } from "./batch-task1.ts";
import { narrativesModelPath, type Task2Result } from "./batch-task2.ts";
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
  /** Task 2: the model without the sentence encoder, or another model file. */
  fast?: boolean;
  model?: string;
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

export async function predictBatch(o: PredictBatchOptions): Promise<PredictBatchSummary> {
  const all = await readClaims(o.claims);
  let claims = all;
  let params: Record<string, unknown>;
  let write: (results: unknown[]) => Promise<number>;
  if (o.task === 1) {
    claims = all.filter((c) => {
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
    params = {
      task: 1,
      k: o.k ?? DEFAULT_K,
      index,
      indexCreated: manifest.createdAt,
      indexDocs: manifest.committed.docs,
      verifier: o.verifier ?? { backend: "builtin" },
      reranker: o.reranker === undefined ? "shipped" : o.reranker,
    };
    write = async (results) => {
      const rows: Task1Prediction[] = [];
      (results as Task1Result[]).forEach((hits, i) => {
        hits.forEach(([abstractId, label], r) => {
          rows.push({ claimId: claims[i].id, abstractId, rank: r + 1, label });
        });
      });
      await writeTask1Predictions(o.out, rows);
      return rows.length;
    };
  } else {
    params = { task: 2, model: narrativesModelPath(o) };
    write = async (results) => {
      await writeTask2Predictions(
        o.out,
        (results as Task2Result[]).map((codes, i) => ({ claimId: claims[i].id, codes })),
      );
      return claims.length;
    };
  }
  const workers = o.workers ?? DEFAULT_WORKERS[o.task];
  const lanes =
    o.openLanes ??
    (() =>
      o.task === 1
        ? openLanes(
            "task1",
            {
              index: params.index as string,
              k: params.k as number,
              verifier: params.verifier as VerifierConfig,
              reranker: o.reranker,
              encoderWorkers: workers === 0 && claims.length >= ENCODER_POOL_MIN_CLAIMS ? 2 : 0,
            },
            workers,
          )
        : openLanes("task2", { fast: o.fast, model: o.model }, workers));
  let rows = 0;
  const summary = await runBatch<Claim, unknown>({
    items: claims,
    checkpoint: checkpointPath(o.out),
    identity: { params, input: fingerprint(claims.map((c) => [c.id, c.text])) },
    openLanes: lanes,
    chunkSize: o.chunkSize,
    signal: o.signal,
    onProgress: o.onProgress,
    write: async (results) => {
      rows = await write(results);
    },
  });
  const zip = o.zip ? await writeSubmissionZip(o.out) : undefined;
  return { ...summary, skipped: all.length - claims.length, rows, zip };
}
