/**
 * A queue run: predict's run (the same parameters and claims fingerprint, src/pipeline/batch-predict.ts) split into
 * chunks, one BullMQ job each, plus what a worker on another machine must match: the index and model fingerprints.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { DataError } from "../data/errors.ts";
import { FILES } from "../index/schema.ts";
import type { NarrativesConfig } from "../narratives/config.ts";
import type { RunIdentity } from "../pipeline/batch-checkpoint.ts";
import type { LaneSpec } from "../pipeline/batch-predict.ts";
import { narrativesModelPath } from "../pipeline/batch-task2.ts";
import type { RetrievalConfig } from "../retrieval/byo.ts";
import { RERANKER_PATH } from "../retrieval/load.ts";
import { DEFAULT_MODEL_PATH } from "../verification/builtin.ts";
import type { VerifierConfig } from "../verification/config.ts";
import { RUNS_KEY } from "./redis.ts";

export const RUN_FORMAT = "climatecheck-queue/1";

/** What a worker needs to rebuild a run's lanes on its own machine (no local paths but the verifier's). */
export type RunLane =
  | {
      kind: "task1";
      k: number;
      verifier: VerifierConfig;
      reranker?: string | null;
      /** A profile's own retrieval models (absent: built-in). */
      retrieval?: RetrievalConfig;
    }
  | { kind: "task2"; fast: boolean; narratives?: NarrativesConfig };

/** A worker's own profile (`queue work --config`): the same stage settings, with this machine's model folders. */
export interface LocalProfile {
  retrieval?: RetrievalConfig;
  verification?: VerifierConfig;
  narratives?: NarrativesConfig;
}

/** A stage's settings without its model folders, which differ from machine to machine. */
const settings = (x: unknown) => JSON.stringify(x, (k, v) => (k === "modelDir" ? undefined : v));
const own = <T extends { backend: string }>(c: T | undefined) =>
  c && c.backend !== "builtin" ? c : undefined;

/**
 * The run's stage on this machine: when both the run and this machine's profile use their own models for it, the
 * profile's folders (the other settings must agree, else why not); otherwise the run's settings as recorded.
 */
function localStage<T extends { backend: string }>(
  stage: string,
  run: T | undefined,
  mine: T | undefined,
): { use?: T; why?: string } {
  const r = own(run);
  const m = own(mine);
  if (!r || !m) return { use: run };
  if (settings(r) !== settings(m))
    return {
      why: `its ${stage} settings ${settings(r)} differ from this worker's profile (${settings(m)}); use the submitting machine's profile with this machine's model folders`,
    };
  return { use: m };
}

export interface RunRecord {
  format: typeof RUN_FORMAT;
  name: string;
  task: 1 | 2;
  /** Exactly what predict's checkpoint records: parameters and the claims fingerprint. */
  identity: RunIdentity;
  lane: RunLane;
  /** sha256 of the index manifest (task 1) and of each model file the run uses. */
  fingerprints: { index?: string; models: Record<string, string> };
  claims: number;
  skipped: number;
  chunks: number;
  chunkSize: number;
  attempts: number;
  backoffMs: number;
  submittedAt: string;
}

export function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * An index's fingerprint: its manifest (corpus fingerprints, creation time, committed docs), which a copy of the
 * folder keeps and a re-ingest changes.
 */
export function indexFingerprint(dir: string): string {
  return sha256(readFileSync(join(dir, FILES.manifest)));
}

/** The model files a run's lanes load, by role, with their sha256 on this machine. */
export function modelFingerprints(lane: RunLane): Record<string, string> {
  const file = (path: string) => (existsSync(path) ? sha256(readFileSync(path)) : "missing");
  // A stage on the profile's own models loads no shipped model file.
  const own = (c: { backend: string } | undefined) => c !== undefined && c.backend !== "builtin";
  if (lane.kind === "task2")
    return own(lane.narratives) ? {} : { narratives: file(narrativesModelPath({ fast: lane.fast })) };
  const out: Record<string, string> = {};
  if (lane.verifier.backend === "builtin") out.verifier = file(lane.verifier.model ?? DEFAULT_MODEL_PATH);
  if (own(lane.retrieval)) return out;
  const reranker = lane.reranker === undefined ? RERANKER_PATH : lane.reranker;
  if (reranker !== null)
    out.reranker = existsSync(reranker) || lane.reranker !== undefined ? file(reranker) : "none";
  return out;
}

/** The lanes of a run on this machine: its parameters with this machine's index (and profile's model folders). */
export function localLane(lane: RunLane, index: string | undefined, profile: LocalProfile = {}): LaneSpec {
  if (lane.kind === "task2") {
    const narratives = localStage("narratives", lane.narratives, profile.narratives).use;
    return { kind: "task2", options: { fast: lane.fast, ...(narratives ? { narratives } : {}) } };
  }
  if (!index) throw new Error("a task 1 run needs an index");
  const retrieval = localStage("retrieval", lane.retrieval, profile.retrieval).use;
  const verifier = localStage("verification", lane.verifier, profile.verification).use ?? lane.verifier;
  return {
    kind: "task1",
    options: { index, k: lane.k, verifier, reranker: lane.reranker, ...(retrieval ? { retrieval } : {}) },
  };
}

/** Why this machine cannot work on a run (its index or a model differs), or undefined when it can. */
export function mismatch(
  run: RunRecord,
  index: string | undefined,
  profile: LocalProfile = {},
): string | undefined {
  const short = (h: string | undefined) => (h ? h.slice(0, 12) : "none");
  const stages =
    run.lane.kind === "task1"
      ? [
          localStage("retrieval", run.lane.retrieval, profile.retrieval),
          localStage("verification", run.lane.verifier, profile.verification),
        ]
      : [localStage("narratives", run.lane.narratives, profile.narratives)];
  const why = stages.find((s) => s.why)?.why;
  if (why) return why;
  if (run.lane.kind === "task1") {
    const mine = index && existsSync(join(index, FILES.manifest)) ? indexFingerprint(index) : undefined;
    if (mine !== run.fingerprints.index)
      return `its index has fingerprint ${short(run.fingerprints.index)} but this worker's index (${index ?? "none"}) has ${short(mine)}; copy the submitting machine's index folder to this machine and pass it with --index`;
  }
  const mine = modelFingerprints(run.lane);
  for (const [role, hash] of Object.entries(run.fingerprints.models))
    if (mine[role] !== hash)
      return `its ${role} model has fingerprint ${short(hash)} but this worker's has ${short(mine[role])}; install the same climatecheck version (models/) as the submitting machine`;
  return undefined;
}

const NAME = /^[A-Za-z0-9._-]{1,80}$/;

export function checkRunName(name: string): string {
  if (!NAME.test(name))
    throw new DataError("--run", `run names are 1-80 letters, digits, ".", "_" or "-" (got "${name}")`);
  return name;
}

/** The BullMQ job id of chunk i (custom ids may not be integers). */
export function chunkId(i: number): string {
  return `chunk-${String(i).padStart(6, "0")}`;
}

export async function readRun(redis: Redis, name: string): Promise<RunRecord> {
  const json = await redis.hget(RUNS_KEY, name);
  if (!json)
    throw new DataError("--run", `no run "${name}" on this Redis (queue submit prints the run name)`);
  return JSON.parse(json) as RunRecord;
}

/** Every run, oldest first. */
export async function listRuns(redis: Redis): Promise<RunRecord[]> {
  const all = Object.values(await redis.hgetall(RUNS_KEY)).map((j) => JSON.parse(j) as RunRecord);
  return all.sort((a, b) => a.submittedAt.localeCompare(b.submittedAt) || a.name.localeCompare(b.name));
}
