/**
 * `serve --workers N`: N processes share the port (node:cluster), each with its own pipeline. A check runs on one
 * thread, so one process can use one core; more workers use more cores, each costing its own copy of the index
 * and models in memory. The primary only forks, gathers the workers' "listening" reports, logs one line, replaces
 * a worker that dies after it started, and passes SIGINT/SIGTERM on.
 */
import cluster, { type Worker } from "node:cluster";

/** What a worker reports once its server listens (the primary logs it, with the worker count). */
export interface WorkerListening {
  type: "listening";
  info: Record<string, unknown>;
}

const log = (o: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(o)}\n`);

/** Runs in a worker: tells the primary that this worker's server listens. */
export function reportListening(info: Record<string, unknown>): void {
  process.send?.({ type: "listening", info } satisfies WorkerListening);
}

export const isClusterWorker = () => cluster.isWorker;

/** Forks `count` workers running this same command; resolves when all are gone after a signal. */
export function runPrimary(count: number): Promise<number> {
  return new Promise((resolve) => {
    const started = new Set<number>();
    let announced = false;
    let stopping = false;
    let exitCode = 0;
    // A worker whose process exited stays in cluster.workers until it has also disconnected, and the two events
    // come in either order: counting it would leave the last exit unresolved and the primary would end with 13
    // (unsettled top-level await) instead of 0.
    const alive = () =>
      Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      exitCode = code;
      if (alive().length === 0) resolve(exitCode);
      for (const w of alive()) w.kill("SIGTERM");
    };
    const fork = () => {
      const w = cluster.fork();
      w.on("message", (m: WorkerListening) => {
        if (m?.type !== "listening") return;
        started.add(w.id);
        if (!announced && alive().every((x) => started.has(x.id))) {
          announced = true;
          log({ ...m.info, level: "info", msg: "listening", workers: count, pid: process.pid });
        }
      });
    };
    cluster.on("exit", (w, code, signal) => {
      if (stopping) {
        if (alive().length === 0) resolve(exitCode);
      } else if (!started.has(w.id)) {
        // It never came up (bad config, index, port): another would fail the same way.
        log({ level: "error", msg: "worker failed to start; stopping", worker: w.id, code, signal });
        stop(code || 1);
      } else {
        log({ level: "error", msg: "worker died; starting another", worker: w.id, code, signal });
        fork();
      }
    });
    process.once("SIGINT", () => stop(0));
    process.once("SIGTERM", () => stop(0));
    for (let i = 0; i < count; i++) fork();
  });
}
