/** The verifier flags shared by every command that verifies pairs (verify, check, predict, serve, evaluate --ev2r). */
import type { Command } from "commander";
import { BACKENDS } from "../verification/config.ts";
import { addProfileOption } from "./profile-option.ts";

export interface VerifierFlags {
  backend?: string;
  config?: string;
  modelDir?: string;
}

/** Adds `--backend`, `--config`, `--profile` and `--model-dir`; `scope` prefixes the help text (e.g. "task 1: "). */
export function addVerifierOptions(command: Command, scope = ""): Command {
  return addProfileOption(command)
    .option(
      "--backend <name>",
      `${scope}verifier backend (${BACKENDS.join(", ")}); default: the config's, else builtin`,
    )
    .option(
      "--config <file>",
      "profile JSON: each stage's backend and settings (retrieval, verification, narratives; see docs/byo-models.md), or a verifier config",
    )
    .option("--model-dir <dir>", `${scope}folder of a local ONNX NLI model (selects the onnx backend)`);
}
