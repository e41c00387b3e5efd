// Package docs_test keeps the documentation honest: every Caddyfile snippet
// in README.md and docs/ is `caddy fmt` clean and adapts with this plugin's
// modules, secrets in snippets are runtime placeholders, and every relative
// link (and its #anchor) resolves in the repository.
package docs_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/designbridge/caddy-designbridge"
	_ "github.com/designbridge/caddy-designbridge/fsp"
)

// markdownFiles are the documents a user or contributor reads.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../README.md", "../CONTRIBUTING.md", "../SECURITY.md"}
	more, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return files
}

type snippet struct {
	file string
	line int
	lang string // "caddy" or "caddyfile" (a whole Caddyfile), or "caddy-d" (directives)
	text string
}

var fence = regexp.MustCompile("^```(caddy|caddy-d|caddyfile)\\s*$")

func snippets(t *testing.T, file string) []snippet {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []snippet
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		start := i + 1
		j := start
		for j < len(lines) && !strings.HasPrefix(lines[j], "```") {
			j++
		}
		if j == len(lines) {
			t.Fatalf("%s:%d: unterminated code block", file, i+1)
		}
		out = append(out, snippet{file: file, line: i + 1, lang: m[1], text: strings.Join(lines[start:j], "\n") + "\n"})
		i = j
	}
	return out
}

// A syntax block describes a directive with <arguments> and [optional]
// parts; it is checked for formatting only, since it is not a config.
var syntaxMarker = regexp.MustCompile(`<[a-zA-Z]|\[<`)

func TestSnippetsFormattedAndAdapt(t *testing.T) {
	adapter := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}
	count := 0
	for _, file := range markdownFiles(t) {
		for _, s := range snippets(t, file) {
			count++
			where := s.file + ":" + itoa(s.line)
			if got := string(caddyfile.Format([]byte(s.text))); got != s.text {
				t.Errorf("%s: snippet is not `caddy fmt` clean; formatted it reads:\n%s", where, got)
			}
			if secretInAdaptTimeVar.MatchString(s.text) {
				t.Errorf("%s: a secret in {$VAR} is written into the adapted config and lost on `caddy reload` without the variable: use {env.VAR}", where)
			}
			if syntaxMarker.MatchString(s.text) || strings.Contains(s.text, "…") {
				continue
			}
			cfg := s.text
			if s.lang == "caddy-d" {
				// Inside a site block, as a reader pastes it: indented once.
				cfg = ":80 {\n\t" + strings.ReplaceAll(strings.TrimSuffix(s.text, "\n"), "\n", "\n\t") + "\n}\n"
			}
			out, warnings, err := adapter.Adapt([]byte(cfg), map[string]any{"filename": where})
			if err != nil {
				t.Errorf("%s: snippet does not adapt: %v\n%s", where, err, s.text)
				continue
			}
			for _, w := range warnings {
				t.Errorf("%s: adapt warning: %s", where, w.Message)
			}
			if !json.Valid(out) {
				t.Errorf("%s: adapted config is not JSON", where)
			}
		}
	}
	if count < 10 {
		t.Fatalf("found only %d Caddyfile snippets; the fence pattern no longer matches the docs", count)
	}
}

// Names that hold secrets; {$NAME} of one of these is a mistake.
var secretInAdaptTimeVar = regexp.MustCompile(`\{\$[A-Z_]*(SECRET|TOKEN|PASSWORD|KEY|HASH)[A-Z_]*(:[^}]*)?\}`)

func TestCaddyfileExampleFormattedAndAdapts(t *testing.T) {
	data, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	if got := caddyfile.Format(data); !bytes.Equal(got, data) {
		t.Errorf("Caddyfile.example is not `caddy fmt` clean; formatted it reads:\n%s", got)
	}
	if secretInAdaptTimeVar.Match(data) {
		t.Errorf("Caddyfile.example holds a secret in {$VAR}: use {env.VAR}")
	}
	adapter := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}
	if _, warnings, err := adapter.Adapt(data, map[string]any{"filename": "Caddyfile.example"}); err != nil {
		t.Errorf("Caddyfile.example does not adapt: %v", err)
	} else {
		for _, w := range warnings {
			t.Errorf("Caddyfile.example: adapt warning: %s", w.Message)
		}
	}
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*$`)
)

// slug is the anchor GitHub gives a heading: lower case, punctuation other
// than '-' and '_' dropped, spaces made '-'.
func slug(h string) string {
	h = strings.ToLower(h)
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_':
			b.WriteRune(r)
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func anchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	inCode := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			text := strings.NewReplacer("`", "", "**", "", "*", "").Replace(m[1])
			s := slug(text)
			for i := 1; set[s]; i++ {
				s = slug(text) + "-" + itoa(i)
			}
			set[s] = true
		}
	}
	return set
}

func TestRelativeLinksResolve(t *testing.T) {
	checked := 0
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		inCode := false
		for n, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
				continue
			}
			if inCode {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				where := file + ":" + itoa(n+1)
				path, anchor, _ := strings.Cut(target, "#")
				resolved := file
				if path != "" {
					resolved = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(resolved); err != nil {
						t.Errorf("%s: link %q: %s does not exist", where, target, resolved)
						continue
					}
				}
				checked++
				if anchor != "" && strings.HasSuffix(resolved, ".md") && !anchors(t, resolved)[anchor] {
					t.Errorf("%s: link %q: no heading with anchor #%s in %s", where, target, anchor, resolved)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the link pattern no longer matches the docs")
	}
}

func itoa(n int) string {
	return strconv.Itoa(n)
}
