/**
 * Words the generator draws from. Deliberately international: names,
 * subjects and bodies mix Latin with diacritics, CJK, right-to-left scripts
 * and emoji, because a warehouse that only ever saw ASCII has not been tested.
 */

export const FIRST_NAMES = [
  "Anna", "Lukas", "Sofia", "Mateo", "Zoë", "José", "Łukasz", "Søren", "Aiyana", "Chloé",
  "Hiroshi", "美咲", "Wei", "Priya", "Olumide", "Fatima", "محمد", "Noa", "Ingrid", "Dmitri",
] as const;

export const LAST_NAMES = [
  "Schmidt", "García", "Nguyen", "Kowalski", "Okafor", "Müller", "Rossi", "Haddad", "Tanaka", "佐藤",
  "O'Brien", "Johansson", "Dubois", "Novák", "Silva", "כהן", "Ivanova", "Patel", "Andersen", "Smith",
] as const;

/** ASCII spellings used in mailbox names. */
export const MAILBOX_NAMES = [
  "anna", "lukas", "sofia", "mateo", "zoe", "jose", "lukasz", "soren", "aiyana", "chloe",
  "hiroshi", "misaki", "wei", "priya", "olumide", "fatima", "mohammed", "noa", "ingrid", "dmitri",
] as const;

export const MAILBOX_SURNAMES = [
  "schmidt", "garcia", "nguyen", "kowalski", "okafor", "mueller", "rossi", "haddad", "tanaka", "sato",
  "obrien", "johansson", "dubois", "novak", "silva", "cohen", "ivanova", "patel", "andersen", "smith",
] as const;

export const COMPANY_DOMAINS = [
  "acme.example", "globex.example", "initech.example", "umbrella.example", "hooli.example",
  "stark.example", "wayne.example", "wonka.example", "tyrell.example", "cyberdyne.example",
  "soylent.example", "vandelay.example", "piedpiper.example", "oscorp.example", "gringotts.example",
] as const;

export const SENDING_DOMAIN_WORDS = ["outreach", "hello", "mail", "team", "growth", "news", "contact", "go"] as const;
export const SENDING_DOMAIN_TLDS = ["io", "co", "net", "app", "dev"] as const;

export const WORKSPACE_NAMES = [
  "Main workspace", "Agence Île-de-France 🇫🇷", "東京チーム", "فريق المبيعات", "Growth & Partnerships", "Équipe Nord",
] as const;

export const TIME_ZONES = ["UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo", "Asia/Jerusalem", "Australia/Sydney", "America/Sao_Paulo"] as const;

export const CAMPAIGN_NAMES = [
  "Q3 SaaS founders 🚀", "Relance clients — printemps", "日本市場向けキャンペーン", "حملة الربيع للعملاء",
  "Webinar follow-up", "Enterprise pilots (EMEA)", "Партнёрская программа", "Re-engagement 💌",
  "Conference leads: Berlin", "קמפיין לקוחות חדשים", "Product launch ✨ wave", "Agencies — Nordics",
  "Cold outreach: fintech", "新产品发布邀请", "Customer stories 📣", "Hiring managers (US)",
] as const;

export const SUBJECTS = [
  "Quick question about {company}", "Idea for {company} ✨", "{first}, 5 minutes next week?", "Re: our chat",
  "Une idée pour {company}", "{company} 向けのご提案", "اقتراح سريع لـ {company}", "Following up 🙂",
  "Last note from me", "Czy to ma sens dla {company}?", "A case study you might like 📈", "שאלה קצרה",
] as const;

export const PARAGRAPHS = [
  "I noticed {company} has been growing fast — congratulations on the recent launch!",
  "We help teams like yours cut reporting time in half, without changing the tools you already use.",
  "Nous aidons les équipes commerciales à gagner du temps sur le suivi des prospects.",
  "御社の営業チームの効率化について、簡単にご紹介させてください。",
  "نحن نساعد فرق المبيعات على توفير الوقت ومتابعة العملاء بشكل أفضل.",
  "Would it make sense to compare notes for 15 minutes? 📅",
  "If this is not a priority right now, just let me know and I will not follow up again.",
  "Happy to share a short case study from a similar team — zero pressure. 🙌",
] as const;

export const LINKS = [
  "https://example.com/case-study",
  "https://example.com/pricing?utm_source=coldsync",
  "https://calendar.example.com/book/demo",
  "https://example.com/blog/日本語-ガイド",
  "https://example.com/webinar#register",
] as const;

export const REPLY_TEXTS = {
  positive: [
    "Sounds interesting — can you send over some times for next week?",
    "Yes, let's talk! Thursday works for me 👍",
    "Avec plaisir, envoyez-moi une invitation.",
    "ぜひお話を伺いたいです。来週はいかがでしょうか。",
  ],
  neutral: [
    "I'm out of office until Monday, I will reply when I'm back.",
    "Can you tell me more about pricing first?",
    "Je transmets à ma collègue qui s'occupe de ce sujet.",
    "شكراً، سأراجع الأمر وأعود إليك.",
  ],
  negative: [
    "Not interested, please remove me from your list.",
    "Please stop emailing me. 🛑",
    "Pas intéressé, merci.",
    "בבקשה להסיר אותי מהרשימה.",
  ],
} as const;

export const CONTACT_LIST_NAMES = [
  "Webinar attendees", "Trade show — Lyon 2026", "CRM export", "Newsletter signups ✉️", "見込み客リスト", "قائمة العملاء المحتملين",
] as const;

export const CONTACT_LIST_COLUMNS = ["email", "first_name", "last_name", "company", "title", "city", "país", "電話番号"] as const;

export const SUGGESTIONS = [
  { type: "subject", message: "Shorten the subject line to under 50 characters." },
  { type: "personalization", message: "Mention something specific about the recipient." },
  { type: "links", message: "Use fewer links; one call to action is enough." },
  { type: "spam_words", message: "Avoid phrases that spam filters flag." },
] as const;
