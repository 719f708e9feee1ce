/** `climatecheck verify`: Supports / Refutes / NEI with probabilities and rationale sentences for claim-abstract pairs. */
import type { Command } from "commander";
import { openVerifier, resolveVerifierConfig } from "../../verification/config.ts";
import { readPairs, writeVerdicts } from "../../verification/pairs-file.ts";
import { addVerifierOptions, type VerifierFlags } from "../verifier-options.ts";

export function register(program: Command): void {
  addVerifierOptions(program.command("verify"))
    .description(
      "Verify claim-abstract pairs (task 1.2): label, probabilities and rationale sentence indices",
    )
    .requiredOption("--pairs <file>", "pairs file (claim_id, claim, abstract_id, abstract[, title])")
    .requiredOption("--out <file>", "verdicts to write (.csv or .jsonl)")
    .option("--model <file>", "built-in verifier model JSON (default: the shipped one)")
    .action(async (opts: VerifierFlags & { pairs: string; out: string; model?: string }, cmd: Command) => {
      const pairs = await readPairs(opts.pairs);
      let config = await resolveVerifierConfig(opts);
      if (opts.model) {
        if (config.backend !== "builtin") cmd.error("--model applies to the builtin backend only");
        config = { ...config, model: opts.model };
      }
      const verifier = await openVerifier(config);
      try {
        const started = Date.now();
        const verdicts = await verifier.verifyPairs(pairs);
        await writeVerdicts(opts.out, pairs, verdicts);
        const seconds = (Date.now() - started) / 1000;
        process.stderr.write(
          `wrote ${verdicts.length} verdicts (${verifier.name}, ${(verdicts.length / Math.max(seconds, 1e-3)).toFixed(1)} pairs/s) to ${opts.out}\n`,
        );
      } finally {
        await verifier.close();
      }
    });
}
