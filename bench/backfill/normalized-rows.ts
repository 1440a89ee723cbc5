import { mapPage } from "../../src/sync/page-writer.ts";
import type { RowBatch, StreamDefinition, StreamName } from "../../src/sync/stream.ts";
import { ACCOUNT_STREAMS, CAMPAIGN_STREAMS } from "../../src/sync/streams/index.ts";
import { readRecords } from "../../src/upstream/parsing.ts";
import type { RecordTypeName } from "../../src/upstream/record-types.ts";
import { readAnswers } from "./pages-file.ts";

/**
 * The warehouse rows of the saved answers, one batch per answer, exactly as
 * the sync maps them (tolerant reading, then each stream's row mapping): the
 * rows the write-side limits load.
 */

const STREAMS = new Map([...ACCOUNT_STREAMS, ...CAMPAIGN_STREAMS].map((stream) => [stream.name, stream]));

export interface AnswerRows {
  stream: StreamDefinition;
  batch: RowBatch;
  records: number;
}

/** The records an answer body holds: a page's `data`, a bare list, or one record. */
function recordsOf(stream: StreamName, body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  if (stream === "campaign_detail" || stream === "email_sequences") return [body];
  return (body as { data: unknown[] }).data;
}

export async function* answerRows(answersFile: string, account: string): AsyncGenerator<AnswerRows> {
  const observedAt = new Date();
  for await (const answer of readAnswers(answersFile)) {
    const stream = STREAMS.get(answer.stream as StreamName);
    if (stream === undefined) throw new Error(`no stream named ${answer.stream}`);
    const parsed = readRecords(stream.name as RecordTypeName, recordsOf(stream.name, JSON.parse(answer.body)));
    const { batch } = mapPage(stream, parsed.records, { account, campaignUid: answer.campaignUid }, observedAt);
    yield { stream, batch, records: parsed.records.length + parsed.rejected.length };
  }
}
