/**
 * Resumable batch runs: items go in chunks to one or more lanes (an in-process processor or worker threads, each
 * with its own models); every finished chunk is appended to the checkpoint, so an interrupted run continues where
 * it stopped. The final output is written once, from the results in input order, and then the checkpoint goes.
 * Results must depend on the item alone (not on the chunking), so a resumed run writes the same bytes.
 */
import { type CheckpointRecord, openCheckpoint, type RunIdentity } from "./batch-checkpoint.ts";

/** Turns a chunk of items into one result per item, in order. */
export interface Lane<I, R> {
  process(items: I[]): Promise<R[]>;
  /**
   * Chunks this lane may process at once (default 1). More than one pays when a lane waits on other threads
   * (an encoder pool) for part of each chunk: this thread works on another chunk meanwhile.
   */
  concurrency?: number;
  close(): Promise<void>;
}

export interface BatchOptions<I extends { id: string }, R> {
  items: readonly I[];
  /** Checkpoint file, e.g. `<out>.partial.jsonl`. */
  checkpoint: string;
  identity: RunIdentity;
  /** Opened only when work remains, so a finished checkpoint never loads a model. */
  openLanes: () => Promise<Lane<I, R>[]>;
  /** Items per chunk: the unit of work, of checkpointing and of what an interruption loses. */
  chunkSize?: number;
  /** Writes the final output from the results in input order (atomically). */
  write: (results: R[]) => Promise<void>;
  /** Stops taking new chunks; chunks in flight finish and are saved. */
  signal?: AbortSignal;
  /** Items done (resumed ones included) after each chunk; `resumed` is the count found in the checkpoint. */
  onProgress?: (done: number, total: number, resumed: number) => void;
}

export interface BatchSummary {
  total: number;
  /** Items taken from the checkpoint of an earlier run. */
  resumed: number;
  /** Items processed by this run. */
  processed: number;
  seconds: number;
}

/** Thrown when the signal stopped a run; the checkpoint holds `done` of `total` items. */
export class BatchInterrupted extends Error {
  readonly done: number;
  readonly total: number;
  readonly checkpoint: string;
  constructor(done: number, total: number, checkpoint: string) {
    super(
      `interrupted after ${done} of ${total} items; run the same command again to continue (kept in ${checkpoint})`,
    );
    this.name = "BatchInterrupted";
    this.done = done;
    this.total = total;
    this.checkpoint = checkpoint;
  }
}

export const DEFAULT_CHUNK = 16;

export async function runBatch<I extends { id: string }, R>(o: BatchOptions<I, R>): Promise<BatchSummary> {
  const started = Date.now();
  const ids = new Set<string>();
  for (const item of o.items) {
    if (ids.has(item.id)) throw new Error(`duplicate item id "${item.id}" in a batch`);
    ids.add(item.id);
  }
  const cp = await openCheckpoint<R>(o.checkpoint, o.identity);
  try {
    const results = new Map<string, R>();
    for (const item of o.items) if (cp.done.has(item.id)) results.set(item.id, cp.done.get(item.id) as R);
    const resumed = results.size;
    const todo = o.items.filter((item) => !results.has(item.id));
    const size = Math.max(1, Math.floor(o.chunkSize ?? DEFAULT_CHUNK));
    const chunks: I[][] = [];
    for (let s = 0; s < todo.length; s += size) chunks.push(todo.slice(s, s + size));
    o.onProgress?.(resumed, o.items.length, resumed);

    if (chunks.length > 0 && !o.signal?.aborted) {
      const lanes = await o.openLanes();
      if (lanes.length === 0) throw new Error("a batch needs at least one lane");
      let next = 0;
      let failed = false;
      const work = async (lane: Lane<I, R>) => {
        while (!failed && !o.signal?.aborted && next < chunks.length) {
          const chunk = chunks[next++];
          const out = await lane.process(chunk);
          if (out.length !== chunk.length)
            throw new Error(`a lane returned ${out.length} results for ${chunk.length} items`);
          const records: CheckpointRecord<R>[] = chunk.map((item, i) => ({ id: item.id, result: out[i] }));
          await cp.append(records);
          for (const r of records) results.set(r.id, r.result);
          o.onProgress?.(results.size, o.items.length, resumed);
        }
      };
      try {
        const loops = lanes.flatMap((lane) =>
          Array.from({ length: Math.max(1, Math.floor(lane.concurrency ?? 1)) }, () => lane),
        );
        const outcomes = await Promise.allSettled(
          loops.map((lane) =>
            work(lane).catch((e) => {
              failed = true;
              throw e;
            }),
          ),
        );
        const bad = outcomes.find((x): x is PromiseRejectedResult => x.status === "rejected");
        if (bad) throw bad.reason;
      } finally {
        await Promise.all(lanes.map((lane) => lane.close()));
      }
    }
    if (results.size < o.items.length) throw new BatchInterrupted(results.size, o.items.length, cp.path);
    await o.write(o.items.map((item) => results.get(item.id) as R));
    await cp.remove();
    return {
      total: o.items.length,
      resumed,
      processed: o.items.length - resumed,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await cp.close();
  }
}
