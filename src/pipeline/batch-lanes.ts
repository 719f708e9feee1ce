/**
 * The lanes of a predict run: one in-process lane, or worker threads that each open their own models (a lane
 * kind is a function of plain options, so a worker can open the same lane from a message).
 */
import { DataError } from "../data/errors.ts";
import { startModuleWorker } from "../encoders/worker-pool.ts";
import type { Claim } from "../types.ts";
import type { Lane } from "./batch.ts";
import { openTask1Lane, type Task1LaneOptions } from "./batch-task1.ts";
import { openTask2Lane, type Task2LaneOptions } from "./batch-task2.ts";

export interface LaneKinds {
  task1: Task1LaneOptions;
  task2: Task2LaneOptions;
}
export type LaneKind = keyof LaneKinds;

type Opener = (options: never, where: { inWorker: boolean }) => Promise<Lane<Claim, unknown>>;
export const LANE_OPENERS: Record<LaneKind, Opener> = { task1: openTask1Lane, task2: openTask2Lane };

/** Messages between a lane's worker and the main thread. */
export type ToWorker = { id: number; items: Claim[] } | { close: true };
export interface WorkerError {
  message: string;
  /** Set for a DataError, so the main thread can throw one (the CLI prints it and exits 2). */
  data?: { file: string; line?: number; field?: string };
}
export type FromWorker =
  | { ready: true }
  | { id: number; results?: unknown[]; error?: WorkerError }
  | { closed: true };

export function toWorkerError(e: unknown): WorkerError {
  if (e instanceof DataError)
    return { message: e.message, data: { file: e.file, line: e.line, field: e.field } };
  return { message: e instanceof Error ? e.message : String(e) };
}

export interface WorkerInit {
  kind: LaneKind;
  options: unknown;
}

function workerLane<R>(init: WorkerInit): Promise<Lane<Claim, R>> {
  const worker = startModuleWorker(new URL("./batch-worker", import.meta.url), init);
  const waiting = new Map<number, { resolve(r: R[]): void; reject(e: Error): void }>();
  let nextId = 0;
  let failure: Error | undefined;
  const fail = (e: Error) => {
    failure ??= e;
    for (const w of waiting.values()) w.reject(failure);
    waiting.clear();
  };
  return new Promise((resolve, reject) => {
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`predict worker exited while starting (code ${code})`)));
    worker.on("message", (m: FromWorker) => {
      if ("ready" in m) {
        worker.removeAllListeners("error").removeAllListeners("exit");
        worker.on("error", fail);
        worker.on("exit", (code) => fail(new Error(`predict worker exited (code ${code})`)));
        resolve(lane);
      } else if ("id" in m) {
        const w = waiting.get(m.id);
        waiting.delete(m.id);
        if (m.id === -1) reject(rebuild(m.error));
        else if (m.error !== undefined) w?.reject(rebuild(m.error));
        else w?.resolve(m.results as R[]);
      }
    });
    const lane: Lane<Claim, R> = {
      process(items) {
        if (failure) return Promise.reject(failure);
        const id = nextId++;
        return new Promise((res, rej) => {
          waiting.set(id, { resolve: res, reject: rej });
          worker.postMessage({ id, items } satisfies ToWorker);
        });
      },
      async close() {
        worker.removeAllListeners("exit");
        const closed = new Promise<void>((r) => {
          worker.on("message", (m: FromWorker) => "closed" in m && r());
          worker.once("exit", () => r());
        });
        worker.postMessage({ close: true } satisfies ToWorker);
        await closed;
        await worker.terminate();
      },
    };
  });
}

/** Errors cross the thread as plain data; a DataError comes back as one. */
function rebuild(e: WorkerError = { message: "predict worker failed" }): Error {
  if (!e.data) return new Error(e.message);
  const err = new DataError(e.data.file, "", { line: e.data.line, field: e.data.field });
  err.message = e.message;
  return err;
}

/** `workers` = 0: one lane in this thread; otherwise that many worker threads, each a lane. */
export async function openLanes<K extends LaneKind, R>(
  kind: K,
  options: LaneKinds[K],
  workers: number,
): Promise<Lane<Claim, R>[]> {
  if (workers <= 0)
    return [(await LANE_OPENERS[kind](options as never, { inWorker: false })) as Lane<Claim, R>];
  const started = await Promise.allSettled(
    Array.from({ length: workers }, () => workerLane<R>({ kind, options })),
  );
  const lanes = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const bad = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (bad) {
    await Promise.all(lanes.map((l) => l.close()));
    throw bad.reason;
  }
  return lanes;
}
