/**
 * PostgreSQL array literals, e.g. `{1,NULL,"say \"hi\""}`, for one column of a
 * chunk of rows. upsert() builds them itself rather than leaving it to the
 * driver so that the next chunk's parameters are ready while the database is
 * still writing the previous one. The element types are few and known:
 * numbers, booleans and instants need no quoting, text needs one escape pass,
 * and jsonb values travel as their JSON text.
 *
 * The literal grows by concatenation, not by joining an array of quoted
 * elements: V8 keeps the pieces as a rope and copies each value's text once,
 * when the driver writes the literal, instead of once into a quoted element,
 * once into the joined string and once more into the driver's buffer.
 */
export function arrayLiteral(values: readonly unknown[], asJson: boolean): string {
  return literal(values.length, (index) => values[index], asJson);
}

/** The literal of one column of `rows`, read in place. */
export function columnLiteral(rows: readonly Record<string, unknown>[], column: string, asJson: boolean): string {
  return literal(rows.length, (index) => (rows[index] as Record<string, unknown>)[column], asJson);
}

function literal(count: number, valueAt: (index: number) => unknown, asJson: boolean): string {
  let text = "{";
  for (let index = 0; index < count; index += 1) {
    if (index > 0) text += ",";
    text = withElement(text, valueAt(index), asJson);
  }
  return `${text}}`;
}

function withElement(text: string, value: unknown, asJson: boolean): string {
  if (value === null || value === undefined) return `${text}NULL`;
  if (asJson) return withQuoted(text, JSON.stringify(value));
  if (typeof value === "number" || typeof value === "bigint") return text + String(value);
  if (typeof value === "boolean") return text + (value ? "t" : "f");
  if (value instanceof Date) return text + value.toISOString();
  return withQuoted(text, String(value));
}

/** Most values hold neither a quote nor a backslash: looking for them is about half the cost of a replace that finds none. */
function withQuoted(text: string, value: string): string {
  if (value.indexOf('"') === -1 && value.indexOf("\\") === -1) return `${text}"${value}"`;
  return `${text}"${value.replace(/[\\"]/g, "\\$&")}"`;
}
