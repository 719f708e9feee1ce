/** Plain data types that flow through every stage of the pipeline. */

export type Label = "Supports" | "Refutes" | "Not Enough Information";
export const LABELS: readonly Label[] = ["Supports", "Refutes", "Not Enough Information"];
export const NEI: Label = "Not Enough Information";

const LABEL_ALIASES: Record<string, Label> = {
  supports: "Supports",
  support: "Supports",
  refutes: "Refutes",
  refute: "Refutes",
  contradict: "Refutes",
  "not enough information": "Not Enough Information",
  not_enough_info: "Not Enough Information",
  nei: "Not Enough Information",
};

/** A task 1 label written in any casing (and the SciFact/FEVER spellings); undefined when unknown. */
export function parseLabel(raw: string): Label | undefined {
  return LABEL_ALIASES[raw.trim().toLowerCase().replace(/\s+/g, " ")];
}

export interface Claim {
  id: string;
  text: string;
}

/** One abstract of a publications corpus. Ids are strings everywhere. */
export interface CorpusAbstract {
  id: string;
  abstract: string;
  title?: string;
  /** Sentence boundaries when the source gives them (SciFact); otherwise split later. */
  sentences?: string[];
  doi?: string;
  url?: string;
  source?: string;
  year?: number;
}

/** A gold judgement of a claim-abstract pair (task 1). */
export interface LabelledPair {
  claimId: string;
  abstractId: string;
  label: Label;
  /** Indices of the abstract sentences that justify the label, when known. */
  rationale?: number[];
}

/** A text with its CARDS codes (task 2 gold and training examples). */
export interface NarrativeExample {
  id: string;
  text: string;
  codes: string[];
}

/** One row of a task 1 prediction file. */
export interface Task1Prediction {
  claimId: string;
  abstractId: string;
  rank: number;
  label?: Label;
}

/** One row of a task 2 prediction file. */
export interface Task2Prediction {
  claimId: string;
  codes: string[];
}

/** A verification example: claim text, abstract sentences, gold label and rationale. */
export interface VerificationExample {
  claimId: string;
  claim: string;
  abstractId: string;
  title?: string;
  sentences: string[];
  label: Label;
  rationale: number[];
}
