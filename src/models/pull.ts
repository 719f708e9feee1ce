/**
 * `models pull`: a model repository in the transformers.js / Optimum ONNX layout from the model hub into the local
 * cache (src/models/cache.ts), through the shared download module: the branch or tag resolved to its commit, the
 * files listed with sizes and checksums, only what the onnx backends read fetched (the top-level JSON files and the
 * ONNX file of each dtype asked for, with its external data), resumable and verified.
 */
import { join } from "node:path";
import {
  fetchHubFiles,
  type HubAccess,
  type HubFile,
  listHubFiles,
  MANIFEST,
  type PullManifest,
  type PullProgress,
  readPullManifest,
  resolveCommit,
  writeManifest,
} from "../data/download.ts";
import { DataError } from "../data/errors.ts";
import type { OnnxDtype } from "../encoders/onnx-folder.ts";
import { modelFolder, onnxFileName, REQUIRED_FILES, writeRef } from "./cache.ts";

export interface ModelPullOptions {
  hub: HubAccess;
  /** Branch, tag or 40-hex commit. */
  revision: string;
  /** ONNX files to fetch, by transformers.js dtype. */
  dtypes: readonly OnnxDtype[];
  retries?: number;
  onProgress?: (p: PullProgress) => void;
  onFile?: (local: string, status: "downloaded" | "present") => void;
}

export interface ModelPullResult {
  repo: string;
  revision: string;
  commit: string;
  dir: string;
  downloaded: string[];
  present: string[];
  bytes: number;
}

/**
 * What to fetch of a listing: top-level JSON (config, tokenizer), and per dtype the ONNX file in onnx/ (else at
 * the top) with its external data chunks (`model.onnx_data`, `model.onnx_data_1`, ...). A listing without the
 * layout the backend reads is bad input, named with what the repository does hold.
 */
export function selectModelFiles(
  files: readonly HubFile[],
  repo: string,
  dtypes: readonly OnnxDtype[],
): HubFile[] {
  const paths = new Set(files.map((f) => f.path));
  for (const need of REQUIRED_FILES)
    if (!paths.has(need))
      throw new DataError(
        repo,
        `no ${need} at the top of the repository: not a transformers.js / Optimum ONNX export`,
      );
  const keep = new Set(files.filter((f) => /^[^/]+\.json$/.test(f.path)).map((f) => f.path));
  for (const dtype of dtypes) {
    const name = onnxFileName(dtype);
    const onnx = [`onnx/${name}`, name].find((p) => paths.has(p));
    if (!onnx) {
      const have = [...paths].filter((p) => p.endsWith(".onnx"));
      throw new DataError(
        repo,
        `no onnx/${name} or ${name} for dtype ${dtype}; ONNX files there: ${have.join(", ") || "none"}`,
      );
    }
    keep.add(onnx);
    for (const p of paths) if (p.startsWith(`${onnx}_data`)) keep.add(p);
  }
  return files.filter((f) => keep.has(f.path));
}

export async function pullModel(repo: string, o: ModelPullOptions): Promise<ModelPullResult> {
  // Files are fetched at the commit, so a branch that moves mid-pull cannot mix two versions.
  const commit = await resolveCommit(o.hub, "models", repo, o.revision);
  const listing = await listHubFiles(o.hub, "models", repo, commit, () => true);
  const files = selectModelFiles(listing, repo, o.dtypes);
  const dir = modelFolder(repo, commit);
  const old = await readPullManifest(join(dir, MANIFEST));
  const manifest: PullManifest = {
    source: o.hub.baseUrl,
    revision: o.revision,
    commit,
    repo,
    files: old?.source === o.hub.baseUrl ? { ...old.files } : {},
  };
  const r = await fetchHubFiles(files, { ...o, dir, kind: "models", revision: commit, manifest });
  await writeManifest(dir, manifest);
  await writeRef(repo, o.revision, commit);
  const bytes = files.reduce((s, f) => s + (manifest.files[f.local]?.size ?? 0), 0);
  return { repo, revision: o.revision, commit, dir, ...r, bytes };
}
