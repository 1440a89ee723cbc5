import type { EmailContentType, ReplyClassification, SequenceLabel } from "../upstream/enums.ts";
import type { Random } from "./random.ts";
import { LINKS, PARAGRAPHS, REPLY_TEXTS, SUGGESTIONS } from "./seed/vocabulary.ts";

/**
 * Content rules shared by the generator and the write endpoints: how an email
 * sequence is scored and labelled, how its content type is detected, and how
 * message and reply texts are made.
 */

const HTML_TAG = /<\/?[a-z][a-z0-9-]*(\s[^<>]*)?\/?>/i;
const LINK = /https?:\/\/[^\s"'<>]+/g;
const SPAM_PHRASES = ["free", "guarantee", "act now", "winner", "$$$", "click here", "100%", "urgent"];
const BLOCKED_PHRASES = ["viagra", "casino", "crypto giveaway", "wire transfer"];
const MAX_SCORE = 100;

export interface SequenceAssessment {
  score: number;
  verdict: string;
  suggestions: unknown;
  label: SequenceLabel;
  blockedReason: string;
  flaggedForApproval: boolean;
  contentType: EmailContentType;
  links: string[];
}

function contentTypeOf(body: string): EmailContentType {
  return HTML_TAG.test(body) ? "text/html" : "text/plain";
}

function linksIn(body: string): string[] {
  return [...new Set(body.match(LINK) ?? [])];
}

/** A deterministic content-quality review, in the spirit of a spam checker. */
export function assessSequence(subject: string, body: string): SequenceAssessment {
  const text = `${subject}\n${body}`.toLowerCase();
  const links = linksIn(body);
  const suggestions: { type: string; message: string }[] = [];
  let score = MAX_SCORE;
  const penalise = (points: number, suggestion: (typeof SUGGESTIONS)[number]) => {
    score -= points;
    if (!suggestions.includes(suggestion)) suggestions.push(suggestion);
  };
  const [subjectTip, personalTip, linkTip, spamTip] = SUGGESTIONS;
  if (subject.trim() === "" || [...subject].length > 60) penalise(15, subjectTip);
  if ([...body].length < 40) penalise(20, personalTip);
  if (links.length > 3) penalise(10 * (links.length - 3), linkTip);
  for (const phrase of SPAM_PHRASES) if (text.includes(phrase)) penalise(8, spamTip);
  if ((text.match(/!/g) ?? []).length > 3) penalise(5, spamTip);
  score = Math.max(0, Math.min(MAX_SCORE, score));
  const blocked = BLOCKED_PHRASES.find((phrase) => text.includes(phrase));
  return {
    score,
    verdict: score >= 80 ? "great" : score >= 60 ? "good" : score >= 40 ? "fair" : "poor",
    suggestions,
    label: blocked ? "blocked" : "passed",
    blockedReason: blocked ? `contains the blocked phrase "${blocked}"` : "",
    flaggedForApproval: blocked !== undefined || score < 40,
    contentType: contentTypeOf(body),
    links,
  };
}

export function fillIn(template: string, values: { first: string; company: string }): string {
  return template.replaceAll("{first}", values.first).replaceAll("{company}", values.company);
}

export function plainBody(random: Random, values: { first: string; company: string }): string {
  const paragraphs = random.sample(PARAGRAPHS, random.int(2, 4)).map((paragraph) => fillIn(paragraph, values));
  return [`Hi ${values.first},`, ...paragraphs, random.pick(LINKS), "Best,\nAnna"].join("\n\n");
}

export function htmlBody(random: Random, values: { first: string; company: string }, minimumBytes = 0): string {
  const paragraphs = random.sample(PARAGRAPHS, random.int(2, 4)).map((paragraph) => `<p>${fillIn(paragraph, values)}</p>`);
  const link = random.pick(LINKS);
  const parts = [`<p>Hi ${values.first},</p>`, ...paragraphs, `<p><a href="${link}">${link}</a></p>`];
  // Long newsletter-style bodies (10–20 KB) test storage and paging of big pages.
  let bytes = Buffer.byteLength(parts.join("\n"));
  for (let section = 1; bytes < minimumBytes; section++) {
    const added = [`<h2>Section ${section} — 第${section}節</h2>`, `<p>${fillIn(random.pick(PARAGRAPHS), values)}</p>`];
    parts.push(...added);
    bytes += Buffer.byteLength(added.join("\n")) + 1;
  }
  return `<html><body>${parts.join("\n")}<p>Best,<br>Anna</p></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

export interface ReplyContent {
  bodyPlainText: string;
  bodyHtml: string;
}

export function replyContent(random: Random, classification: ReplyClassification, quotedSubject: string): ReplyContent {
  const text = random.pick(REPLY_TEXTS[classification]);
  return {
    bodyPlainText: `${text}\n\n> ${quotedSubject}`,
    bodyHtml: `<div dir="auto">${escapeHtml(text)}</div><blockquote>${escapeHtml(quotedSubject)}</blockquote>`,
  };
}

/** A reply's subject, within the 500 characters the listing allows. */
export function replySubject(subject: string): string {
  return [...`Re: ${subject}`].slice(0, 500).join("");
}
