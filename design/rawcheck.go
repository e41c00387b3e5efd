package design

import "unicode/utf8"

// rawMaxNest bounds the nesting validRaw follows; deeper Raw values go to
// check.
const rawMaxNest = 64

// validRaw is check for the Raw array at i, as one loop without calls per
// value: Raw values are half of a legacy design, and checking them took a
// fifth of its decode and render. It answers only when it is sure: ok means check
// would succeed, end where check would stop and values how many values
// it would count. Anything else (a syntax error, a limit reached or
// nearly so, invalid UTF-8, deep nesting) is ok false, and check then
// reads the value again and reports exactly as before.
func (p *parser) validRaw(i, depth int) (end, values int, ok bool) {
	s := p.src
	lim := &p.lim
	var counts [rawMaxNest]int32 // elements of each open container so far
	var objects uint64           // bit n: the container at nesting n is an object
	n := -1                      // nesting of the innermost open container
	var valid bool
	for {
		// A value starts at i.
		if i >= len(s) {
			return 0, 0, false
		}
		values++
		switch c := s[i]; {
		case c == '{' || c == '[':
			n++
			if n >= rawMaxNest || depth+n+1 > lim.MaxDepth {
				return 0, 0, false
			}
			counts[n] = 1
			if i = skipSpace(s, i+1); i >= len(s) {
				return 0, 0, false
			}
			if c == '{' {
				objects |= 1 << n
				if s[i] == '}' {
					i++
					n--
					break
				}
				if i, valid = validKey(s, i, lim.MaxString); !valid {
					return 0, 0, false
				}
				continue
			}
			objects &^= 1 << n
			if s[i] == ']' {
				i++
				n--
				break
			}
			continue // to the first element, at i
		case c == '"':
			if i, valid = validString(s, i, lim.MaxString); !valid {
				return 0, 0, false
			}
		case c == 't':
			if len(s)-i < 4 || s[i:i+4] != "true" {
				return 0, 0, false
			}
			i += 4
		case c == 'f':
			if len(s)-i < 5 || s[i:i+5] != "false" {
				return 0, 0, false
			}
			i += 5
		case c == 'n':
			if len(s)-i < 4 || s[i:i+4] != "null" {
				return 0, 0, false
			}
			i += 4
		default:
			if i, valid = scanNumber(s, i); !valid {
				return 0, 0, false
			}
		}
		// After a value: close containers until a comma or the end.
		for {
			if n < 0 {
				if p.values+values > lim.MaxValues {
					return 0, 0, false
				}
				return i, values, true
			}
			if i = skipSpace(s, i); i >= len(s) {
				return 0, 0, false
			}
			isObject := objects>>n&1 == 1
			switch c := s[i]; {
			case c == ',':
				if counts[n]++; int(counts[n]) > lim.MaxItems {
					return 0, 0, false
				}
				if i = skipSpace(s, i+1); isObject {
					if i, valid = validKey(s, i, lim.MaxString); !valid {
						return 0, 0, false
					}
				}
			case c == '}' && isObject, c == ']' && !isObject:
				i++
				n--
				continue
			default:
				return 0, 0, false
			}
			break
		}
	}
}

// validKey steps over a member name at i, the colon and the space around
// it, for validRaw.
func validKey(s string, i, maxString int) (int, bool) {
	if i >= len(s) || s[i] != '"' {
		return i, false
	}
	i, ok := validString(s, i, maxString)
	if !ok {
		return i, false
	}
	if i = skipSpace(s, i); i >= len(s) || s[i] != ':' {
		return i, false
	}
	return skipSpace(s, i+1), true
}

// validString steps over the string at i for validRaw: ok only when it is
// terminated, has valid escapes and UTF-8 and, as written, fits maxString
// (unescaped it can only be shorter).
func validString(s string, i, maxString int) (int, bool) {
	start := i + 1
	var high uint64
	for i = start; ; {
		var seen uint64
		i, seen = plainRun(s, i)
		high |= seen
		if i >= len(s) || s[i] < 0x20 {
			return i, false
		}
		if s[i] == '"' {
			break
		}
		if i+1 >= len(s) {
			return i, false
		}
		switch s[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			_, next, ok := unicodeEscape(s, i+2)
			if !ok {
				return i, false
			}
			i = next
		default:
			return i, false
		}
	}
	if i-start > maxString || high&highs != 0 && !utf8.ValidString(s[start:i]) {
		return i, false
	}
	return i + 1, true
}
