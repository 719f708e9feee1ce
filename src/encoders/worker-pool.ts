/**
 * A pool of worker threads, each holding its own USE-lite model (TF.js WebAssembly runs one thread per model in
 * Node, so this is how we use more than one core). Batches queue and go to whichever worker is free.
 */
import { extname } from "node:path";
import { Worker } from "node:worker_threads";

export interface WorkerRequest {
  id: number;
  texts: string[];
}
/** id -1 announces that the worker's model is loaded. */
export interface WorkerReply {
  id: number;
  vectors?: Float32Array;
  error?: string;
}

/** Anything that turns a batch of texts into row-major unit vectors: one model in-process, or a pool. */
export interface BatchEmbedder {
  embedBatch(texts: string[]): Promise<Float32Array>;
  close(): Promise<void>;
}

interface Job {
  id: number;
  texts: string[];
  resolve(v: Float32Array): void;
  reject(e: Error): void;
}

function spawnWorker(): Worker {
  return startModuleWorker(new URL("./use-lite-worker", import.meta.url));
}

/**
 * Starts a worker thread on a module given without extension (`new URL("./x", import.meta.url)`), with this
 * module's extension: .js from dist/, .ts under tsx. Node 20 does not apply `--import tsx` given in a worker's
 * execArgv to its entry module, so a .ts worker starts from a small script that registers tsx's loader first.
 */
export function startModuleWorker(base: URL, workerData?: unknown): Worker {
  const ext = extname(new URL(import.meta.url).pathname);
  const url = new URL(`${base.href}${ext}`);
  if (ext !== ".ts") return new Worker(url, { workerData });
  // Resolved here, not in the worker, whose eval'd code resolves bare names from the working directory.
  const tsx = import.meta.resolve("tsx/esm/api");
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(boot, { eval: true, workerData });
}

export async function startUseLitePool(size: number): Promise<BatchEmbedder> {
  const queue: Job[] = [];
  const idle: Worker[] = [];
  const running = new Map<Worker, Job>();
  let nextId = 0;
  let failure: Error | undefined;
  let closed = false;

  const pump = () => {
    while (idle.length > 0 && queue.length > 0) {
      const worker = idle.pop() as Worker;
      const job = queue.shift() as Job;
      running.set(worker, job);
      worker.postMessage({ id: job.id, texts: job.texts } satisfies WorkerRequest);
    }
  };

  const fail = (e: Error) => {
    failure ??= e;
    for (const job of [...running.values(), ...queue.splice(0)]) job.reject(failure);
    running.clear();
  };

  const workers: Worker[] = [];
  const ready = Array.from(
    { length: size },
    () =>
      new Promise<void>((resolve, reject) => {
        const worker = spawnWorker();
        workers.push(worker);
        worker.once("error", reject);
        worker.on("message", (reply: WorkerReply) => {
          if (reply.id === -1) {
            worker.off("error", reject);
            worker.on("error", (e) => fail(e));
            idle.push(worker);
            resolve();
            pump();
            return;
          }
          const job = running.get(worker);
          running.delete(worker);
          idle.push(worker);
          if (job && reply.error !== undefined) job.reject(new Error(`use-lite worker: ${reply.error}`));
          else if (job && reply.vectors) job.resolve(reply.vectors);
          pump();
        });
        worker.on("exit", (code) => {
          if (!closed) fail(new Error(`use-lite worker exited (code ${code})`));
          reject(new Error(`use-lite worker exited before loading its model (code ${code})`));
        });
      }),
  );
  try {
    await Promise.all(ready);
  } catch (e) {
    closed = true;
    await Promise.all(workers.map((w) => w.terminate()));
    throw e;
  }

  return {
    embedBatch(texts) {
      if (failure) return Promise.reject(failure);
      if (closed) return Promise.reject(new Error("use-lite pool is closed"));
      return new Promise((resolve, reject) => {
        queue.push({ id: nextId++, texts, resolve, reject });
        pump();
      });
    },
    async close() {
      closed = true;
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
