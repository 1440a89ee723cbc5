import type { EmailContentType, SequenceLabel } from "../../upstream/enums.ts";
import { assessSequence, fillIn, htmlBody, plainBody } from "../content.ts";
import type { Random } from "../random.ts";
import type { CampaignRecord, SequenceRecord } from "../store/model.ts";
import { addSequence } from "../store/records.ts";
import type { Account, World } from "../store/world.ts";
import { SUBJECTS } from "./vocabulary.ts";

/**
 * Email sequences of generated campaigns. The first sequences of an account
 * walk through every content type and label; a few bodies are 10–20 KB of
 * HTML. Subjects and bodies keep their merge tags, as a sequence does before
 * it is personalised.
 */

const CONTENT_TYPES: readonly EmailContentType[] = ["text/plain", "text/html", "text/rich"];
const FORCED_LABELS: readonly SequenceLabel[] = ["approved", "rejected", "blocked", "passed"];
const MERGE_TAGS = { first: "{{first_name}}", company: "{{company}}" };
const LONG_BODY_POSITION = 3;
const LONG_BODY_RATE = 0.03;

/** `gaps`: the range of next_message_days between two steps (the last step has 0). */
export function seedSequences(world: World, account: Account, campaign: CampaignRecord, random: Random, count: number, gaps: [number, number] = [1, 5]): void {
  for (let step = 0; step < count; step++) {
    const position = account.sequencesById.size;
    const contentType = CONTENT_TYPES[position] ?? random.weighted({ "text/plain": 5, "text/html": 3, "text/rich": 1 });
    const long = position === LONG_BODY_POSITION || random.chance(LONG_BODY_RATE);
    const subject = fillIn(random.pick(SUBJECTS), MERGE_TAGS);
    const body =
      contentType === "text/plain" && !long ? plainBody(random, MERGE_TAGS) : htmlBody(random, MERGE_TAGS, long ? random.int(10_500, 18_000) : 0);
    const assessment = assessSequence(subject, body);
    const sequence = addSequence(
      world,
      account,
      campaign,
      { subject, body, order: step + 1, nextMessageDays: step === count - 1 ? 0 : random.int(...gaps) },
      { ...assessment, contentType: long ? "text/html" : contentType },
    );
    review(sequence, FORCED_LABELS[position], random);
  }
}

/** Labels and approval flags as a human reviewer would have left them. */
function review(sequence: SequenceRecord, forced: SequenceLabel | undefined, random: Random): void {
  const label = forced ?? random.weighted<SequenceLabel>({ passed: 12, approved: 3, blocked: 1, rejected: 1 });
  sequence.label = label;
  sequence.blockedReason = label === "blocked" ? "flagged by the content reviewer: too many links" : label === "rejected" ? "rejected: misleading subject line" : "";
  sequence.flaggedForApproval = label !== "passed";
  sequence.blockApproval = label === "rejected";
  if (random.chance(0.2)) sequence.suggestions = { summary: sequence.verdict, items: sequence.suggestions };
}
