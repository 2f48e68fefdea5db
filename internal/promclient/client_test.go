package promclient

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProm answers /api/v1/query_range like Prometheus: it refuses more than
// limit points per series with the real error text, and evaluates each query
// name in series (label set → value at t).
type fakeProm struct {
	mu        sync.Mutex
	limit     int
	requests  []url3
	failFirst int // answer 503 to this many requests first
	status    int // when set, answer every request with this status and a bad_data body
	auth      func(*http.Request) bool
	series    map[string][]fakeSeries
}

type url3 struct{ start, end, step int64 }

type fakeSeries struct {
	labels map[string]string
	value  func(t int64) string
}

func (f *fakeProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != "/prefix/api/v1/query_range" {
		http.NotFound(w, r)
		return
	}
	if f.auth != nil && !f.auth(r) {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	start, _ := strconv.ParseInt(q.Get("start"), 10, 64)
	end, _ := strconv.ParseInt(q.Get("end"), 10, 64)
	step, _ := strconv.ParseInt(q.Get("step"), 10, 64)
	f.requests = append(f.requests, url3{start, end, step})
	if f.failFirst > 0 {
		f.failFirst--
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"status":"error","errorType":"unavailable","error":"too busy"}`)
		return
	}
	if f.status != 0 {
		w.WriteHeader(f.status)
		fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"parse error"}`)
		return
	}
	if (end-start)/step+1 > int64(f.limit) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"}`)
		return
	}
	var b strings.Builder
	b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	for i, s := range f.series[q.Get("query")] {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"metric":{`)
		j := 0
		for k, v := range s.labels {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%q:%q", k, v)
			j++
		}
		b.WriteString(`},"values":[`)
		first := true
		for t := start; t <= end; t += step {
			v := s.value(t)
			if v == "" {
				continue
			}
			if !first {
				b.WriteString(",")
			}
			first = false
			fmt.Fprintf(&b, `[%d,%q]`, t, v)
		}
		b.WriteString("]}")
	}
	b.WriteString("]}}")
	fmt.Fprint(w, b.String())
}

func TestChunksCoverEveryTimeOnceUnderTheLimit(t *testing.T) {
	t0 := time.Unix(1_000_200, 0)
	step := 300 * time.Second
	for _, tc := range []struct {
		points, max int
		want        int // chunks, by hand: ceil(points/max)
	}{{1, 11000, 1}, {8928, 11000, 1}, {11000, 11000, 1}, {11001, 11000, 2}, {8928, 1000, 9}, {10, 2, 5}, {10, 3, 4}} {
		end := t0.Add(time.Duration(tc.points-1) * step)
		ch := Chunks(t0, end, step, tc.max)
		if len(ch) != tc.want {
			t.Errorf("%d points, max %d: %d chunks, want %d", tc.points, tc.max, len(ch), tc.want)
		}
		seen := 0
		next := t0
		for _, c := range ch {
			if !c[0].Equal(next) {
				t.Fatalf("%d/%d: chunk starts %v, want %v", tc.points, tc.max, c[0], next)
			}
			n := int(c[1].Sub(c[0])/step) + 1
			if n > tc.max {
				t.Fatalf("chunk of %d points > %d", n, tc.max)
			}
			seen += n
			next = c[1].Add(step)
		}
		if seen != tc.points {
			t.Errorf("%d/%d: chunks cover %d points", tc.points, tc.max, seen)
		}
	}
}

func newFake(t *testing.T, f *fakeProm) (*httptest.Server, Config) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv, Config{URL: srv.URL + "/prefix", Backoff: time.Millisecond, Timeout: 5 * time.Second}
}

// A month at 300 s is 8928 points: with the real limit one request; with
// --max-points 1000 nine, and the merged result is the same.
func TestQueryRangeSplitsAndMergesAMonth(t *testing.T) {
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	val := func(t int64) string { return strconv.FormatInt(t%7919*1000, 10) }
	f := &fakeProm{limit: 11000, series: map[string][]fakeSeries{
		"in": {{map[string]string{"ifName": "xe-0/0/1"}, val}},
	}}
	_, cfg := newFake(t, f)
	for _, maxPts := range []int{0, 1000} {
		cfg.MaxPoints = maxPts
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		f.requests = nil
		start, end := BillingRange(from, to)
		res, err := c.QueryRange(context.Background(), "in", start, end, Step)
		if err != nil {
			t.Fatal(err)
		}
		wantReq := map[int]int{0: 1, 1000: 9}[maxPts]
		if len(f.requests) != wantReq {
			t.Errorf("max %d: %d requests, want %d", maxPts, len(f.requests), wantReq)
		}
		if len(res) != 1 || len(res[0].Points) != 8928 {
			t.Fatalf("max %d: %d series, %d samples", maxPts, len(res), len(res[0].Points))
		}
		for i, s := range res[0].Points {
			wantT := from.Unix() + 300*int64(i+1)
			if s.T != wantT || strconv.FormatInt(int64(s.V), 10) != val(wantT) {
				t.Fatalf("sample %d = %+v, want t %d v %s", i, s, wantT, val(wantT))
			}
		}
	}
	// Without splitting the server refuses: the limit in the fake is real.
	cfg.MaxPoints = 20000
	c, _ := New(cfg)
	_, err := c.QueryRange(context.Background(), "in", from, to.Add(40*24*time.Hour), Step)
	if err == nil || !strings.Contains(err.Error(), "exceeded maximum resolution") {
		t.Fatalf("err %v", err)
	}
}

func TestRetriesServerErrorsButNotBadQueries(t *testing.T) {
	one := map[string][]fakeSeries{"q": {{map[string]string{}, func(int64) string { return "1" }}}}
	t0 := time.Unix(3000, 0)
	for _, tc := range []struct {
		name         string
		failFirst    int
		status       int
		retries      int
		wantErr      string
		wantRequests int
	}{
		{"two 503 then success", 2, 0, 3, "", 3},
		{"503 beyond the retries", 5, 0, 2, "gave up after 3 attempts", 3},
		{"bad_data is not retried", 0, 400, 3, "bad_data: parse error", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeProm{limit: 11000, failFirst: tc.failFirst, status: tc.status, series: one}
			_, cfg := newFake(t, f)
			cfg.Retries = tc.retries
			c, _ := New(cfg)
			_, err := c.QueryRange(context.Background(), "q", t0, t0.Add(time.Hour), Step)
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if len(f.requests) != tc.wantRequests {
				t.Errorf("%d requests, want %d", len(f.requests), tc.wantRequests)
			}
		})
	}
}

func TestTimeoutEndsASlowRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	c, _ := New(Config{URL: srv.URL, Timeout: 50 * time.Millisecond})
	_, err := c.QueryRange(context.Background(), "q", time.Unix(0, 0), time.Unix(600, 0), Step)
	if err == nil || !strings.Contains(err.Error(), "no answer within --timeout 50ms") {
		t.Fatalf("err %v", err)
	}
}

func TestAuthHeadersComeFromFiles(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	pw := filepath.Join(dir, "pw")
	os.WriteFile(tok, []byte("s3cret-token\n"), 0o600)
	os.WriteFile(pw, []byte("hunter2\n"), 0o600)
	one := map[string][]fakeSeries{"q": {{map[string]string{}, func(int64) string { return "1" }}}}
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		auth func(*http.Request) bool
	}{
		{"bearer", func(c *Config) { c.BearerTokenFile = tok },
			func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer s3cret-token" }},
		{"basic", func(c *Config) { c.BasicAuthUser, c.BasicAuthPasswordFile = "bill", pw },
			func(r *http.Request) bool { u, p, ok := r.BasicAuth(); return ok && u == "bill" && p == "hunter2" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeProm{limit: 11000, series: one, auth: tc.auth}
			_, cfg := newFake(t, f)
			c0, _ := New(cfg)
			if _, err := c0.QueryRange(context.Background(), "q", time.Unix(0, 0), time.Unix(600, 0), Step); err == nil ||
				!strings.Contains(err.Error(), "HTTP 401") {
				t.Fatalf("without credentials: %v", err)
			}
			tc.cfg(&cfg)
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.QueryRange(context.Background(), "q", time.Unix(0, 0), time.Unix(600, 0), Step); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestTLSTrustsTheGivenCAOrNothingWithInsecure(t *testing.T) {
	f := &fakeProm{limit: 11000, series: map[string][]fakeSeries{"q": {{map[string]string{}, func(int64) string { return "1" }}}}}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
	run := func(cfg Config) error {
		cfg.URL = srv.URL + "/prefix"
		c, err := New(cfg)
		if err != nil {
			return err
		}
		_, err = c.QueryRange(context.Background(), "q", time.Unix(0, 0), time.Unix(600, 0), Step)
		return err
	}
	if err := run(Config{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("system roots: %v, want a certificate error", err)
	}
	if err := run(Config{TLSCA: ca}); err != nil {
		t.Errorf("--tls-ca: %v", err)
	}
	if err := run(Config{TLSInsecure: true}); err != nil {
		t.Errorf("--tls-insecure: %v", err)
	}
}

// A server that streams one series without end is stopped at --max-samples
// while it is decoded (it was checked only once a whole series had
// arrived: 3.5–4.2 GB against such a server).
func TestMaxSamplesStopsAnEndlessSeriesWhileDecoding(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"ifName":"x"},"values":[`)
		for i := int64(0); r.Context().Err() == nil; i++ {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			if _, err := fmt.Fprintf(w, `[%d,"1"]`, 300+i*300); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	c, _ := New(Config{URL: srv.URL, Timeout: 20 * time.Second, MaxSamples: 1000})
	done := make(chan error, 1)
	go func() {
		_, err := c.QueryRange(context.Background(), "q", time.Unix(0, 0), time.Unix(600, 0), Step)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "more than --max-samples 1000 points") {
			t.Fatalf("err %v, want the --max-samples limit", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the endless series was read on past --max-samples")
	}
}

// A body that stalls mid-answer past --timeout is a network error and is
// retried (it was labelled bad_data and never retried).
func TestTimeoutMidBodyIsRetried(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"ifName":"x"},"values":[[300,"1"],`)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"ifName":"x"},"values":[[300,"1"],[600,"2"]]}]}}`)
	}))
	t.Cleanup(srv.Close)
	c, _ := New(Config{URL: srv.URL, Timeout: 200 * time.Millisecond, Retries: 2, Backoff: time.Millisecond})
	res, err := c.QueryRange(context.Background(), "q", time.Unix(0, 0), time.Unix(600, 0), Step)
	if err != nil {
		t.Fatalf("err %v, want the retry to succeed", err)
	}
	if calls != 2 || len(res) != 1 || len(res[0].Points) != 2 {
		t.Errorf("%d calls, result %+v; want 2 calls and both points", calls, res)
	}
	// Without retries the error says the answer stopped, not bad_data.
	calls = 0
	c, _ = New(Config{URL: srv.URL, Timeout: 200 * time.Millisecond})
	_, err = c.QueryRange(context.Background(), "q", time.Unix(0, 0), time.Unix(600, 0), Step)
	if err == nil || strings.Contains(err.Error(), "bad_data") || !strings.Contains(err.Error(), "--timeout 200ms") {
		t.Errorf("err %v, want a timeout naming --timeout, not bad_data", err)
	}
}
