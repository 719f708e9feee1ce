/**
 * The local model cache, `$CLIMATECHECK_HOME/models/`: one folder per repository and commit
 * (`OWNER/NAME/COMMIT/`, the repository's own file paths inside, so the transformers.js `onnx/` layout is kept) with
 * the pull's manifest.json, and `OWNER/NAME/refs/REVISION` holding the commit a branch or tag was pulled at.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { isCommit, MANIFEST, type PullManifest } from "../data/download.ts";
import { homeDir } from "../data/paths.ts";
import { writeFileAtomic } from "../data/tables.ts";
import type { OnnxDtype } from "../encoders/onnx-folder.ts";

export const modelsDir = (): string => join(homeDir(), "models");

/** OWNER/NAME: letters, digits, `-`, `_`, `.`; no `..` (a repository name is also a path here). */
export const REPO_ID = /^(?!.*\.\.)[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/;

export const modelFolder = (repo: string, commit: string): string => join(modelsDir(), repo, commit);
const refFile = (repo: string, revision: string) =>
  join(modelsDir(), repo, "refs", encodeURIComponent(revision));

/** The files every ONNX folder needs beside the model itself (src/encoders/onnx-folder.ts). */
export const REQUIRED_FILES = ["config.json", "tokenizer.json", "tokenizer_config.json"] as const;

/** transformers.js names an ONNX file by its dtype: model.onnx, model_quantized.onnx (q8), model_fp16.onnx, ... */
export const DTYPE_SUFFIX: Record<OnnxDtype, string> = {
  fp32: "",
  fp16: "_fp16",
  q8: "_quantized",
  int8: "_int8",
  uint8: "_uint8",
  q4: "_q4",
};
export const onnxFileName = (dtype: OnnxDtype): string => `model${DTYPE_SUFFIX[dtype]}.onnx`;

/** The commit a branch or tag was pulled at, when it was. */
export function readRef(repo: string, revision: string): string | undefined {
  if (isCommit(revision)) return revision;
  try {
    const commit = readFileSync(refFile(repo, revision), "utf8").trim();
    return isCommit(commit) ? commit : undefined;
  } catch {
    return undefined;
  }
}

export async function writeRef(repo: string, revision: string, commit: string): Promise<void> {
  if (isCommit(revision)) return;
  await mkdir(join(modelsDir(), repo, "refs"), { recursive: true });
  await writeFileAtomic(refFile(repo, revision), `${commit}\n`);
}

function readManifestSync(dir: string): PullManifest | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, MANIFEST), "utf8")) as PullManifest;
  } catch {
    return undefined;
  }
}

/** The ONNX model file of `dtype` a pulled folder holds (onnx/ first, as the backend reads it), if any. */
export function onnxFileIn(manifest: PullManifest, dtype: OnnxDtype): string | undefined {
  const name = onnxFileName(dtype);
  return [`onnx/${name}`, name].find((p) => manifest.files[p] !== undefined);
}

/**
 * The folder of `repo` at `revision` when it was pulled whole, with the ONNX file of `dtype`: the manifest
 * records every needed file and each is on disk. Undefined otherwise (not pulled, interrupted, other dtype).
 */
export function pulledFolder(repo: string, revision: string, dtype: OnnxDtype): string | undefined {
  const commit = readRef(repo, revision);
  if (!commit) return undefined;
  const dir = modelFolder(repo, commit);
  const m = readManifestSync(dir);
  const onnx = m && onnxFileIn(m, dtype);
  if (!m || !onnx) return undefined;
  for (const f of [...REQUIRED_FILES, onnx]) if (!m.files[f] || !existsSync(join(dir, f))) return undefined;
  return dir;
}

/** How a model is named in backend names, /healthz and index manifests: REPO@COMMIT7 when pulled, else the folder. */
export function modelLabel(dir: string): string {
  const m = readManifestSync(dir);
  return m?.repo && m.commit ? `${m.repo}@${m.commit.slice(0, 7)}` : basename(dir);
}

export interface PulledModel {
  repo: string;
  commit: string;
  dir: string;
  /** Branches and tags pulled at this commit. */
  refs: string[];
  /** The ONNX files it holds (repo paths). */
  onnx: string[];
  bytes: number;
}

const subdirs = (dir: string) => {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
};

/** Every model folder with a manifest under the cache. */
export function listPulled(): PulledModel[] {
  const out: PulledModel[] = [];
  for (const owner of subdirs(modelsDir()))
    for (const name of subdirs(join(modelsDir(), owner))) {
      const repo = `${owner}/${name}`;
      const refsDir = join(modelsDir(), repo, "refs");
      const refs = existsSync(refsDir) ? readdirSync(refsDir).map(decodeURIComponent) : [];
      for (const commit of subdirs(join(modelsDir(), repo)).filter(isCommit)) {
        const dir = modelFolder(repo, commit);
        const m = readManifestSync(dir);
        if (!m) continue;
        const files = Object.values(m.files);
        out.push({
          repo,
          commit,
          dir,
          refs: refs.filter((r) => readRef(repo, r) === commit),
          onnx: files.map((f) => f.path).filter((p) => p.endsWith(".onnx")),
          bytes: files.reduce((s, f) => s + f.size, 0),
        });
      }
    }
  return out;
}
