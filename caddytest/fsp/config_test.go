package fsp

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// s3Block is an s3 storage block for endpoint and bucket with the keys
// given.
func s3Block(endpoint, bucket, access, secret string) string {
	return fmt.Sprintf("s3 {\n\t\t\tendpoint %s\n\t\t\tbucket %s\n\t\t\taccess_key %s\n\t\t\tsecret_key %s\n\t\t\tinsecure\n\t\t}", endpoint, bucket, access, secret)
}

// TestProviderS3LoadChecks: at load, the bucket is looked at with the
// configured keys; a missing bucket and refused keys are load errors that
// name the bucket and the endpoint. A bucket name S3 refuses is a load
// error naming bucket and the rule, whether the server is asked or not.
func TestProviderS3LoadChecks(t *testing.T) {
	b := s3Backend(t)
	endpoint := fmt.Sprintf("127.0.0.1:%d", versityPort)
	for _, c := range []struct{ name, storage, want string }{
		{"missing bucket", s3Block(endpoint, "no-such-bucket", s3Access, s3Secret), `bucket "no-such-bucket" does not exist at endpoint ` + endpoint},
		{"wrong secret", s3Block(endpoint, b.bucket, s3Access, "wrong-secret"), "endpoint " + endpoint + ` refused the keys for bucket "` + b.bucket + `"`},
		{"unknown key", s3Block(endpoint, b.bucket, "nobody", "wrong-secret"), "endpoint " + endpoint + ` refused the keys for bucket "` + b.bucket + `"`},
		{"plain HTTP server without insecure", strings.Replace(s3Block(endpoint, b.bucket, s3Access, s3Secret), "\n\t\t\tinsecure", "", 1), "fsp: s3: endpoint " + endpoint + " answers plain HTTP: add insecure to the s3 block"},
		{"bucket name too short", s3Block(endpoint, "b", s3Access, s3Secret), `fsp: s3.bucket: bucket name cannot be shorter than 3 characters; a bucket name is 3 to 63 lower-case letters, digits, dots and hyphens`},
		{"bucket name with capitals", s3Block(endpoint, "Bad_Bucket", s3Access, s3Secret), `fsp: s3.bucket: bucket name contains invalid characters`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := loadError(t, fmt.Sprintf(":%d {\n\tfsp {\n\t\t%s\n\t\tpublic_url http://x\n\t\tallow_anonymous\n\t}\n}\n", privatePort, c.storage))
			if !strings.Contains(got, c.want) {
				t.Errorf("load error %s does not say %s", got, c.want)
			}
			if strings.Contains(got, "wrong-secret") {
				t.Errorf("load error shows the secret: %s", got)
			}
		})
	}
}

// TestProviderLogsSettings: a store that cannot be reached at load is a
// WARN naming endpoint and bucket (the server still starts), and each 3100
// logs them with the storage's error; an fsp with no authentication in
// front logs once, at load, why every request will be 3650.
func TestProviderLogsSettings(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	hash, _ := bcrypt.GenerateFromPassword([]byte(fspPassword), bcrypt.MinCost)
	dead := fmt.Sprintf("127.0.0.1:%d", deadPort)
	sites := fmt.Sprintf(`:%[1]d {
	handle_path /fsp/* {
		fsp {
			%[2]s
			public_url http://localhost/files
			allow_anonymous
		}
	}
}
:%[3]d {
	handle_path /fsp/* {
		fsp {
			local %[4]s
			public_url http://localhost/files
		}
	}
}
:%[5]d {
	handle_path /fsp/* {
		basic_auth {
			%[6]s %[7]s
		}
		fsp {
			local %[4]s
			public_url http://localhost/files
		}
	}
}
`, brokenPort, s3Block(dead, "unreached-bucket", "k", "s"), privatePort, t.TempDir(), providerPort, fspUser, hash)
	global := strings.Replace(globalOptions(), "\n}\n", fmt.Sprintf("\n\tlog {\n\t\toutput file %s\n\t\tformat json\n\t}\n}\n", logFile), 1)
	loadCaddyfile(t, global+sites)
	res := send(t, brokenPort, call{method: "GET", target: "/", auth: "-"})
	if decodeFSP(res.Body).Code != 3100 {
		t.Errorf("unreachable store: %d %s, want 3100", res.Status, res.Body)
	}
	res = send(t, privatePort, call{method: "GET", target: "/", auth: "-"})
	if decodeFSP(res.Body).Code != 3650 {
		t.Errorf("no authentication: %d %s, want 3650", res.Status, res.Body)
	}
	res = send(t, providerPort, call{method: "GET", target: "/"})
	if res.Status != 200 {
		t.Errorf("with basic_auth: %d %s", res.Status, res.Body)
	}

	var unreachable, failures, noAuth int
	for _, e := range readLog(t, logFile) {
		if e["logger"] != "http.handlers.fsp" {
			continue
		}
		msg := fmt.Sprint(e["msg"])
		switch {
		case e["level"] == "warn" && strings.Contains(msg, "cannot be reached"):
			unreachable++
			if e["endpoint"] != dead || e["bucket"] != "unreached-bucket" || e["error"] == nil {
				t.Errorf("load warning without endpoint, bucket and error: %v", e)
			}
		case e["level"] == "error" && msg == "storage failure":
			failures++
			if e["endpoint"] != dead || e["bucket"] != "unreached-bucket" || fmt.Sprint(e["error"]) == "" {
				t.Errorf("3100 logged without endpoint, bucket and error: %v", e)
			}
		case e["level"] == "warn" && strings.Contains(msg, "no authentication handler"):
			noAuth++
			if !strings.Contains(msg, "basic_auth") || !strings.Contains(msg, "allow_anonymous") {
				t.Errorf("the warning does not say what to add: %s", msg)
			}
		}
	}
	if unreachable != 1 || failures != 1 || noAuth != 1 {
		t.Errorf("log: %d unreachable-store warnings, %d storage failures, %d no-authentication warnings; want 1 each", unreachable, failures, noAuth)
	}
}
