package fsp

import (
	"testing"

	"github.com/designbridge/caddy-designbridge/testutil/configtest"
)

// TestJSONErrorsNameField: a JSON config value the handler cannot read is
// a load error naming its full path and what to write there, in the
// config's words rather than Go's. before is the message each row's
// replaced.
func TestJSONErrorsNameField(t *testing.T) {
	for _, c := range []struct {
		name, json, want, before string // want "" means it loads
	}{
		{"bad fetch_timeout", `{"fetch_timeout":"soon"}`, `fetch_timeout: "soon" is not a duration: write a number with a unit, such as 500ms, 10s, 5m, 2h or 1d`, `fetch_timeout: time: invalid duration "soon"`},
		{"bad s3 timeout", `{"s3":{"endpoint":"127.0.0.1:1","bucket":"b-1","timeout":"1x"}}`, `s3.timeout: "1x" is not a duration`, `s3.timeout: time: unknown unit "x" in duration "1x"`},
		{"s3 timeout not whole", `{"s3":{"timeout":1.5}}`, `s3.timeout: expected a duration such as "10s", got 1.5`, `s3.timeout: json: cannot unmarshal number 1.5 into Go struct field S3Config.s3.timeout of type time.Duration`},
		{"size with a unit", `{"max_size":"20MiB"}`, `max_size: expected a whole number, got a string`, `max_size: json: cannot unmarshal string into Go struct field plain.max_size of type int64`},
		{"uploads out of range", `{"max_uploads":1e30}`, `max_uploads: expected a whole number up to 9223372036854775807, got 1e30`, `max_uploads: json: cannot unmarshal number 1e+30 into Go struct field plain.max_uploads of type int`},
		{"s3 a string", `{"s3":"s3://bucket"}`, `s3: expected an object, got a string`, `s3: json: cannot unmarshal string into Go struct field plain.s3 of type fsp.S3Config`},
		{"secret_key a number", `{"s3":{"secret_key":12345678}}`, `s3.secret_key: expected a string, got a number`, `s3.secret_key: json: cannot unmarshal number into Go struct field S3Config.s3.secret_key of type string`},
		{"shared an object", `{"shared":{"name":"Team"}}`, `shared: expected a list of objects, got an object`, `shared: json: cannot unmarshal object into Go struct field plain.shared of type []fsp.SharedFolder`},
		{"shared key a number", `{"shared":[{"name":"Team","key":"team"},{"name":"B","key":2}]}`, `shared[1].key: expected a string, got a number`, `shared.key: json: cannot unmarshal number into Go struct field SharedFolder.shared.key of type string`},
		{"allow_types a string", `{"allow_types":"image/png"}`, `allow_types: expected a list of strings, got a string`, `allow_types: json: cannot unmarshal string into Go struct field plain.allow_types of type []string`},
		{"unknown field", `{"folder":"/srv"}`, `folder: unknown field (known here: allow_anonymous, allow_private, allow_types, fetch_timeout, local, max_image_memory, max_size, max_uploads, min_upload_rate, private_ranges, public_url, root, s3, shared)`, `json: unknown field "folder"`},
		{"unknown local field", `{"local":{"path":"/srv"}}`, `local.path: unknown field (known here: folder)`, `json: unknown field "path"`},
		{"unknown s3 field", `{"s3":{"endpoint":"e","secret":"s3cr3t-value"}}`, `s3.secret: unknown field (known here: access_key, bucket, endpoint, insecure, prefix, region, secret_key, timeout)`, `json: unknown field "secret"`},
		{"unknown shared field", `{"shared":[{"name":"Team","folder":"team"}]}`, `shared[0].folder: unknown field (known here: key, name)`, `json: unknown field "folder"`},
		{"private_ranges a string", `{"private_ranges":"10.0.0.0/8"}`, `private_ranges: expected a list of strings, got a string`, `private_ranges: json: cannot unmarshal string into Go struct field plain.private_ranges of type []string`},
		{"private_ranges element a number", `{"private_ranges":["10.0.0.0/8",10]}`, `private_ranges[1]: expected a string, got a number`, `private_ranges: json: cannot unmarshal number into Go struct field plain.private_ranges of type string`},
		{"good config", `{"local":{"folder":"/srv/fsp"},"public_url":"https://e.com/f","fetch_timeout":"5s"}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			configtest.Decode(t, c.json, &Handler{}, c.want)
		})
	}
}
