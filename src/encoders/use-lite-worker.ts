/** Worker thread entry: holds one USE-lite model and embeds the batches its pool sends, one at a time. */
import { parentPort } from "node:worker_threads";
import { loadUseLiteModel } from "./use-lite-model.ts";
import type { WorkerReply, WorkerRequest } from "./worker-pool.ts";

const port = parentPort;
if (!port) throw new Error("use-lite-worker must run in a worker thread");
const model = await loadUseLiteModel();
port.on("message", async (req: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    const vectors = await model.embedBatch(req.texts);
    reply = { id: req.id, vectors };
    port.postMessage(reply, [vectors.buffer as ArrayBuffer]);
  } catch (e) {
    reply = { id: req.id, error: e instanceof Error ? (e.stack ?? e.message) : String(e) };
    port.postMessage(reply);
  }
});
port.postMessage({ id: -1 } satisfies WorkerReply);
