/** Random access to the stored abstracts (docs.jsonl) by docno, through the offsets written at finalise. */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { decodeDoc, FILES, type StoredDoc } from "./schema.ts";

export class DocStore {
  readonly size: number;
  private readonly fd: number;
  private readonly offsets: Float64Array;
  private readonly ids: string[];
  private readonly byId: Map<string, number>;

  constructor(dir: string) {
    const buf = readFileSync(join(dir, FILES.offsets));
    this.offsets = new Float64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    this.size = this.offsets.length - 1;
    this.ids = readFileSync(join(dir, FILES.ids), "utf8").split("\n").slice(0, this.size);
    this.byId = new Map();
    for (let i = 0; i < this.ids.length; i++) this.byId.set(this.ids[i], i);
    this.fd = openSync(join(dir, FILES.docs), "r");
  }

  id(docno: number): string {
    return this.ids[docno];
  }

  docno(id: string): number | undefined {
    return this.byId.get(id);
  }

  get(docno: number): StoredDoc {
    const start = this.offsets[docno];
    const length = this.offsets[docno + 1] - start;
    const buf = Buffer.allocUnsafe(length);
    readSync(this.fd, buf, 0, length, start);
    return decodeDoc(buf.toString("utf8"));
  }

  close(): void {
    closeSync(this.fd);
  }
}
