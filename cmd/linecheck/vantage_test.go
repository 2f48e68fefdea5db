package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVantageFetchCommand runs `vantage fetch` in-process against a local
// server (never the platforms): a good Globalping ping measurement is
// written and reads back through trace's and compare's readers' registry;
// a malformed id and an HTTP error exit 2 with the reason and leave no file.
func TestVantageFetchCommand(t *testing.T) {
	body, err := os.ReadFile("../../internal/pingfile/testdata/globalping-ping.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/measurements/PingTest0000001" {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "gp.json")
	runIt := func(args ...string) (int, string, string) {
		var o, e bytes.Buffer
		code := runIO(context.Background(), args, &o, &e)
		return code, o.String(), e.String()
	}
	code, stdout, stderr := runIt("vantage", "fetch", "globalping", "PingTest0000001", "-o", out, "--base-url", srv.URL)
	if code != 0 || !strings.Contains(stdout, "wrote "+out) {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, body) {
		t.Error("the file is not the answer")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"vantage", "fetch", "atlas", "x1"}, `"x1": a RIPE Atlas measurement id is a number`},
		{[]string{"vantage", "fetch", "ripe", "1"}, `"ripe" is not a platform linecheck fetches from (atlas, globalping)`},
		{[]string{"vantage", "fetch", "atlas"}, "vantage fetch takes a platform (atlas, globalping) and a measurement id"},
		{[]string{"vantage", "fetch", "globalping", "Gone1"}, "HTTP 404 Not Found"},
		{[]string{"vantage", "fetch", "atlas", "5", "--timeout", "0"}, "--timeout must be positive"},
	} {
		o := filepath.Join(dir, "bad.json")
		args := append(tc.args, "-o", o, "--base-url", srv.URL)
		code, _, stderr := runIt(args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
		if _, err := os.Stat(o); !os.IsNotExist(err) {
			t.Errorf("%v left %s", tc.args, o)
		}
	}
}
