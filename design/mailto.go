package design

import "strings"

// mailtoAttaches reports whether rest, a mailto: URL after its colon,
// has a header field named attach, attachment or insert. Some mail
// clients attach the file the first two name to the message they open
// (Evolution: CVE-2020-11879, KMail: CVE-2020-11880, older Thunderbird),
// and Claws Mail puts the text of insert's file into its body, so a link
// in a design could have the reader send their own files (keys,
// mailboxes) to its sender.
//
// Mail clients read the query each in their own way, and net/url in yet
// another (it ends the query at '#' and skips fields after a ';'), so
// rest is read as loosely as any of them might: a field starts after any
// '?', '&' or ';' (in a fragment too), its name ends at '=', spaces,
// controls and '+' in a name are ignored, letter case does not matter,
// and the fields are read again with percent-escapes decoded, twice over
// ("att%2561ch"), after the spaces and controls that could split an
// escape are dropped. Ordinary fields (to, cc, bcc, subject, body) are
// never refused, whatever their values hold.
func mailtoAttaches(rest string) bool {
	if !strings.ContainsAny(rest, "?&;%") {
		return false // "mailto:a@b.test": nothing to read
	}
	for round := 0; ; round++ {
		if attachField(rest) {
			return true
		}
		if round == 2 || strings.IndexByte(rest, '%') < 0 {
			return false
		}
		rest = percentDecode(dropSpace(rest))
	}
}

// attachField reports whether a field after a '?', '&' or ';' of s is
// named attach, attachment or insert, read as mailtoAttaches says.
func attachField(s string) bool {
	const longest = len("attachment")
	var name [longest]byte
	n := -1 // bytes of the name read so far; -1 outside a name
	for i := 0; i <= len(s); i++ {
		c := byte('&') // the end of s ends a name too
		if i < len(s) {
			c = s[i]
		}
		switch {
		case c == '?' || c == '&' || c == ';' || c == '=':
			if n >= len("attach") && n <= longest {
				if f := string(name[:n]); f == "attach" || f == "attachment" || f == "insert" {
					return true
				}
			}
			n = 0
			if c == '=' {
				n = -1 // the value, up to the next field
			}
		case n < 0 || c <= ' ' || c == 0x7f || c == '+':
		default:
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if n < longest {
				name[n] = c
			}
			n++
		}
	}
	return false
}

// dropSpace is s without ASCII spaces and controls (s itself when it has
// none).
func dropSpace(s string) string {
	i := 0
	for i < len(s) && s[i] > ' ' && s[i] != 0x7f {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s[:i])
	for ; i < len(s); i++ {
		if c := s[i]; c > ' ' && c != 0x7f {
			b = append(b, c)
		}
	}
	return string(b)
}

// percentDecode is s with each "%XX" of two hex digits decoded, and any
// other '%' kept as it is (as browsers and most mail clients read a
// malformed escape).
func percentDecode(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if hi, lo := unhex(s[i+1]), unhex(s[i+2]); hi >= 0 && lo >= 0 {
				b = append(b, byte(hi<<4|lo))
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// unhex is the value of hex digit c, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
