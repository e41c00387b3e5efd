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
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
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

// A fence may be indented (a code block in a list item); its lines are
// read without that indent.
var fence = regexp.MustCompile("^( *)```(caddy|caddy-d|caddyfile)\\s*$")

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
		indent := m[1]
		start := i + 1
		j := start
		for j < len(lines) && !strings.HasPrefix(lines[j], indent+"```") {
			j++
		}
		if j == len(lines) {
			t.Fatalf("%s:%d: unterminated code block", file, i+1)
		}
		text := make([]string, 0, j-start)
		for _, l := range lines[start:j] {
			text = append(text, strings.TrimPrefix(l, indent))
		}
		out = append(out, snippet{file: file, line: i + 1, lang: m[2], text: strings.Join(text, "\n") + "\n"})
		i = j
	}
	return out
}

// A syntax block describes a directive with <arguments> and [optional]
// parts; it is checked for formatting only, since it is not a config.
var syntaxMarker = regexp.MustCompile(`<[a-zA-Z]|\[<`)

func TestSnippetsFormattedAndAdapt(t *testing.T) {
	setEnvExample(t)
	adapter := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}
	count, validated := 0, 0
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
				continue
			}
			validated++
			if err := validate(t, out); err != nil {
				t.Errorf("%s: snippet does not load (caddy validate) with the variables of .env.example: %v\n%s", where, err, s.text)
			}
		}
	}
	if count < 10 || validated < 10 {
		t.Fatalf("found only %d Caddyfile snippets, %d of them whole configs; the fence pattern no longer matches the docs", count, validated)
	}
}

// setEnvExample sets the variables of .env.example, as the README's
// commands load them, so that snippets load as a reader's would.
func setEnvExample(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile("../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, "=")
		if ok && !strings.HasPrefix(name, "#") {
			t.Setenv(name, value)
		}
	}
	t.Setenv("FSP_FOLDER", t.TempDir()) // fsp makes its folder at load
}

// validate loads an adapted config as `caddy validate` does: every
// module provisioned and validated, then cleaned up, nothing started.
func validate(t *testing.T, adapted []byte) error {
	t.Helper()
	// fsp makes its folder at load: the snippets' /srv/… go to a
	// temporary folder instead.
	adapted = bytes.ReplaceAll(adapted, []byte(`"/srv/`), []byte(`"`+t.TempDir()+`/srv/`))
	var cfg caddy.Config
	if err := json.Unmarshal(adapted, &cfg); err != nil {
		return err
	}
	// Keep the admin endpoint and storage of a real installation out of it.
	cfg.Admin = &caddy.AdminConfig{Disabled: true}
	cfg.StorageRaw = json.RawMessage(`{"module":"file_system","root":` + strconv.Quote(t.TempDir()) + `}`)
	return caddy.Validate(&cfg)
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
	setEnvExample(t)
	adapter := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}
	out, warnings, err := adapter.Adapt(data, map[string]any{"filename": "Caddyfile.example"})
	if err != nil {
		t.Fatalf("Caddyfile.example does not adapt: %v", err)
	}
	for _, w := range warnings {
		t.Errorf("Caddyfile.example: adapt warning: %s", w.Message)
	}
	if err := validate(t, out); err != nil {
		t.Errorf("Caddyfile.example does not load (caddy validate) with the variables of .env.example: %v", err)
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

// TestBridgeJSONReference: docs/design_bridge.md's JSON section shows a
// Caddyfile with every subdirective of the README's syntax block and the
// JSON it adapts to; both are checked, so neither can drift from the code.
func TestBridgeJSONReference(t *testing.T) {
	data, err := os.ReadFile("design_bridge.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(data)
	start := strings.Index(section, "\n## JSON\n")
	if start < 0 {
		t.Fatal(`design_bridge.md has no "## JSON" section`)
	}
	section = section[start:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	var caddyBlock, jsonBlock string
	for _, s := range snippets(t, "design_bridge.md") {
		if strings.Contains(section, s.text) && caddyBlock == "" {
			caddyBlock = s.text
		}
	}
	if i := strings.Index(section, "```json\n"); i >= 0 {
		rest := section[i+len("```json\n"):]
		jsonBlock = rest[:strings.Index(rest, "```")]
	}
	if caddyBlock == "" || jsonBlock == "" {
		t.Fatal("the JSON section lacks its caddy-d block or its json block")
	}

	// Every subdirective of the README's syntax block is set (but the one
	// that cannot stand beside uid).
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var syntax string
	for _, s := range snippets(t, "../README.md") {
		if strings.HasPrefix(s.text, "design_bridge {") {
			syntax = s.text
			break
		}
	}
	if syntax == "" {
		t.Fatalf("README.md has no design_bridge syntax block (%d bytes read)", len(readme))
	}
	for _, line := range strings.Split(syntax, "\n")[1:] {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] == "}" || fields[0] == "insecure_caller_uid" {
			continue
		}
		if !regexp.MustCompile(`(?m)^\t` + regexp.QuoteMeta(fields[0]) + `\b`).MatchString(caddyBlock) {
			t.Errorf("design_bridge.md's JSON example does not set %s", fields[0])
		}
	}

	cfg := ":80 {\n\t" + strings.ReplaceAll(strings.TrimSuffix(caddyBlock, "\n"), "\n", "\n\t") + "\n}\n"
	out, _, err := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}.Adapt([]byte(cfg), nil)
	if err != nil {
		t.Fatalf("the JSON section's Caddyfile does not adapt: %v", err)
	}
	var adapted any
	if err := json.Unmarshal(out, &adapted); err != nil {
		t.Fatal(err)
	}
	handler := findHandler(adapted, "design_bridge")
	var documented any
	if err := json.Unmarshal([]byte(jsonBlock), &documented); err != nil {
		t.Fatalf("the documented JSON does not parse: %v", err)
	}
	if !reflect.DeepEqual(handler, documented) {
		got, _ := json.MarshalIndent(handler, "", "\t")
		t.Errorf("the documented JSON is not what the Caddyfile adapts to; adapted:\n%s", got)
	}
}

func findHandler(v any, name string) any {
	switch v := v.(type) {
	case map[string]any:
		if v["handler"] == name {
			return v
		}
		for _, child := range v {
			if h := findHandler(child, name); h != nil {
				return h
			}
		}
	case []any:
		for _, child := range v {
			if h := findHandler(child, name); h != nil {
				return h
			}
		}
	}
	return nil
}
