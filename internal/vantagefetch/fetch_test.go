package vantagefetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The answers are the readers' own hand-built test files (shaped as the
// platforms' documentation gives them), served by a local httptest server:
// nothing here goes to the platforms, nor uses the resolver (the server's
// URL is 127.0.0.1).
func answer(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	atlasTrace = "../route/testdata/vantage/atlas-three-probes.json"
	atlasPing  = "../pingfile/testdata/atlas-ping.json"
	gpMTR      = "../route/testdata/vantage/globalping-mtr-two.json"
	gpPing     = "../pingfile/testdata/globalping-ping.json"
)

func platform(t *testing.T, name string) Platform {
	t.Helper()
	p, err := PlatformOf(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFetchGood fetches each kind of answer: the file holds the answer
// byte for byte, and the request went to the documented path.
func TestFetchGood(t *testing.T) {
	for _, tc := range []struct {
		platform, id, file, path string
	}{
		{"atlas", "1033154", atlasTrace, "/api/v2/measurements/1033154/results/?format=json"},
		{"atlas", "90000001", atlasPing, "/api/v2/measurements/90000001/results/?format=json"},
		{"globalping", "HgDbh56ZVZKqpBZh", gpMTR, "/v1/measurements/HgDbh56ZVZKqpBZh"},
		{"globalping", "PingTest0000001", gpPing, "/v1/measurements/PingTest0000001"},
	} {
		t.Run(tc.platform+"-"+tc.id, func(t *testing.T) {
			body := answer(t, tc.file)
			var asked string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked = r.URL.RequestURI()
				w.Header().Set("Content-Type", "application/json")
				w.Write(body)
			}))
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "m.json")
			res, err := Fetch(context.Background(), platform(t, tc.platform), tc.id, out, Options{BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if asked != tc.path {
				t.Errorf("asked %q, want %q", asked, tc.path)
			}
			got, _ := os.ReadFile(out)
			if string(got) != string(body) || res.Bytes != len(body) {
				t.Errorf("wrote %d bytes (said %d), want the %d of the answer", len(got), res.Bytes, len(body))
			}
		})
	}
}

// TestFetchFailsCleanly serves bad answers: each fails with a message that
// says what went wrong, and leaves no file where there was none and an
// earlier file as it was (with no temporary file beside it).
func TestFetchFailsCleanly(t *testing.T) {
	good := answer(t, atlasTrace)
	redirects := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/cut/", func(w http.ResponseWriter, r *http.Request) {
		// Content-Length promises the whole answer; the connection closes
		// after half of it.
		w.Header().Set("Content-Length", fmt.Sprint(len(good)))
		w.Write(good[:len(good)/2])
		if hj, ok := w.(http.Hijacker); ok {
			c, _, _ := hj.Hijack()
			c.Close()
		}
	})
	mux.HandleFunc("/cutjson/", func(w http.ResponseWriter, r *http.Request) {
		// A complete HTTP answer whose JSON stops half-way (a proxy's cut).
		w.Write(good[:len(good)/2])
	})
	mux.HandleFunc("/slow/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(good[:10])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/loop/", func(w http.ResponseWriter, r *http.Request) {
		redirects++
		http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound)
	})
	mux.HandleFunc("/big/", func(w http.ResponseWriter, r *http.Request) {
		// No Content-Length: the bound must hold on the bytes as they come.
		for i := 0; i < 64; i++ {
			w.Write([]byte(strings.Repeat(" ", 1024)))
			w.(http.Flusher).Flush()
		}
		w.Write(good)
	})
	mux.HandleFunc("/bigdeclared/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "900000000")
		w.Write(good)
	})
	mux.HandleFunc("/missing/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"status":404,"detail":"Not found."}}`, http.StatusNotFound)
	})
	mux.HandleFunc("/broken/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream failed", http.StatusBadGateway)
	})
	mux.HandleFunc("/html/", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html><body>maintenance</body></html>"))
	})
	mux.HandleFunc("/empty/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("[]")) })
	mux.HandleFunc("/ping-bad/", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"type": "ping", "prb_id": 7, "dst_addr": "130.94.10.1", "timestamp": 1765000000, "result": [{"rtt": 1}], "sent": 4}]`))
	})
	mux.HandleFunc("/progress/", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"id": "abc", "type": "ping", "status": "in-progress", "results": []}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, tc := range []struct {
		name, platform, prefix, want string
		o                            Options
	}{
		{"truncated", "atlas", "/cut", "the answer was cut short", Options{}},
		{"truncated JSON", "atlas", "/cutjson", "the JSON ends before its last value does", Options{}},
		{"slow", "atlas", "/slow", "no complete answer within 300ms", Options{Timeout: 300 * time.Millisecond}},
		{"redirect loop", "atlas", "/loop", "more than 5 redirects (a redirect loop?)", Options{}},
		{"oversized", "atlas", "/big", "the answer is larger than 32 KiB", Options{MaxBytes: 32 << 10}},
		{"oversized, declared", "atlas", "/bigdeclared", "the answer is larger than 16 MiB", Options{}},
		{"HTTP 404", "atlas", "/missing", `HTTP 404 Not Found: {"error":{"status":404,"detail":"Not found."}} (no such measurement, or not public?)`, Options{}},
		{"HTTP 502", "globalping", "/broken", "HTTP 502 Bad Gateway: upstream failed", Options{}},
		{"not JSON", "atlas", "/html", "the answer is not a RIPE Atlas result list: line 1: not valid JSON", Options{}},
		{"no results", "atlas", "/empty", "no results (the measurement has none yet", Options{}},
		{"unreadable ping", "atlas", "/ping-bad", "linecheck cannot read the answer:", Options{}},
		{"in progress", "globalping", "/progress", "still in progress", Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fresh := filepath.Join(dir, "new.json")
			earlier := filepath.Join(dir, "earlier.json")
			if err := os.WriteFile(earlier, []byte("earlier"), 0o644); err != nil {
				t.Fatal(err)
			}
			id := "1033154"
			if tc.platform == "globalping" {
				id = "abc"
			}
			for _, out := range []string{fresh, earlier} {
				o := tc.o
				o.BaseURL = srv.URL + tc.prefix
				start := time.Now()
				_, err := Fetch(context.Background(), platform(t, tc.platform), id, out, o)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("%s: error %v\nwant it to say %q", out, err, tc.want)
				}
				if errors.Is(err, ErrBadInput) {
					t.Errorf("a failed download is not a malformed command line: %v", err)
				}
				if tc.name == "slow" && time.Since(start) > 30*time.Second {
					t.Errorf("the 300ms timeout took %v", time.Since(start))
				}
			}
			if _, err := os.Stat(fresh); !os.IsNotExist(err) {
				t.Errorf("a file was left: %v", err)
			}
			if b, _ := os.ReadFile(earlier); string(b) != "earlier" {
				t.Errorf("the earlier file became %q", b)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("left in the folder: %v", ents)
			}
		})
	}
	// Two tries, each the first request and the 5 redirects allowed.
	if redirects != 2*(1+DefaultMaxRedirects) {
		t.Errorf("the loop was asked %d times in 2 tries, want %d", redirects, 2*(1+DefaultMaxRedirects))
	}
}

// TestFetchBadInput checks the command-line mistakes: each is ErrBadInput
// and nothing is asked of any server.
func TestFetchBadInput(t *testing.T) {
	asked := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked++ }))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "m.json")
	for _, tc := range []struct {
		platform, id, base, want string
	}{
		{"atlas", "12ab", srv.URL, `"12ab": a RIPE Atlas measurement id is a number`},
		{"atlas", "../../etc", srv.URL, `a RIPE Atlas measurement id is a number`},
		{"globalping", "a/b", srv.URL, `"a/b": a Globalping measurement id is letters and digits`},
		{"atlas", "1", "ftp://127.0.0.1", `--base-url "ftp://127.0.0.1": want http:// or https://`},
		{"atlas", "1", "http://127.0.0.1/?x=1", `want http:// or https:// with a host and no query`},
	} {
		_, err := Fetch(context.Background(), platform(t, tc.platform), tc.id, out, Options{BaseURL: tc.base})
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want a bad input that says %q", tc.platform, tc.id, err, tc.want)
		}
	}
	if _, err := PlatformOf("ripe"); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "(atlas, globalping)") {
		t.Errorf("unknown platform: %v", err)
	}
	if asked != 0 {
		t.Errorf("%d requests for bad input", asked)
	}
}

// TestFetchEnvBase checks that the platform's variable points the fetch
// elsewhere and that --base-url wins over it.
func TestFetchEnvBase(t *testing.T) {
	p := platform(t, "globalping")
	env := func(k string) string {
		if k == "LINECHECK_GLOBALPING_URL" {
			return "http://127.0.0.1:9/gp/"
		}
		return ""
	}
	u, err := p.URL("abc", Options{Getenv: env})
	if err != nil || u != "http://127.0.0.1:9/gp/v1/measurements/abc" {
		t.Errorf("from the environment: %q %v", u, err)
	}
	u, _ = p.URL("abc", Options{Getenv: env, BaseURL: "http://127.0.0.1:8"})
	if u != "http://127.0.0.1:8/v1/measurements/abc" {
		t.Errorf("--base-url: %q", u)
	}
	if u, _ = p.URL("abc", Options{}); u != "https://api.globalping.io/v1/measurements/abc" {
		t.Errorf("default: %q", u)
	}
}
