/**
 * JSON.stringify(JSON.parse(text)) for `text`, a jsonb value as PostgreSQL writes it (`data::text`), without
 * building the object: a page read as stored sends each object's fields as this text, and the driver's parse of
 * jsonb and the stringify after it were most of the `pg` client's cost of a page's rows (bench/RESULTS.md, Objects).
 * jsonb's text differs from JSON.stringify's only in a blank after each `:` and `,` (outside strings; both escape
 * strings alike: \" \\ \b \f \n \r \t and \u00xx for other control characters) and in two things the scan hands
 * to the parse instead: a key beginning with a digit (JavaScript orders array-index keys first, jsonb by length)
 * and a number JavaScript would write otherwise (jsonb writes 1e21 in full, 5e-7 as 0.0000005).
 * test/storage/jsonb-text.test.ts holds it to the parse on PostgreSQL's own text.
 */
export function jsonbTextAsJson(text: string): string {
  let out = '';
  let from = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const start = i;
      // The closing quote: one not escaped (preceded by an even number of backslashes).
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return reparsed(text);
        let slashes = 0;
        while (text.charCodeAt(i - 1 - slashes) === 92) slashes++;
        if ((slashes & 1) === 0) break;
      }
      const first = text.charCodeAt(start + 1);
      if (first >= 48 && first <= 57 && text.charCodeAt(i + 1) === 58) return reparsed(text);
    } else if (c === 32) {
      out += text.slice(from, i);
      from = i + 1;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      let end = i + 1;
      let digitsOnly = true;
      for (; end < length; end++) {
        const d = text.charCodeAt(end);
        if (d === 46 || d === 101 || d === 69 || d === 43 || d === 45) digitsOnly = false;
        else if (d < 48 || d > 57) break;
      }
      // A whole number of up to 15 digits reads back as written; anything else is checked.
      if (!digitsOnly || end - i > 15) {
        const token = text.slice(i, end);
        if (String(Number(token)) !== token) return reparsed(text);
      }
      i = end - 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

function reparsed(text: string): string {
  return JSON.stringify(JSON.parse(text));
}
