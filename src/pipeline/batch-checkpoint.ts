/**
 * The checkpoint of a resumable batch run: JSON Lines beside the output. The first line names the run (its
 * parameters and the fingerprint of its input); each further line is one finished item. A run whose header
 * differs starts afresh; a torn last line (a kill mid-write) is cut off, so the file stays valid.
 */
import { createHash } from "node:crypto";
import { mkdir, open, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

export const CHECKPOINT_FORMAT = "climatecheck-batch/1";

export interface RunIdentity {
  /** Everything that changes the results (task, k, index, models); plain JSON. */
  params: Record<string, unknown>;
  /** Fingerprint of the input items (see fingerprint()). */
  input: string;
}

export interface CheckpointRecord<R> {
  id: string;
  result: R;
}

export interface Checkpoint<R> {
  readonly path: string;
  /** Items finished by earlier runs with the same identity, by id. */
  readonly done: ReadonlyMap<string, R>;
  /** True when earlier results were kept. */
  readonly resumed: boolean;
  /** Appends finished items in one write and flushes it to disk. */
  append(records: CheckpointRecord<R>[]): Promise<void>;
  close(): Promise<void>;
  /** Closes and deletes the file (after the final output is in place). */
  remove(): Promise<void>;
}

/** sha256 over the items as JSON, one per line: the same input gives the same fingerprint. */
export function fingerprint(items: readonly unknown[]): string {
  const h = createHash("sha256");
  for (const item of items) h.update(`${JSON.stringify(item)}\n`);
  return h.digest("hex");
}

function headerLine(identity: RunIdentity): string {
  return JSON.stringify({ checkpoint: CHECKPOINT_FORMAT, params: identity.params, input: identity.input });
}

/** Reads the kept records of a checkpoint; undefined when it is absent or from another run. */
async function readKept<R>(
  path: string,
  header: string,
): Promise<{ done: Map<string, R>; goodBytes: number } | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return undefined;
  }
  const firstEnd = text.indexOf("\n");
  if (firstEnd < 0 || text.slice(0, firstEnd) !== header) return undefined;
  const done = new Map<string, R>();
  let at = firstEnd + 1;
  // Only newline-terminated lines count; the first line that does not parse ends the good prefix.
  for (let end = text.indexOf("\n", at); end >= 0; end = text.indexOf("\n", at)) {
    let rec: CheckpointRecord<R>;
    try {
      rec = JSON.parse(text.slice(at, end)) as CheckpointRecord<R>;
    } catch {
      break;
    }
    if (typeof rec?.id !== "string" || !("result" in rec)) break;
    done.set(rec.id, rec.result);
    at = end + 1;
  }
  return { done, goodBytes: Buffer.byteLength(text.slice(0, at)) };
}

export async function openCheckpoint<R>(path: string, identity: RunIdentity): Promise<Checkpoint<R>> {
  const header = headerLine(identity);
  await mkdir(dirname(path) || ".", { recursive: true });
  const kept = await readKept<R>(path, header);
  if (kept) await truncate(path, kept.goodBytes);
  else await writeFile(path, `${header}\n`);
  const fh = await open(path, "a");
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await fh.close();
  };
  return {
    path,
    done: kept?.done ?? new Map(),
    resumed: (kept?.done.size ?? 0) > 0,
    async append(records) {
      if (records.length === 0) return;
      await fh.write(records.map((r) => `${JSON.stringify({ id: r.id, result: r.result })}\n`).join(""));
      await fh.datasync();
    },
    close,
    async remove() {
      await close();
      await rm(path, { force: true });
    },
  };
}
