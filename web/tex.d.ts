/** Types of web/tex.js, which the page loads as is and src/text/tex.ts re-exports for the API. */
export declare function readableTex(text: string): string;
