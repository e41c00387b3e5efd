// Image URLs of a design, made absolute against the page before export: an
// exported email is read far from this page (a mail client, a downloaded
// file), where a relative URL such as the starter designs'
// "designs/img/banner.png" points nowhere.

// Members whose string value is an image (or font) URL: image and carousel
// src, video thumbnails and play icons, icon-list images, web fonts.
const URL_KEYS = new Set(["src", "thumbSrc", "iconSrc", "image", "url"]);
// Members holding CSS with url(…): row and content backgrounds.
const CSS_KEYS = new Set(["background-image", "background"]);
const CSS_URL = /url\(\s*(['"]?)([^'")]*)\1\s*\)/g;

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

// absoluteImageURLs rewrites, in place, the relative image URLs of a
// parsed design and reports whether it changed anything.
export function absoluteImageURLs(node, base) {
  let changed = false;
  const visit = (value) => {
    if (Array.isArray(value)) {
      value.forEach(visit);
      return;
    }
    if (value === null || typeof value !== "object") {
      return;
    }
    for (const [key, member] of Object.entries(value)) {
      if (typeof member !== "string") {
        visit(member);
        continue;
      }
      let next = member;
      if (URL_KEYS.has(key)) {
        next = resolve(member, base);
      } else if (CSS_KEYS.has(key)) {
        next = member.replace(CSS_URL, (all, quote, url) => {
          const absolute = resolve(url, base);
          return absolute === url ? all : `url(${quote}${absolute}${quote})`;
        });
      }
      if (next !== member) {
        value[key] = next;
        changed = true;
      }
    }
  };
  visit(node);
  return changed;
}

// withAbsoluteImageURLs returns the design JSON text with its relative image
// URLs resolved against base; text that needs no change (or is not JSON)
// is returned as it is, byte for byte.
export function withAbsoluteImageURLs(text, base) {
  let design;
  try {
    design = JSON.parse(text);
  } catch {
    return text;
  }
  return absoluteImageURLs(design, base) ? JSON.stringify(design) : text;
}
