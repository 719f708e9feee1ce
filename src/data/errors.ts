/** An input problem a user can fix: names the file, the line (or row) and the field. CLI exit code 2. */
export class DataError extends Error {
  readonly file: string;
  readonly line?: number;
  readonly field?: string;

  constructor(file: string, message: string, where: { line?: number; field?: string } = {}) {
    const parts = [file];
    if (where.line !== undefined) parts.push(`line ${where.line}`);
    if (where.field !== undefined) parts.push(`field "${where.field}"`);
    // One line, always: a quoted input (a parser's message often quotes the bad character) may hold line breaks.
    super(
      `${parts.join(", ")}: ${message}`.replace(/\r\n|[\r\n\u2028\u2029]/g, (c) =>
        c
          .replaceAll("\r", "\\r")
          .replaceAll("\n", "\\n")
          .replace(/[\u2028\u2029]/, (u) => `\\u${u.charCodeAt(0).toString(16)}`),
      ),
    );
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
