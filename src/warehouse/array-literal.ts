/**
 * PostgreSQL array literals, e.g. `{1,NULL,"say \"hi\""}`, for one column of a
 * chunk of rows. upsert() builds them itself rather than leaving it to the
 * driver so that the next chunk's parameters are ready while the database is
 * still writing the previous one. The element types are few and known:
 * numbers, booleans and instants need no quoting, text needs one escape pass,
 * and jsonb values travel as their JSON text.
 */
export function arrayLiteral(values: readonly unknown[], asJson: boolean): string {
  const elements = new Array<string>(values.length);
  for (let index = 0; index < values.length; index += 1) elements[index] = element(values[index], asJson);
  return `{${elements.join(",")}}`;
}

/** The literal of one column of `rows`, read in place rather than gathered into an array of values first. */
export function columnLiteral(rows: readonly Record<string, unknown>[], column: string, asJson: boolean): string {
  const elements = new Array<string>(rows.length);
  for (let index = 0; index < rows.length; index += 1) elements[index] = element((rows[index] as Record<string, unknown>)[column], asJson);
  return `{${elements.join(",")}}`;
}

function element(value: unknown, asJson: boolean): string {
  if (value === null || value === undefined) return "NULL";
  if (asJson) return quoted(JSON.stringify(value));
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "t" : "f";
  if (value instanceof Date) return value.toISOString();
  return quoted(String(value));
}

/** Most values hold neither a quote nor a backslash: looking for them is about half the cost of a replace that finds none. */
function quoted(text: string): string {
  if (text.indexOf('"') === -1 && text.indexOf("\\") === -1) return `"${text}"`;
  return `"${text.replace(/[\\"]/g, "\\$&")}"`;
}
