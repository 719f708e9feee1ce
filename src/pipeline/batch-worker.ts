/** A worker thread of a predict run: opens its own lane (models) and processes the chunks it is sent. */
import { parentPort, workerData } from "node:worker_threads";
import type { Lane } from "./batch.ts";
import {
  type FromWorker,
  LANE_OPENERS,
  type ToWorker,
  toWorkerError,
  type WorkerInit,
} from "./batch-lanes.ts";

const port = parentPort;
if (!port) throw new Error("batch-worker runs in a worker thread");
const init = workerData as WorkerInit;
const send = (m: FromWorker) => port.postMessage(m);

let lane: Lane<unknown, unknown> | undefined;
try {
  lane = (await LANE_OPENERS[init.kind](init.options as never, { inWorker: true })) as Lane<unknown, unknown>;
  send({ ready: true });
} catch (e) {
  send({ id: -1, error: toWorkerError(e) });
}

port.on("message", async (m: ToWorker) => {
  if ("close" in m) {
    await lane?.close();
    send({ closed: true });
    port.close();
    return;
  }
  try {
    if (!lane) throw new Error("the lane did not open");
    send({ id: m.id, results: await lane.process(m.items) });
  } catch (e) {
    send({ id: m.id, error: toWorkerError(e) });
  }
});
