/**
 * Profiles that name models by hub repository: `{ "repo": "OWNER/NAME", "revision": "COMMIT", "dtype": "q8" }` in
 * place of `"modelDir"`, anywhere a stage takes a model folder. Before a section is validated, each such reference is
 * replaced by its folder in the local cache (src/models/cache.ts); a model not pulled stops with the `models pull`
 * command that fetches it. Shipped profiles live in profiles/ and are named without `.json`.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { DataError } from "../data/errors.ts";
import { PACKAGE_ROOT } from "../data/paths.ts";
import { ONNX_DTYPES, type OnnxDtype } from "../encoders/onnx-folder.ts";
import { pulledFolder, REPO_ID } from "./cache.ts";

export const PROFILES_DIR = join(PACKAGE_ROOT, "profiles");

export function shippedProfiles(): string[] {
  return readdirSync(PROFILES_DIR)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -5))
    .sort();
}

/** `--profile`: a shipped profile's name, or a file. */
export function profileFile(nameOrFile: string): string {
  if (/^[\w.-]+$/.test(nameOrFile) && shippedProfiles().includes(nameOrFile))
    return join(PROFILES_DIR, `${nameOrFile}.json`);
  if (existsSync(nameOrFile)) return resolve(nameOrFile);
  throw new DataError(
    "--profile",
    `"${nameOrFile}" is neither a shipped profile (${shippedProfiles().join(", ")}) nor a file`,
  );
}

/** The shipped name of a profile file, when it is one. */
export function shippedName(file: string): string | undefined {
  return resolve(dirname(file)) === PROFILES_DIR ? basename(file, ".json") : undefined;
}

export const MODEL_DEFAULT_REVISION = "main";

export interface ModelRef {
  /** Where in the file, e.g. "retrieval.rerank.models.0". */
  where: string;
  repo: string;
  revision: string;
  dtype: OnnxDtype;
}

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks one `{repo, revision, dtype}` object; `file` and `where` name it in errors. */
function refOf(o: Record<string, Json>, file: string, where: string): ModelRef {
  const at = (key: string) => (where ? `${where}.${key}` : key);
  if (typeof o.repo !== "string" || !REPO_ID.test(o.repo))
    throw new DataError(file, "expected a hub repository OWNER/NAME", { field: at("repo") });
  if (o.modelDir !== undefined)
    throw new DataError(file, "give modelDir (a local folder) or repo (a hub model), not both", {
      field: at("modelDir"),
    });
  if (o.revision !== undefined && (typeof o.revision !== "string" || o.revision.trim() === ""))
    throw new DataError(file, "expected a commit (40 hex digits), branch or tag", { field: at("revision") });
  const dtype = o.dtype ?? "fp32";
  if (!(ONNX_DTYPES as readonly Json[]).includes(dtype))
    throw new DataError(file, `expected one of ${ONNX_DTYPES.join(", ")}`, { field: at("dtype") });
  return {
    where,
    repo: o.repo,
    revision: (o.revision as string | undefined) ?? MODEL_DEFAULT_REVISION,
    dtype: dtype as OnnxDtype,
  };
}

/** Every model reference in a profile (or section), in file order. */
export function modelRefs(value: Json, file: string, where = ""): ModelRef[] {
  const at = (k: string | number) => (where ? `${where}.${k}` : String(k));
  if (Array.isArray(value)) return value.flatMap((v, i) => modelRefs(v, file, at(i)));
  if (!isObject(value)) return [];
  if (value.repo !== undefined) return [refOf(value, file, where)];
  return Object.entries(value).flatMap(([k, v]) => modelRefs(v, file, at(k)));
}

/** The command that pulls a profile's models: its shipped name, else its path. */
export const pullCommand = (file: string): string =>
  `climatecheck models pull ${shippedName(file) ?? JSON.stringify(resolve(file))}`;

/**
 * `value` (one section of `file`, found under `where`) with each model reference replaced by `modelDir`, its
 * pulled folder; the references' own keys (repo, revision) are dropped, the rest (dtype, maxLength...) stay.
 */
export function resolveModelRefs(value: Json, file: string, where = ""): Json {
  const missing: ModelRef[] = [];
  const walk = (v: Json, at: string): Json => {
    const key = (k: string | number) => (at ? `${at}.${k}` : String(k));
    if (Array.isArray(v)) return v.map((x, i) => walk(x, key(i)));
    if (!isObject(v)) return v;
    if (v.repo === undefined)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, key(k))]));
    const ref = refOf(v, file, at);
    const dir = pulledFolder(ref.repo, ref.revision, ref.dtype);
    if (!dir) missing.push(ref);
    const { repo: _r, revision: _v, ...rest } = v;
    return { ...rest, modelDir: dir ?? "" };
  };
  const out = walk(value, where);
  if (missing.length > 0) {
    const list = missing.map((m) => `${m.repo}@${m.revision} (${m.dtype}, ${m.where})`).join(", ");
    throw new DataError(
      file,
      `model${missing.length > 1 ? "s" : ""} not pulled: ${list}; run \`${pullCommand(file)}\``,
    );
  }
  return out;
}

/** What /healthz and the serve start-up line say about a profile: its name and the models it names. */
export interface ProfileInfo {
  name: string;
  models: { stage: string; repo: string; revision: string; dtype: string }[];
}

export function profileInfo(file: string): ProfileInfo {
  let value: Json;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new DataError(file, `not a readable JSON file (${(e as Error).message})`);
  }
  const named = isObject(value) && typeof value.profile === "string" ? value.profile : undefined;
  return {
    name: shippedName(file) ?? named ?? basename(file, ".json"),
    models: modelRefs(value, file).map((m) => ({
      stage: m.where,
      repo: m.repo,
      revision: m.revision,
      dtype: m.dtype,
    })),
  };
}
