// Image URLs of a design, made absolute against the page before export: an
// exported email is read far from this page (a mail client, a downloaded
// file), where a relative URL such as the starter designs'
// "designs/img/banner.png" points nowhere.

// Members whose string value is an image (or font) URL: image and carousel
// src, video thumbnails and play icons, icon-list images, web fonts.
const URL_KEYS = new Set(["src", "thumbSrc", "iconSrc", "image", "url"]);
// Members holding CSS with url(…): row and content backgrounds. The
// pattern only finds the parentheses; the quotes and spaces inside are
// taken off in code, since a pattern for them too backtracks for seconds
// over a long run of spaces.
const CSS_KEYS = new Set(["background-image", "background"]);
const CSS_URL = /url\(([^)]*)\)/g;

// A value is resolved only when it is plainly a relative path: no scheme,
// not a fragment, and nothing of a merge tag ({{…}}, $…$, *|…|*, [%…%]),
// which the sending platform fills in and must reach it untouched.
function isRelativePath(value) {
  return value !== "" &&
    !/^[a-z][a-z0-9+.-]*:/i.test(value) &&
    !value.startsWith("#") &&
    !/[\s{}$|[\]%<>"']/.test(value.replace(/%[0-9a-f]{2}/gi, ""));
}

function resolve(value, base) {
  if (!isRelativePath(value)) {
    return value;
  }
  try {
    return new URL(value, base).href;
  } catch {
    return value;
  }
}

// resolveMember returns the value of the member key, a string, with its
// relative image URLs resolved against base.
function resolveMember(key, value, base) {
  if (URL_KEYS.has(key)) {
    return resolve(value, base);
  }
  if (CSS_KEYS.has(key)) {
    return value.replace(CSS_URL, (all, inner) => {
      let url = inner.trim();
      let quote = "";
      if (url.length >= 2 && (url[0] === "'" || url[0] === '"') && url.endsWith(url[0])) {
        quote = url[0];
        url = url.slice(1, -1);
      }
      const absolute = resolve(url, base);
      return absolute === url ? all : `url(${quote}${absolute}${quote})`;
    });
  }
  return value;
}

// A JSON string literal, or one of the characters that matter around it.
const TOKEN = /"(?:[^"\\]|\\.)*"|[:{}[\],]/g;

// withAbsoluteImageURLs returns the design JSON text with its relative image
// URLs resolved against base. Only those strings are written again: every
// other byte of the text stays as the editor delivered it (numbers past
// 2^53, escapes, spacing), which a JSON.parse and JSON.stringify round trip
// would not keep. Text that is not JSON is returned as it is.
export function withAbsoluteImageURLs(text, base) {
  try {
    JSON.parse(text);
  } catch {
    return text;
  }
  // In valid JSON a string followed by ":" is a member name, and a string
  // right after one is that member's value.
  let out = "";
  let last = 0;
  let key = null; // the name of the member whose value comes next
  let prev = null; // the previous string literal, until we know its role
  for (const match of text.matchAll(TOKEN)) {
    const token = match[0];
    if (token === ":") {
      key = JSON.parse(prev);
      prev = null;
      continue;
    }
    if (token[0] === '"') {
      prev = token;
      if (key === null) {
        continue;
      }
      const value = JSON.parse(token);
      const next = resolveMember(key, value, base);
      key = null;
      prev = null;
      if (next !== value) {
        out += text.slice(last, match.index) + JSON.stringify(next);
        last = match.index + token.length;
      }
      continue;
    }
    key = null; // a container or another member: no pending value
    prev = null;
  }
  return last === 0 ? text : out + text.slice(last);
}
