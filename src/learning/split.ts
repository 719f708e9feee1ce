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
