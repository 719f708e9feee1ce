/** Deterministic train/dev splits: an id's side depends only on the id and a salt, never on file order. */
import { createHash } from "node:crypto";

export type SplitSide = "train" | "dev";

/** A number in [0, 1) from sha1(salt + ":" + id), uniform enough for splitting. */
export function hashUnit(id: string, salt = ""): number {
  const h = createHash("sha1").update(`${salt}:${id}`).digest();
  // 48 bits keep the value exact in a double.
  return h.readUIntBE(0, 6) / 2 ** 48;
}

export function hashSplit(id: string, devFraction: number, salt = "climatecheck"): SplitSide {
  if (!(devFraction >= 0 && devFraction <= 1))
    throw new RangeError(`devFraction must be in [0, 1], got ${devFraction}`);
  return hashUnit(id, salt) < devFraction ? "dev" : "train";
}

/** The fold of a claim's pairs in every out-of-fold step of training (and of the benchmarks that mirror it). */
export function foldOf(claimId: string, folds: number): number {
  return Math.min(folds - 1, Math.floor(hashUnit(claimId, "verification-fold") * folds));
}

/** Per fold, the rows to fit on and the rows held out, given each row's claim id (rows in ascending order). */
export function claimFolds(claimIds: readonly string[], folds: number): { fit: number[]; held: number[] }[] {
  const splits = Array.from({ length: folds }, () => ({ fit: [] as number[], held: [] as number[] }));
  claimIds.forEach((id, row) => {
    const f = foldOf(id, folds);
    splits.forEach((split, k) => {
      (k === f ? split.held : split.fit).push(row);
    });
  });
  return splits;
}

/**
 * Rows that share any key (a claim, an abstract) end in one group, named by its smallest key: folds over these
 * groups hold out every row tied to a held-out row. SciFact writes each refuted claim as the negation of a
 * supported one on the same abstract; folds by claim alone put the sibling in the fit, and an out-of-fold model
 * then learns the abstract's label from it, the wrong way round.
 */
export function linkedGroups(keys: readonly (readonly string[])[]): string[] {
  const parent = new Map<string, string>();
  const find = (k: string): string => {
    let root = k;
    while (parent.get(root) !== root) root = parent.get(root) as string;
    for (let x = k; x !== root; ) {
      const next = parent.get(x) as string;
      parent.set(x, root);
      x = next;
    }
    return root;
  };
  for (const row of keys) {
    if (row.length === 0) throw new RangeError("every row needs at least one key");
    for (const k of row) if (!parent.has(k)) parent.set(k, k);
    for (const k of row.slice(1)) {
      const [a, b] = [find(row[0]), find(k)];
      // The smaller key is the root, so a group's name does not depend on row order.
      if (a !== b) a < b ? parent.set(b, a) : parent.set(a, b);
    }
  }
  return keys.map((row) => find(row[0]));
}
