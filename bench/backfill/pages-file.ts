import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { createInterface } from "node:readline";

/**
 * The answers the fetch-only walk received, kept in a file so that the
 * write-side limits (COPY, the naive script) load exactly the records the
 * sync loads, without fetching them again. One line per answer:
 * `stream <TAB> campaign uid or - <TAB> body as received`. A JSON body holds
 * no raw tab or newline, so the body is stored as it came.
 */

export interface SavedAnswer {
  /** The stream whose records the body holds (a StreamName). */
  stream: string;
  campaignUid: string | null;
  body: string;
}

export interface AnswerWriter {
  save(stream: string, campaignUid: string | null, body: string): Promise<void>;
  close(): Promise<void>;
}

export function answerWriter(path: string): AnswerWriter {
  const out = createWriteStream(path);
  // Walks save at once: they wait for one drain together (one listener each would pass the emitter's limit).
  let draining: Promise<unknown> | undefined;
  return {
    async save(stream, campaignUid, body) {
      if (!out.write(`${stream}\t${campaignUid ?? "-"}\t${body}\n`)) draining ??= once(out, "drain").finally(() => (draining = undefined));
      await draining;
    },
    async close() {
      out.end();
      await once(out, "finish");
    },
  };
}

export async function* readAnswers(path: string): AsyncGenerator<SavedAnswer> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    const first = line.indexOf("\t");
    const second = line.indexOf("\t", first + 1);
    const campaignUid = line.slice(first + 1, second);
    yield { stream: line.slice(0, first), campaignUid: campaignUid === "-" ? null : campaignUid, body: line.slice(second + 1) };
  }
}
