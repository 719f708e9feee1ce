/** An input problem a user can fix: names the file, the line (or row) and the field. CLI exit code 2. */
export class DataError extends Error {
  readonly file: string;
  readonly line?: number;
  readonly field?: string;

  constructor(file: string, message: string, where: { line?: number; field?: string } = {}) {
    const parts = [file];
    if (where.line !== undefined) parts.push(`line ${where.line}`);
    if (where.field !== undefined) parts.push(`field "${where.field}"`);
    super(`${parts.join(", ")}: ${message}`);
    this.name = "DataError";
    this.file = file;
    this.line = where.line;
    this.field = where.field;
  }
}

/**
 * A service that did not answer usably (the dataset hub, a chat endpoint, Redis): not the user's input, so CLI exit
 * code 1, not 2 (docs/exit-codes.md).
 */
export class ServiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServiceError";
  }
}
