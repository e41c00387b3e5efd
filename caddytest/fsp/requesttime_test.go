package fsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequestTimeInvalidLogged: an fsp_error whose code, status or message
// comes from a placeholder can only be found wrong at request time. The
// client then gets the generic 3001, and the operator's log gets the
// reason at ERROR, from the handler's own logger.
func TestRequestTimeInvalidLogged(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	rows := []struct {
		name, route, want string
	}{
		{"code not a number", "vars c 39x1\n\t\tfsp_error {http.vars.c}", `code "39x1" is not a number`},
		{"five-digit code", "vars c 39105\n\t\tfsp_error {http.vars.c}", `code "39105" is out of range`},
		{"code outside table and range", "vars c 4001\n\t\tfsp_error {http.vars.c}", `code "4001" is neither`},
		{"code 3000", "vars c 3000\n\t\tfsp_error {http.vars.c}", `code "3000" is neither`},
		{"custom code without status", "vars c 3901\n\t\tfsp_error {http.vars.c} {\n\t\t\tmessage m\n\t\t}", "custom code 3901 has no status"},
		{"custom code with a bad status", "vars {\n\t\t\tc 3901\n\t\t\ts 302\n\t\t}\n\t\tfsp_error {http.vars.c} {\n\t\t\tstatus {http.vars.s}\n\t\t\tmessage m\n\t\t}", `status "302" is out of range`},
		{"custom code without message", "vars c 3901\n\t\tfsp_error {http.vars.c} {\n\t\t\tstatus 400\n\t\t\tmessage {http.vars.m}\n\t\t}", "custom code 3901 has no message"},
		{"status with a table code", "vars c 3200\n\t\tfsp_error {http.vars.c} {\n\t\t\tstatus 400\n\t\t\tmessage m\n\t\t}", `status "400" given for code 3200`},
		{"bad variable fsp_code", "vars fsp_code 12\n\t\tfsp_error", `variable fsp_code: code "12" is out of range`},
		{"nothing to answer", "fsp_error", "no code"},
	}
	var sites strings.Builder
	sites.WriteString(":9202 {\n")
	for i, row := range rows {
		fmt.Fprintf(&sites, "\troute /r%d {\n\t\t%s\n\t}\n", i, row.route)
	}
	sites.WriteString("}\n")
	global := strings.Replace(globalOptions(), "\n}\n", fmt.Sprintf("\n\tlog {\n\t\toutput file %s\n\t\tformat json\n\t}\n}\n", logFile), 1)
	loadCaddyfile(t, global+sites.String())
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			res := rawRequest(t, 9202, fmt.Sprintf("POST /r%d HTTP/1.1", i), nil, "")
			checkFSP(t, row.name, res, 503, fspBody{3001, "FSP Error", "The file service failed; please try again later"})
			var found []map[string]any
			for _, e := range readLog(t, logFile) {
				if e["level"] == "error" && e["logger"] == "http.handlers.fsp_error" && e["uri"] == fmt.Sprintf("/r%d", i) {
					found = append(found, e)
				}
			}
			if len(found) != 1 {
				t.Fatalf("want one error entry for /r%d, got %d", i, len(found))
			}
			if reason := fmt.Sprint(found[0]["error"]); !strings.Contains(reason, row.want) {
				t.Errorf("logged reason %q does not contain %q", reason, row.want)
			}
		})
	}
}

// readLog returns the JSON entries of a Caddy log file.
func readLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err == nil {
			entries = append(entries, e)
		}
	}
	return entries
}
