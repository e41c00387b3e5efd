// The HTML result rule of the export contract, shared by the page and (as
// a Go port in htmlresult.go) by the server; testdata/htmlresult_cases.json
// is the common table of cases.
//
// The content service answers either with raw HTML or with a JSON wrapper
// such as {"body": {"html": "<!DOCTYPE html>…"}}. A response is read as
// text; if that text is a JSON object with a "body" member, the result is
// the first string among body.html, body.result and body itself. In every
// other case (not JSON, JSON that is not an object, no "body", no string
// member) the text itself is the result.
//
// The text is the body decoded as UTF-8, as Response.text() gives it: the
// decoder has dropped one leading byte order mark, and a second one is part
// of the text (so it is not JSON), as on the server. The Content-Type plays
// no part. The server's unwrap_html applies the same rule, and masks its
// secrets in whatever this decoding could reveal.

/**
 * Returns the HTML carried by a response text of /v1/message/html.
 * @param {string} text the response body, read as text
 * @returns {string}
 */
export function htmlFromResponseText(text) {
  return firstStringInWrapper(text, ["html", "result"]);
}

/**
 * Returns the plain text carried by a response text of
 * /v1/message/plain-text: the same rule with body.text in place of
 * body.html.
 * @param {string} text the response body, read as text
 * @returns {string}
 */
export function plainTextFromResponseText(text) {
  return firstStringInWrapper(text, ["text", "result"]);
}

function firstStringInWrapper(text, members) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  if (!isPlainObject(parsed) || !Object.hasOwn(parsed, "body")) {
    return text;
  }
  const body = parsed.body;
  if (isPlainObject(body)) {
    for (const name of members) {
      if (Object.hasOwn(body, name) && typeof body[name] === "string") {
        return body[name];
      }
    }
  }
  if (typeof body === "string") {
    return body;
  }
  return text;
}

function isPlainObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
