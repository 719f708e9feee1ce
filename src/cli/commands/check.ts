/** `climatecheck check "CLAIM"`: narratives, the top abstracts with verdicts and rationales, summary and caution. */
import type { Command } from "commander";
import { DataError } from "../../data/errors.ts";
import { replacedCharacterAt } from "../../data/utf8.ts";
import { readNarrativesConfig } from "../../narratives/config.ts";
import { DEFAULT_K, MAX_K, openPipeline } from "../../pipeline/pipeline.ts";
import type { CheckResult } from "../../pipeline/result.ts";
import { readRetrievalConfig } from "../../retrieval/byo.ts";
import { resolveVerifierConfig } from "../../verification/config.ts";
import { indexWithProgress } from "../index-progress.ts";
import { addVerifierOptions, type VerifierFlags } from "../verifier-options.ts";

const pct = (x: number) => `${Math.round(x * 100)}%`;

/** The readable report of one check (what the command prints without --json). */
export function formatCheck(r: CheckResult): string {
  const out: string[] = [`Claim: ${r.claim}`];
  if (!r.scope.in_scope) out.push(`Out of scope: ${r.scope.reason}`);
  if (r.p_narrative === null) out.push("", "Narratives: not assessed (the claim is out of scope)");
  else out.push("", `Narratives (P(any narrative) ${pct(r.p_narrative)}; named from 50%):`);
  for (const n of r.narratives) out.push(`  ${n.code}  ${n.name} (${pct(n.probability)})`);
  out.push("", `Evidence (${r.evidence.length} abstracts):`);
  for (const e of r.evidence) {
    const where = [e.year ? String(e.year) : "", e.url ?? ""].filter(Boolean).join(" · ");
    const verdict = e.about_claim ? `${e.label} ${pct(e.confidence)}` : "not about this claim";
    out.push(`${String(e.rank).padStart(3)}. [${verdict}] ${e.title ?? "(untitled)"}`);
    const about = e.relevance === null ? "" : ` · about the claim ${pct(e.relevance)}`;
    const probs = `S ${pct(e.p_supports)} R ${pct(e.p_refutes)} NEI ${pct(e.p_nei)}`;
    out.push(`     id ${e.abstract_id}${where ? ` · ${where}` : ""} · ${probs}${about}`);
    for (const s of e.rationale) out.push(`     > ${s}`);
  }
  const s = r.summary;
  // Only a side has a number: "insufficient (0%)" would read as "0% true".
  const lean =
    s.lean === "supports" || s.lean === "refutes"
      ? `${s.lean}, mean confidence ${pct(s.lean_confidence)}`
      : s.lean;
  out.push("", `Summary: ${s.text} (lean: ${lean})`);
  // Out of scope, the scope's reason is already the first line: the caution says only what else there is.
  const reason =
    !r.scope.in_scope && r.scope.reason
      ? (r.caution.reason ?? "").replace(r.scope.reason, "").trim()
      : (r.caution.reason ?? "");
  out.push(
    r.caution.needs_human_review
      ? `Caution: needs human review.${reason ? ` ${reason}` : " The claim is out of scope."}`
      : "Caution: none",
  );
  const t = r.timings_ms;
  out.push(
    "",
    `Time: narratives ${t.narratives} ms · retrieval ${t.retrieval} ms · verification ${t.verification} ms · total ${t.total} ms`,
  );
  return `${out.join("\n")}\n`;
}

interface CheckOptions extends VerifierFlags {
  k: string;
  json?: boolean;
  index?: string;
  fast?: boolean;
}

export function register(program: Command): void {
  addVerifierOptions(program.command("check"))
    .description("Check one claim: narratives, top abstracts with verdicts and rationale sentences, summary")
    .argument("<claim>", "the claim to check")
    .option("--k <n>", "abstracts to retrieve and verify", String(DEFAULT_K))
    .option("--json", "print the result as one JSON object (see docs/api.md, CheckResult)")
    .option("--index <dir>", "index directory (default: the default index, built on first use)")
    .option("--fast", "no re-ranker (narratives always use the fast model here)")
    .action(async (claim: string, opts: CheckOptions, cmd: Command) => {
      const k = Number(opts.k);
      if (!Number.isInteger(k) || k < 1 || k > MAX_K)
        cmd.error(`--k must be a whole number from 1 to ${MAX_K}`);
      if (claim.trim() === "") throw new DataError("claim", "claim is empty");
      const bad = replacedCharacterAt(claim);
      if (bad !== undefined)
        throw new DataError(
          "check <claim>",
          `not valid UTF-8 at character ${bad} (bytes in another encoding, shown as U+FFFD); pass the claim as UTF-8`,
        );
      const verifier = await resolveVerifierConfig(opts);
      const retrieval = await readRetrievalConfig(opts.config);
      const narratives = await readNarrativesConfig(opts.config);
      const index = await indexWithProgress(opts.index, retrieval);
      const pipeline = await openPipeline({ index, fast: opts.fast, verifier, retrieval, narratives });
      try {
        const result = await pipeline.check(claim, { k });
        process.stdout.write(opts.json ? `${JSON.stringify(result, null, 2)}\n` : formatCheck(result));
      } finally {
        await pipeline.close();
      }
    });
}
