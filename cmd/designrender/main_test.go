package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"page":{"rows":[{"columns":[{"grid-columns":12,"modules":[
		{"type":"mailup-bee-newsletter-modules-paragraph","descriptor":{"paragraph":{"html":"<p>Hello {{name}}</p>"}}},
		{"type":"mailup-bee-newsletter-modules-mystery","descriptor":{}}]}]}]}}`)
	notDesign := write("nodesign.json", `{"page":{"rows":{}}}`)
	notJSON := write("nojson.json", `{`)
	// 2,000 rows of 12 empty columns: 100 KB of JSON, 9 MB of HTML.
	big := write("big.json", `{"page":{"rows":[`+strings.TrimSuffix(strings.Repeat(`{"columns":[`+strings.TrimSuffix(strings.Repeat(`{},`, 12), ",")+`]},`, 2000), ",")+`]}}`)
	out := filepath.Join(dir, "out.html")

	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string
		stderr     string
		fileOutput string
	}{
		{"html to stdout with warning", []string{good}, 0, "Hello {{name}}", `warning: unknown module type "mailup-bee-newsletter-modules-mystery"`, ""},
		{"text", []string{"-text", good}, 0, "Hello {{name}}", "warning:", ""},
		{"to file", []string{"-o", out, good}, 0, "", "warning:", "<!DOCTYPE html>"},
		{"not a design", []string{notDesign}, 1, "", "not a design: page.rows: must be an array", ""},
		{"not JSON", []string{notJSON}, 1, "", "not JSON", ""},
		{"missing file", []string{filepath.Join(dir, "nope.json")}, 2, "", "no such file", ""},
		{"usage", nil, 2, "", "usage:", ""},
		{"over the default max-output", []string{big}, 1, "", "render: output over the limit: more than 8388608 bytes (see -max-output)", ""},
		{"over max-output", []string{"-max-output", "1KiB", good}, 1, "", "more than 1024 bytes", ""},
		{"text over max-output", []string{"-text", "-max-output", "5", good}, 1, "", "more than 5 bytes", ""},
		{"under a raised max-output", []string{"-max-output", "16MiB", big}, 0, "<!DOCTYPE html>", "", ""},
		{"bad max-output", []string{"-max-output", "lots", good}, 2, "", `"lots": want a size`, ""},
		{"zero max-output", []string{"-max-output", "0", good}, 2, "", `"0": want a size`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout lacks %q", tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.stderr)
			}
			if tt.fileOutput != "" {
				b, err := os.ReadFile(out)
				if err != nil || !bytes.Contains(b, []byte(tt.fileOutput)) {
					t.Errorf("output file: %v", err)
				}
			}
		})
	}
}
